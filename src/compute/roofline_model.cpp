#include "compute/roofline_model.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
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

  double interference_slowdown(const KernelDesc& k, const CommLoad& load) const override {
    if (load.idle()) return 1.0;
    const double alone = roofline_breakdown(gpu_, arch_, k, attention_).total_s();
    if (!(alone > 0)) return 1.0;
    const double beside = roofline_breakdown(gpu_left_by(gpu_, load), arch_, k, attention_).total_s();
    return std::max(1.0, beside / alone);
  }

  std::string describe() const override {
    std::string fp8 = gpu_.supports(Precision::FP8)
                          ? fmt::format(", fp8 {:.2f}", gemm_plateau(arch_, Precision::FP8))
                          : std::string();
    const double clock = tensor_clock_factor(gpu_, arch_);
    const std::string clocks =
        clock < 1.0 ? fmt::format("; tensor clock {:.0f} MHz sustained of {:.0f} (x{:.3f})", gpu_.sustained_clock_mhz,
                                  gpu_.peak_clock_mhz, clock)
                    : std::string("; tensor clock as calibrated");
    return fmt::format(
        "roofline model for {} ({} curves): GEMM plateau bf16 {:.2f}{} of dense peak{}; attention kernel {}; HBM {:.0f} "
        "GB/s x {:.2f}; fixed cost {:.0f} us per tensor-core kernel, {:.0f} us per memory-bound kernel",
        gpu_.name.empty() ? "(unnamed GPU)" : gpu_.name, to_string(arch_), gemm_plateau(arch_, Precision::BF16), fp8,
        clocks, to_string(attention_),
        gpu_.hbm_GBps, memory_bandwidth_fraction(arch_, KernelKind::Elementwise), rl::kTensorKernelOverheadS * 1e6,
        rl::kMemoryKernelOverheadS * 1e6);
  }

 private:
  GpuSpec gpu_;
  ArchFamily arch_;
  AttentionKernel attention_;
};

}  // namespace

double tensor_clock_factor(const GpuSpec& gpu, ArchFamily arch) {
  // AMD's plateaus were measured at the clock the GPU held under load (MI300X median 1207 MHz in BF16
  // GEMM; roofline_constants.hpp), so the sustained clock is in them already.
  if (arch == ArchFamily::Cdna2 || arch == ArchFamily::Cdna3) return 1.0;
  if (!(gpu.peak_clock_mhz > 0) || !(gpu.sustained_clock_mhz > 0)) return 1.0;
  return std::min(1.0, gpu.sustained_clock_mhz / gpu.peak_clock_mhz);
}

GpuSpec gpu_left_by(GpuSpec gpu, const CommLoad& load) {
  if (gpu.sm_count > 0 && load.ctas > 0) {
    const int left = std::max(1, gpu.sm_count - load.ctas);
    const double share = static_cast<double>(left) / static_cast<double>(gpu.sm_count);
    for (std::optional<double>* peak :
         {&gpu.fp32_tflops, &gpu.tf32_tflops, &gpu.bf16_tflops, &gpu.fp16_tflops, &gpu.fp8_tflops}) {
      if (*peak) **peak *= share;
    }
    gpu.sm_count = left;
  }
  if (load.hbm_GBps > 0)
    gpu.hbm_GBps = std::max(gpu.hbm_GBps * rl::kMinHbmShareLeft, gpu.hbm_GBps - load.hbm_GBps);
  return gpu;
}

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
      b.clock_factor = tensor_clock_factor(gpu, arch);
      b.compute_s = k.flops / (peak * b.efficiency * b.clock_factor);
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
      b.clock_factor = tensor_clock_factor(gpu, arch);
      b.compute_s = k.flops / (peak * b.efficiency * b.clock_factor);
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
