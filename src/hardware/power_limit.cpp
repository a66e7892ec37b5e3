#include "hardware/power_limit.hpp"

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace trainsim {

double power_limited_clock_mhz(const GpuSpec& gpu, double limit_w) {
  TRAINSIM_CHECK(gpu.power_w > 0 && gpu.sustained_clock_mhz > 0,
                 "power_limited_clock_mhz: GPU " + gpu.name + " has no rated power or sustained clock");
  const double share = std::min(1.0, limit_w / gpu.power_w);
  TRAINSIM_CHECK(share >= kMinPowerLimitShare, "power_limited_clock_mhz: limit below the model's range");
  const double dynamic = (share - kPowerLimitStaticShare) / (1.0 - kPowerLimitStaticShare);
  return gpu.sustained_clock_mhz * std::cbrt(dynamic);
}

}  // namespace trainsim
