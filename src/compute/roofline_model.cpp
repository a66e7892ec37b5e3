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

void check_desc(const KernelDesc& k) {
  const auto bad = [](double v) { return !std::isfinite(v) || v < 0; };
  if (bad(k.flops) || bad(k.bytes)) {
    throw Error(fmt::format("{} kernel: flops ({}) and bytes ({}) must be finite and non-negative", to_string(k.kind),
                            k.flops, k.bytes));
  }
  const bool shaped = is_gemm(k.kind) || is_flash_attention(k.kind);
  if (shaped && k.flops > 0 && (k.m <= 0 || k.n <= 0 || k.k <= 0 || k.batch <= 0)) {
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
  RooflineModel(GpuSpec gpu, AttentionKernel attention, std::int64_t job_gpus)
      : gpu_(std::move(gpu)),
        arch_(classify_arch(gpu_)),
        attention_(attention),
        job_gpus_(job_gpus),
        pace_(slowest_gpu_factor(job_gpus)) {}

  KernelTiming time(const KernelDesc& k) const override {
    if (k.kind == KernelKind::FixedDuration) return fixed_duration_timing(k);
    const RooflineBreakdown b = priced(k, CommLoad{});
    KernelTiming t;
    t.time = from_seconds(b.total_s());
    // From the rounded time, so that achieved_tflops * time == flops exactly as reported.
    t.achieved_tflops = t.time > 0 ? k.flops / to_seconds(t.time) / 1e12 : 0.0;
    t.compute_bound = b.compute_s > 0 && b.compute_s >= b.memory_s;
    t.source = "roofline";
    t.efficiency = b.efficiency;
    t.clock_factor = b.clock_factor;
    return t;
  }

  double interference_slowdown(const KernelDesc& k, const CommLoad& load) const override {
    if (load.idle() || k.kind == KernelKind::FixedDuration) return 1.0;
    const double alone = priced(k, CommLoad{}).total_s();
    if (!(alone > 0)) return 1.0;
    return std::max(1.0, priced(k, load).total_s() / alone);
  }

  std::string describe() const override {
    std::string low_precision = gpu_.supports(Precision::FP8)
                                    ? fmt::format(", fp8 {:.2f}", gemm_plateau(gpu_, arch_, Precision::FP8))
                                    : std::string();
    if (gpu_.supports(Precision::FP4) && arch_ == ArchFamily::Blackwell)
      low_precision += fmt::format(", fp4 {:.2f}", gemm_plateau(gpu_, arch_, Precision::FP4));
    const double locked = tensor_clock_factor(gpu_, arch_, CalibrationClock::LockedAtPeakBasis);
    const double short_run = tensor_clock_factor(gpu_, arch_, CalibrationClock::ShortRun);
    const std::string clocks =
        fmt::format(
            "; tensor clock: {} (x{:.3f} on tables locked at the peak-basis clock), x{:.3f} on short-run tables{}",
            gpu_.power_limited_clock_mhz > 0
                ? fmt::format("{:.0f} MHz at the {:g} W power limit ({:.0f} sustained at the rated {:g} W) of {:.0f}",
                              gpu_.power_limited_clock_mhz, gpu_.power_limit_w, gpu_.sustained_clock_mhz, gpu_.power_w,
                              gpu_.peak_clock_mhz)
            : locked < 1.0
                ? fmt::format("{:.0f} MHz sustained of {:.0f}", gpu_.sustained_clock_mhz, gpu_.peak_clock_mhz)
                : std::string("as calibrated"),
            locked, short_run,
            gpu_.boost_clock_mhz > 0 ? fmt::format(" (run at the {:.0f} MHz boost)", gpu_.boost_clock_mhz)
                                     : std::string(" (long-run share)")) +
        fmt::format("; slowest of {} GPUs x{:.3f}", job_gpus_, pace_);
    return fmt::format(
        "roofline model for {} ({} curves): GEMM plateau bf16 {:.2f}{} of dense peak{}; attention kernel {}; HBM "
        "{:.0f} "
        "GB/s x {:.2f}; fixed cost {:.0f} us per tensor-core kernel, {:.0f} us per memory-bound kernel",
        gpu_.name.empty() ? "(unnamed GPU)" : gpu_.name, to_string(arch_), gemm_plateau(gpu_, arch_, Precision::BF16),
        low_precision, clocks, to_string(attention_), gpu_.hbm_GBps,
        memory_bandwidth_fraction(arch_, KernelKind::Elementwise), rl::kTensorKernelOverheadS * 1e6,
        rl::kMemoryKernelOverheadS * 1e6);
  }

 private:
  // The breakdown of a kernel in this job: tensor kernels at the pace of its slowest GPU. Both the
  // time and the interference ratio come from here, so they agree.
  RooflineBreakdown priced(const KernelDesc& k, const CommLoad& beside) const {
    RooflineBreakdown b = roofline_breakdown(gpu_, arch_, k, attention_, beside);
    if (b.compute_s > 0 && (is_gemm(k.kind) || is_flash_attention(k.kind))) {
      b.compute_s /= pace_;
      b.clock_factor *= pace_;
    }
    return b;
  }

  GpuSpec gpu_;
  ArchFamily arch_;
  AttentionKernel attention_;
  std::int64_t job_gpus_;
  double pace_;
};

}  // namespace

