#include "compute/roofline_model.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "compute/attention_efficiency.hpp"
#include "compute/gemm_efficiency.hpp"
#include "compute/memory_efficiency.hpp"
#include "compute/roofline_constants.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace trainsim {

namespace rl = roofline;

namespace {

bool is_gemm(KernelKind k) { return k == KernelKind::Gemm || k == KernelKind::AttnScoreGemm; }
bool is_flash(KernelKind k) { return k == KernelKind::FlashAttnFwd || k == KernelKind::FlashAttnBwd; }

void check_desc(const KernelDesc& k) {
  const auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(k.flops) || bad(k.bytes)) {
    throw Error(fmt::format("{} kernel: flops ({}) and bytes ({}) must be finite and non-negative", to_string(k.kind),
                            k.flops, k.bytes));
  }
  if ((is_gemm(k.kind) || is_flash(k.kind)) && k.flops > 0 && (k.m <= 0 || k.n <= 0 || k.k <= 0 || k.batch <= 0)) {
    throw Error(fmt::format("{} kernel: m, n, k and batch must be positive (got m={} n={} k={} batch={})",
                            to_string(k.kind), k.m, k.n, k.k, k.batch));
  }
}

double hbm_Bps(const GpuSpec& gpu) { return GBps_to_bytes_per_s(gpu.hbm_GBps); }

// bytes / (hbm * fraction * ramp(bytes)).
double memory_seconds(const GpuSpec& gpu, ArchFamily arch, KernelKind kind, double bytes) {
  if (!(bytes > 0)) return 0.0;
  const double bw = hbm_Bps(gpu) * memory_bandwidth_fraction(arch, kind);
  return bytes / (bw * memory_size_ramp(bytes, bw));
}

class RooflineModel final : public ComputeModel {
 public:
  RooflineModel(GpuSpec gpu, AttentionKernel attention)
      : gpu_(std::move(gpu)), arch_(classify_arch(gpu_)), attention_(attention) {}

  KernelTiming time(const KernelDesc& k) const override {
    const RooflineBreakdown b = roofline_breakdown(gpu_, arch_, k, attention_);
    KernelTiming t;
    t.time = from_seconds(b.total_s());
    // From the rounded time, so that achieved_tflops * time == flops exactly as reported.
    t.achieved_tflops = t.time > 0 ? k.flops / to_seconds(t.time) / 1e12 : 0.0;
    t.compute_bound = b.compute_s > 0 && b.compute_s >= b.memory_s;
    t.source = "roofline";
    return t;
  }

  std::string describe() const override {
    std::string fp8 = gpu_.supports(Precision::FP8)
                          ? fmt::format(", fp8 {:.2f}", gemm_plateau(arch_, Precision::FP8))
                          : std::string();
    return fmt::format(
        "roofline model for {} ({} curves): GEMM plateau bf16 {:.2f}{} of dense peak; attention kernel {}; HBM {:.0f} "
        "GB/s x {:.2f}; fixed cost {:.0f} us per tensor-core kernel, {:.0f} us per memory-bound kernel",
        gpu_.name.empty() ? "(unnamed GPU)" : gpu_.name, to_string(arch_), gemm_plateau(arch_, Precision::BF16), fp8,
        to_string(attention_),
        gpu_.hbm_GBps, memory_bandwidth_fraction(arch_, KernelKind::Elementwise), rl::kTensorKernelOverheadS * 1e6,
        rl::kMemoryKernelOverheadS * 1e6);
  }

 private:
  GpuSpec gpu_;
  ArchFamily arch_;
  AttentionKernel attention_;
};

}  // namespace

RooflineBreakdown roofline_breakdown(const GpuSpec& gpu, ArchFamily arch, const KernelDesc& k,
                                     AttentionKernel attention) {
  check_desc(k);
  RooflineBreakdown b;
  if (k.flops == 0 && k.bytes == 0) return b;  // empty kernel: nothing is launched
  b.memory_s = memory_seconds(gpu, arch, k.kind, k.bytes);

  if (is_gemm(k.kind)) {
    b.overhead_s = rl::kTensorKernelOverheadS;
    if (k.flops > 0) {
      const double peak = gpu.peak_tflops(k.dtype) * 1e12;
      b.efficiency = gemm_efficiency(arch, gpu.sm_count, k.dtype, k.m, k.n, k.k, k.batch);
      b.compute_s = k.flops / (peak * b.efficiency);
    }
    return b;
  }
  if (is_flash(k.kind)) {
    b.overhead_s = rl::kTensorKernelOverheadS;
    if (k.flops > 0) {
      const double peak = gpu.peak_tflops(k.dtype) * 1e12;
      const double seq = std::sqrt(static_cast<double>(k.m) * static_cast<double>(k.n));
      b.efficiency =
          flash_attention_fraction(arch, k.dtype, k.kind == KernelKind::FlashAttnBwd, seq, k.k, k.causal, attention);
      b.compute_s = k.flops / (peak * b.efficiency);
    }
    return b;
  }
  // Memory-bound kinds: their arithmetic runs on the FP32 vector units; priced at that peak so a
  // mislabelled compute-heavy kernel is not silently free (it never binds for real norms/pointwise).
  b.overhead_s = rl::kMemoryKernelOverheadS;
  if (k.flops > 0 && gpu.supports(Precision::FP32)) b.compute_s = k.flops / (gpu.peak_tflops(Precision::FP32) * 1e12);
  return b;
}

std::unique_ptr<ComputeModel> make_roofline_model(const GpuSpec& gpu, AttentionKernel attention) {
  if (!(gpu.hbm_GBps > 0)) {
    throw Error(fmt::format("GPU {}: the roofline compute model needs a positive hbm_GBps (got {})",
                            gpu.name.empty() ? "(unnamed)" : gpu.name, gpu.hbm_GBps));
  }
  if (gpu.sm_count < 0) {
    throw Error(fmt::format("GPU {}: sm_count must be >= 0 (0 = unknown), got {}",
                            gpu.name.empty() ? "(unnamed)" : gpu.name, gpu.sm_count));
  }
  if (auto problem = attention_kernel_problem(classify_arch(gpu), attention))
    throw Error(fmt::format("GPU {}: {}", gpu.name.empty() ? "(unnamed)" : gpu.name, *problem));
  return std::make_unique<RooflineModel>(gpu, attention);
}

}  // namespace trainsim
