#pragma once
// Serialisation time of bytes on a link or at a flow's rate, in whole picoseconds: shared by the flow and
// packet networks so that both round the same way.
#include <cmath>

#include "core/time.hpp"

namespace trainsim {

// Quotients this close (relative) to a whole picosecond are float noise around an exact answer (e.g. 1 GB at
// 5 GB/s): take the whole picosecond instead of rounding up past it. Far above the ~1e-16 error of one double
// operation, far below anything a flow could send in the difference.
inline constexpr double kWholePicosecondTolerance = 1e-14;

// Picoseconds to send `bytes` at `rate_Bps`: the first whole picosecond at which all are sent; 0 for no bytes or
// an infinite rate; kNever when the rate is 0 or the time would outlast SimTime.
inline SimTime transmit_time(double bytes, double rate_Bps) {
  if (!(bytes > 0)) return 0;
  if (!(rate_Bps > 0)) return kNever;
  if (std::isinf(rate_Bps)) return 0;
  const double ps = bytes * static_cast<double>(kPicosPerSecond) / rate_Bps;
  if (!(ps < 9.0e18)) return kNever;
  const double whole = std::nearbyint(ps);
  if (std::abs(ps - whole) <= ps * kWholePicosecondTolerance) return static_cast<SimTime>(whole);
  return static_cast<SimTime>(std::ceil(ps));
}

}  // namespace trainsim