KernelTiming fixed_duration_timing(const KernelDesc& k) {
  if (!std::isfinite(k.seconds) || k.seconds < 0)
    throw Error(fmt::format("fixed_duration kernel: seconds ({}) must be finite and non-negative", k.seconds));
  KernelTiming t;
  t.time = from_seconds(k.seconds);
  t.achieved_tflops = t.time > 0 ? k.flops / to_seconds(t.time) / 1e12 : 0.0;
  t.compute_bound = false;
  t.source = "given";
  return t;
}

namespace {

// The factor at the rated power: what the calibration tables lose to the clock a step holds.
double rated_power_clock_factor(const GpuSpec& gpu, ArchFamily arch, CalibrationClock calibrated_at) {
  const auto share = [](double held, double benchmarked) {
    return std::min(1.0, std::pow(held / benchmarked, rl::kClockThroughputElasticity));
  };
  if (calibrated_at == CalibrationClock::ShortRun) {
    // A short run on a part whose boost clock is known ran at that clock (roofline_constants.hpp).
    if (gpu.boost_clock_mhz > 0 && gpu.sustained_clock_mhz > 0)
      return share(gpu.sustained_clock_mhz, gpu.boost_clock_mhz);
    return rl::kLongRunClockShare;
  }
  // AMD's tables were measured at the clock the GPU held under load (MI300X median 1207 MHz in BF16
  // GEMM; roofline_constants.hpp), so the sustained clock is in them already.
  if (arch == ArchFamily::Cdna2 || arch == ArchFamily::Cdna3) return 1.0;
  if (!(gpu.peak_clock_mhz > 0) || !(gpu.sustained_clock_mhz > 0)) return 1.0;
  return share(gpu.sustained_clock_mhz, gpu.peak_clock_mhz);
}

}  // namespace

double tensor_clock_factor(const GpuSpec& gpu, ArchFamily arch, CalibrationClock calibrated_at) {
  const double rated = rated_power_clock_factor(gpu, arch, calibrated_at);
  // Under a power limit (cluster.gpu_power_limit_w) the clock falls below the sustained one, whatever clock
  // the table was taken at; throughput follows it as clock^0.67 (hardware/power_limit.hpp).
  if (!(gpu.power_limited_clock_mhz > 0) || !(gpu.sustained_clock_mhz > 0)) return rated;
  return rated *
         std::pow(std::min(1.0, gpu.power_limited_clock_mhz / gpu.sustained_clock_mhz), rl::kClockThroughputElasticity);
}

