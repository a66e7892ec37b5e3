// cluster.gpu (a catalog id or alias) and cluster.gpu_spec (datasheet numbers). With both, the
// gpu_spec fields override the catalog entry, e.g. a power-capped part with a lower peak.
#include <fmt/format.h>

#include <optional>
#include <string>

#include "core/strings.hpp"
#include "hardware/gpu_catalog.hpp"
#include "hardware/power_limit.hpp"
#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

const GpuSpec& catalog_gpu(const Section& section, const std::string& key, const std::string& name,
                           const std::string& alternative) {
  const GpuCatalog& catalog = GpuCatalog::builtin();
  if (const GpuSpec* gpu = catalog.find(name)) return *gpu;
  const std::vector<std::string> known = catalog.names();
  std::string message = "unknown GPU '" + name + "'";
  if (const std::string guess = closest_match(name, known); !guess.empty()) message += "; did you mean " + guess + "?";
  section.fail(key, message + " (known GPUs: " + (known.empty() ? "none found" : join(known)) + alternative + ")");
}

namespace {

// Overrides from gpu_spec; `standalone` = no catalog entry underneath, so the essentials are required.
void apply_gpu_spec(const Section& spec, bool standalone, GpuSpec& gpu) {
  const Section peak = spec.child("peak_tflops");
  if (standalone) {
    if (!peak.present())
      spec.missing("peak_tflops", "dense TFLOP/s per precision, e.g. {bf16: 989, fp8: 1979, fp32: 67}");
    if (!spec.has("hbm_GBps")) spec.missing("hbm_GBps");
    if (!spec.has("memory_gib")) spec.missing("memory_gib");
  }
  const struct {
    const char* key;
    std::optional<double> GpuSpec::*field;
  } precisions[] = {{"bf16", &GpuSpec::bf16_tflops}, {"fp8", &GpuSpec::fp8_tflops},   {"fp4", &GpuSpec::fp4_tflops},
                    {"fp32", &GpuSpec::fp32_tflops}, {"fp16", &GpuSpec::fp16_tflops}, {"tf32", &GpuSpec::tf32_tflops}};
  bool any_peak = false;
  for (const auto& p : precisions)
    if (auto v = peak.number(p.key, Bound::Positive)) {
      require_at_least(peak, p.key, *v, kMinPeakTflops, "TFLOP/s",
                       "below an embedded GPU; datacenter GPUs have 10-5000");
      gpu.*(p.field) = *v;
      any_peak = true;
    }
  if (standalone && !any_peak)
    spec.fail("peak_tflops", "give at least one precision's dense peak: bf16, fp8, fp32, fp16 or tf32");

  spec.read("name", gpu.name);
  spec.read("vendor", gpu.vendor);
  spec.read("architecture", gpu.architecture);
  spec.read("sm_version", gpu.sm_version, Bound::NonNegative);
  spec.read("sm_count", gpu.sm_count, Bound::NonNegative);
  spec.read("hbm_GBps", gpu.hbm_GBps, Bound::Positive);
  if (spec.has("hbm_GBps"))
    require_at_least(spec, "hbm_GBps", gpu.hbm_GBps, kMinHbmGBps, "GB/s",
                     "below any GPU memory; HBM gives 1500-8000 GB/s");
  spec.read("memory_gib", gpu.memory_gib, Bound::Positive);
  spec.read("scale_up_GBps", gpu.scale_up_GBps, Bound::Positive);
  if (spec.has("scale_up_GBps"))
    require_at_least(spec, "scale_up_GBps", gpu.scale_up_GBps, kMinLinkGBps, "GB/s",
                     "one PCIe Gen3 lane; NVLink and Infinity Fabric give 20-900 GB/s per GPU");
}

// cluster.gpu_power_limit_w: the limit `nvidia-smi -pl` sets; the GPU then holds a lower tensor-core clock.
void read_power_limit(const Section& cluster, GpuSpec& gpu) {
  const std::string key = "gpu_power_limit_w";
  const std::optional<double> limit = cluster.number(key, Bound::Positive);
  if (!limit) return;
  if (!(gpu.power_w > 0) || !(gpu.sustained_clock_mhz > 0))
    cluster.fail(key, fmt::format("GPU {} has no rated power and sustained clock in the catalog (data/gpus.yaml "
                                  "power_w, sustained_clock_mhz), which a power limit is read against",
                                  gpu.name));
  if (*limit > gpu.power_w)
    cluster.fail(key, fmt::format("{:g} W is above {}'s rated power of {:g} W; a limit can only lower it", *limit,
                                  gpu.name, gpu.power_w));
  const double lowest = kMinPowerLimitShare * gpu.power_w;
  if (*limit < lowest)
    cluster.fail(key, fmt::format("{:g} W is below {:g} W, {:.0f}% of {}'s rated {:g} W, the lowest limit the clock "
                                  "model covers (docs/compute-model.md)",
                                  *limit, lowest, 100 * kMinPowerLimitShare, gpu.name, gpu.power_w));
  gpu.power_limit_w = *limit;
  gpu.power_limited_clock_mhz = power_limited_clock_mhz(gpu, *limit);
}

}  // namespace

GpuSpec read_gpu(const Section& cluster) {
  const Section spec = cluster.child("gpu_spec");
  GpuSpec gpu;
  if (auto name = cluster.string("gpu")) {
    gpu = catalog_gpu(cluster, "gpu", *name, "; or describe it with cluster.gpu_spec");
  } else if (spec.present()) {
    gpu.name = "custom";
  } else {
    cluster.missing("gpu", "a GPU from the catalog, e.g. H100-SXM, or cluster.gpu_spec with its datasheet numbers");
  }
  if (spec.present()) apply_gpu_spec(spec, !cluster.has("gpu"), gpu);
  read_power_limit(cluster, gpu);
  return gpu;
}

}  // namespace trainsim::scenario_detail
