// cluster.gpu (a catalog id or alias) and cluster.gpu_spec (datasheet numbers). With both, the
// gpu_spec fields override the catalog entry, e.g. a power-capped part with a lower peak.
#include "core/strings.hpp"
#include "hardware/gpu_catalog.hpp"
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
  } precisions[] = {{"bf16", &GpuSpec::bf16_tflops},
                    {"fp8", &GpuSpec::fp8_tflops},
                    {"fp32", &GpuSpec::fp32_tflops},
                    {"fp16", &GpuSpec::fp16_tflops},
                    {"tf32", &GpuSpec::tf32_tflops}};
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
  return gpu;
}

}  // namespace trainsim::scenario_detail
