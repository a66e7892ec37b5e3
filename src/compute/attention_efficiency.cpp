#include "compute/attention_efficiency.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "compute/gemm_efficiency.hpp"
#include "compute/roofline_constants.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace rl = roofline;

namespace {

// Linear interpolation in log2(seq) over kAttnSeqLens. Above the longest length the value is held
// (the tables have flattened by 16k); below the shortest, `extrapolate_short` continues the first
// segment's slope down to kAttnShortSeqFloorShare of the first value, otherwise holds it.
double interp_seq(const std::array<double, 6>& v, double seq, bool extrapolate_short) {
  const auto& s = rl::kAttnSeqLens;
  const double x = std::log2(seq);
  if (seq <= s.front()) {
    if (!extrapolate_short) return v.front();
    const double slope = v[1] - v[0];  // per doubling
    const double y = v[0] + slope * (x - std::log2(s[0]));
    return std::max(y, rl::kAttnShortSeqFloorShare * v[0]);
  }
  if (seq >= s.back()) return v.back();
  std::size_t i = 1;
  while (s[i] < seq) ++i;
  const double x0 = std::log2(s[i - 1]), x1 = std::log2(s[i]);
  const double t = (x - x0) / (x1 - x0);
  return v[i - 1] + t * (v[i] - v[i - 1]);
}

// Table TFLOPS at (seq, head_dim, causal): seq-interpolate every row of the mask, then
// interpolate in log2(head_dim) between the bracketing head dims (held outside the measured ones).
template <std::size_t N>
double table_tflops(const std::array<rl::AttnRow, N>& table, double seq, double head_dim, bool causal) {
  std::vector<std::pair<double, double>> pts;  // (head_dim, tflops)
  for (const auto& row : table) {
    if (row.causal == causal) pts.emplace_back(row.head_dim, interp_seq(row.tflops, seq, true));
  }
  std::sort(pts.begin(), pts.end());
  if (head_dim <= pts.front().first) return pts.front().second;
  if (head_dim >= pts.back().first) return pts.back().second;
  std::size_t i = 1;
  while (pts[i].first < head_dim) ++i;
  const double x0 = std::log2(pts[i - 1].first), x1 = std::log2(pts[i].first);
  const double t = (std::log2(head_dim) - x0) / (x1 - x0);
  return pts[i - 1].second + t * (pts[i].second - pts[i - 1].second);
}

using Ratio = std::array<double, 6>;

// A published fwd+bwd table split into forward and backward with the kernel's bwd/fwd ratio.
template <std::size_t N>
FwdBwdFractions from_combined(const std::array<rl::AttnRow, N>& table, double ref_peak, const Ratio& bwd_over_fwd,
                              double seq, double head_dim, bool causal) {
  const double combined = table_tflops(table, seq, head_dim, causal) / ref_peak;
  return split_combined_attention(combined, interp_seq(bwd_over_fwd, seq, false));
}

// A published forward table; backward = forward x the kernel's bwd/fwd ratio.
template <std::size_t N>
FwdBwdFractions from_forward(const std::array<rl::AttnRow, N>& table, double ref_peak, const Ratio& bwd_over_fwd,
                             double seq, double head_dim, bool causal) {
  const double fwd = table_tflops(table, seq, head_dim, causal) / ref_peak;
  return {fwd, fwd * interp_seq(bwd_over_fwd, seq, false)};
}

// FlashAttention-2 on Hopper: the forward and backward measured at head dim 128 (kHopperFa2Measured*), moved to
// other head dims by the FA2 figure's ratio at the same sequence length and mask.
FwdBwdFractions hopper_fa2_fractions(double seq, double hd, bool causal) {
  const double peak = rl::kHopperAttnRefPeakTflops;
  const double hd_ratio =
      table_tflops(rl::kHopperFa2FwdBwd, seq, hd, causal) / table_tflops(rl::kHopperFa2FwdBwd, seq, 128.0, causal);
  return {table_tflops(rl::kHopperFa2MeasuredFwd, seq, 128.0, causal) * hd_ratio / peak,
          table_tflops(rl::kHopperFa2MeasuredBwd, seq, 128.0, causal) * hd_ratio / peak};
}

FwdBwdFractions ampere_fractions(AttentionKernel kernel, double seq, double hd, bool causal) {
  const double peak = rl::kAmpereAttnRefPeakTflops;
  switch (kernel) {
    case AttentionKernel::Flash1: return from_combined(rl::kAmpereFa1FwdBwd, peak, rl::kFa2BwdOverFwd, seq, hd, causal);
    case AttentionKernel::Triton:
      return from_combined(rl::kAmpereTritonFwdBwd, peak, rl::kFa2BwdOverFwd, seq, hd, causal);
    default:  // auto, flash2, cudnn (no Ampere cuDNN measurement: FA2's table)
      return from_combined(rl::kAmpereFa2FwdBwd, peak, rl::kFa2BwdOverFwd, seq, hd, causal);
  }
}

FwdBwdFractions hopper_fractions(AttentionKernel kernel, double seq, double hd, bool causal) {
  const double peak = rl::kHopperAttnRefPeakTflops;
  switch (kernel) {
    case AttentionKernel::Flash1: return from_combined(rl::kHopperFa1FwdBwd, peak, rl::kFa2BwdOverFwd, seq, hd, causal);
    case AttentionKernel::Flash2: return hopper_fa2_fractions(seq, hd, causal);
    case AttentionKernel::Flash3:
    case AttentionKernel::Flash4:  // Blackwell only (attention_kernel_problem): FA3's table, scaled there
      return from_forward(rl::kHopperFa3Fwd, peak, rl::kFa3BwdOverFwd, seq, hd, causal);
    case AttentionKernel::Triton: return from_forward(rl::kHopperTritonFwd, peak, rl::kFa2BwdOverFwd, seq, hd, causal);
    case AttentionKernel::Auto:
    case AttentionKernel::Cudnn: break;
  }
  return from_forward(rl::kHopperCudnnFwd, peak, rl::kAttnBwdOverFwd, seq, hd, causal);
}

FwdBwdFractions scaled(FwdBwdFractions f, double s) { return {f.fwd * s, f.bwd * s}; }

}  // namespace