double slowest_gpu_factor(std::int64_t gpus) {
  if (gpus <= 1) return 1.0;
  // Blom: E[min of N standard normals] ~ Phi^-1((1 - 0.375) / (N + 0.25)); Phi^-1 by bisection on erfc.
  const double p = 0.625 / (static_cast<double>(gpus) + 0.25);
  double lo = -10.0, hi = 0.0;
  for (int i = 0; i < 100; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  const double sigma = rl::kSameSkuSpreadRangeOf8 / rl::kExpectedRangeOf8Normals;
  return 1.0 + sigma * 0.5 * (lo + hi);
}

CalibrationClock attention_calibration_clock(ArchFamily arch, AttentionKernel kernel) {
  const bool fa3_paper_tables = kernel == AttentionKernel::Auto || kernel == AttentionKernel::Cudnn ||
                                kernel == AttentionKernel::Flash3 || kernel == AttentionKernel::Flash4 ||
                                kernel == AttentionKernel::Triton;
  return (arch == ArchFamily::Hopper || arch == ArchFamily::Blackwell) && fa3_paper_tables
             ? CalibrationClock::LockedAtPeakBasis
             : CalibrationClock::ShortRun;
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
  if (load.hbm_GBps > 0) gpu.hbm_GBps = std::max(gpu.hbm_GBps * rl::kMinHbmShareLeft, gpu.hbm_GBps - load.hbm_GBps);
  return gpu;
}

RooflineBreakdown roofline_breakdown(const GpuSpec& whole, ArchFamily arch, const KernelDesc& k,
                                     AttentionKernel attention, const CommLoad& beside) {
  check_desc(k);
  std::optional<GpuSpec> left;
  if (!beside.idle()) left = gpu_left_by(whole, beside);
  const GpuSpec& gpu = left ? *left : whole;
  RooflineBreakdown b;
  if (k.flops == 0 && k.bytes == 0) return b;  // empty kernel: nothing is launched
  b.memory_s = memory_seconds(gpu, arch, k.kind, k.bytes);

  if (is_gemm(k.kind)) {
    b.overhead_s = rl::kTensorKernelOverheadS;
    if (k.flops > 0) {
      const double peak = gpu.peak_tflops(k.dtype) * 1e12;
      b.efficiency =
          gemm_efficiency(gemm_plateau(whole, arch, k.dtype), whole.sm_count, k.m, k.n, k.k, k.batch, gpu.sm_count) *
          (k.block_scaled ? rl::kMxfp8GemmShareOfTensorScaled : 1.0);
      b.clock_factor = tensor_clock_factor(gpu, arch, CalibrationClock::ShortRun);
      b.compute_s = k.flops / (peak * b.efficiency * b.clock_factor);
      if (beside.unplanned_ctas() && whole.sm_count > 0 &&
          (arch == ArchFamily::Hopper || arch == ArchFamily::Blackwell))
        b.compute_s *= rl::kGemmBesideSmHolderSlowdown;
    }
    return b;
  }
  if (is_flash_attention(k.kind)) {
    b.overhead_s = rl::kTensorKernelOverheadS;
    if (k.flops > 0) {
      const double peak = gpu.peak_tflops(k.dtype) * 1e12;
      // A sliding window's band has the tile edges of a causal attention as long as the window (a masked edge at
      // both ends of each row of window / tile tiles), so it runs at that length's rate.
      double seq = std::sqrt(static_cast<double>(k.m) * static_cast<double>(k.n));
      if (k.window > 0) seq = std::min(seq, static_cast<double>(k.window));
      b.efficiency =
          flash_attention_fraction(arch, k.dtype, k.kind == KernelKind::FlashAttnBwd, seq, k.k, k.causal, attention);
      b.clock_factor = tensor_clock_factor(gpu, arch, attention_calibration_clock(arch, attention));
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

std::unique_ptr<ComputeModel> make_roofline_model(const GpuSpec& gpu, AttentionKernel attention,
                                                  std::int64_t job_gpus) {
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
  return std::make_unique<RooflineModel>(gpu, attention, job_gpus);
}

}  // namespace trainsim