FwdBwdFractions split_combined_attention(double combined_fraction, double bwd_over_fwd) {
  // 3.5 F / R_c = F / R_f + 2.5 F / (r R_f)  =>  R_f = R_c (1 + 2.5 / r) / 3.5.
  const double k = rl::kAttnBwdFlopsOverFwd;
  const double fwd = combined_fraction * (1.0 + k / bwd_over_fwd) / (1.0 + k);
  return {fwd, fwd * bwd_over_fwd};
}

std::optional<std::string> attention_kernel_problem(ArchFamily arch, AttentionKernel kernel) {
  const bool amd = arch == ArchFamily::Cdna2 || arch == ArchFamily::Cdna3;
  if (kernel == AttentionKernel::Flash3 && arch != ArchFamily::Hopper)
    return fmt::format("flash3 (FlashAttention-3) runs on Hopper GPUs only; this GPU is {}{}", to_string(arch),
                       arch == ArchFamily::Blackwell ? " (its FlashAttention is flash4)" : "");
  // FlashAttention-4 is priced from its one public measurement, FA4 on B200 against FA3 on H200: Blackwell only.
  if (kernel == AttentionKernel::Flash4 && arch != ArchFamily::Blackwell)
    return fmt::format("flash4 (FlashAttention-4) is modelled on Blackwell GPUs only; this GPU is {}{}",
                       to_string(arch), arch == ArchFamily::Hopper ? " (use flash3)" : "");
  if (amd && (kernel == AttentionKernel::Cudnn || kernel == AttentionKernel::Flash1))
    return fmt::format("{} has no AMD kernels; use auto, flash2 or triton on {}", to_string(kernel), to_string(arch));
  return std::nullopt;
}

double flash_attention_fraction(ArchFamily arch, Precision p, bool backward, double seq, std::int64_t head_dim,
                                bool causal, AttentionKernel kernel) {
  if (auto problem = attention_kernel_problem(arch, kernel)) throw Error("training.attention_kernel: " + *problem);
  if (!(seq > 0) || head_dim <= 0) {
    throw Error(fmt::format("flash attention needs a positive sequence length and head dim (got seq {}, head_dim {})",
                            seq, head_dim));
  }
  const double hd = static_cast<double>(head_dim);
  FwdBwdFractions f;
  switch (arch) {
    case ArchFamily::Volta:  // FA2 has no Volta kernels; Ampere's table x the GEMM plateau ratio (= 1)
    case ArchFamily::Ampere:
      f = scaled(ampere_fractions(kernel, seq, hd, causal),
                 gemm_plateau(arch, Precision::BF16) / gemm_plateau(ArchFamily::Ampere, Precision::BF16));
      break;
    case ArchFamily::Hopper: f = hopper_fractions(kernel, seq, hd, causal); break;
    case ArchFamily::Blackwell:
      f = scaled(hopper_fractions(kernel, seq, hd, causal), rl::kBlackwellAttnScaleVsHopper);
      break;
    case ArchFamily::Cdna2:
    case ArchFamily::Cdna3:
      // No AMD attention measurements: Hopper's cuDNN table x the GEMM plateau ratio (crude), for
      // every kernel AMD runs (CK FlashAttention-2, Triton).
      f = scaled(hopper_fractions(AttentionKernel::Auto, seq, hd, causal),
                 gemm_plateau(arch, Precision::BF16) / gemm_plateau(ArchFamily::Hopper, Precision::BF16));
      break;
  }
  double frac = backward ? f.bwd : f.fwd;
  if (p == Precision::FP8) frac *= rl::kFp8AttnScaleVsBf16;
  return frac;
}

}  // namespace trainsim
