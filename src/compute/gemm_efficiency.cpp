#include "compute/gemm_efficiency.hpp"

#include <algorithm>

#include "compute/roofline_constants.hpp"

namespace trainsim {

namespace rl = roofline;

double gemm_plateau(ArchFamily arch, Precision p) {
  const bool amd = arch == ArchFamily::Cdna2 || arch == ArchFamily::Cdna3;
  // FP4 outside Blackwell: only AMD's CDNA4 has an FP4 peak, and trainsim trains nothing in FP4 there
  // (validation refuses it); its FP8 plateau stands in.
  const bool low = quantized_gemms(p);
  if (amd) return low ? rl::kPlateauCdnaFp8 : rl::kPlateauCdna16;  // MI250X: MI300X's (no data)
  if (p == Precision::FP32) return rl::kPlateauNvidiaFp32;
  switch (arch) {
    case ArchFamily::Volta:                                // no Volta measurement: Ampere's values (assumption)
    case ArchFamily::Ampere: return rl::kPlateauAmpere16;  // Ampere has no FP8; GpuSpec::peak_tflops rejects it first
    case ArchFamily::Hopper: return low ? rl::kPlateauHopperFp8 : rl::kPlateauHopper16;
    case ArchFamily::Blackwell:
      return p == Precision::FP4   ? rl::kPlateauBlackwellFp4
             : p == Precision::FP8 ? rl::kPlateauBlackwellFp8
                                   : rl::kPlateauBlackwell16;
    case ArchFamily::Cdna2:
    case ArchFamily::Cdna3: break;
  }
  return rl::kPlateauHopper16;
}

double gemm_plateau(const GpuSpec& gpu, ArchFamily arch, Precision p) {
  if (p == Precision::FP4 && gpu.gemm_plateau_fp4) return *gpu.gemm_plateau_fp4;
  if (p == Precision::FP8 && gpu.gemm_plateau_fp8) return *gpu.gemm_plateau_fp8;
  if (!quantized_gemms(p) && p != Precision::FP32 && gpu.gemm_plateau_16) return *gpu.gemm_plateau_16;
  return gemm_plateau(arch, p);
}

double gemm_dimension_factor(double x) {
  if (!(x > 0)) return 0.0;
  const double r = rl::kGemmHalfEfficiencyDim / x;
  // Quadratic roll-off fitted for x >= 256; below x0 the hyperbolic occupancy bound x / (x + x0)
  // takes over (the quadratic would make a GEMV ~10^4x compute-slow; a thin slice of a tile
  // still does useful work in proportion to its rows). The two meet at x = x0 (both 0.5).
  return std::max(1.0 / (1.0 + r * r), 1.0 / (1.0 + r));
}

double gemm_wave_factor(std::int64_t m, std::int64_t n, std::int64_t batch, int sm_count, int sm_available) {
  if (sm_count <= 0 || m <= 0 || n <= 0 || batch <= 0) return 1.0;
  const std::int64_t sms = sm_count;
  const auto fill = [](std::int64_t tiles, std::int64_t on) {
    const std::int64_t waves = (tiles + on - 1) / on;
    return static_cast<double>(tiles) / static_cast<double>(waves * on);
  };
  // The tile the library picks for the whole GPU: one wave if any candidate fits, else the best fill.
  std::int64_t chosen = 0;
  double best = -1.0;
  bool one_wave = false;
  for (const auto& tile : rl::kGemmTiles) {
    const std::int64_t tiles = ((m + tile.m - 1) / tile.m) * ((n + tile.n - 1) / tile.n) * batch;
    if (tiles <= sms) {
      one_wave = true;
      break;
    }
    if (const double f = fill(tiles, sms); f > best) {
      best = f;
      chosen = tiles;
    }
  }
  const std::int64_t on = sm_available > 0 ? std::min<std::int64_t>(sm_available, sms) : sms;
  if (on == sms) return one_wave ? 1.0 : best;
  // Fewer SMs: the same grid in waves of `on`. A one-wave grid was launched to fill the whole GPU
  // (split-K / stream-K), i.e. as `sms` CTAs.
  return one_wave ? fill(sms, on) : fill(chosen, on);
}

namespace {
double dim_alignment(std::int64_t x) {
  // Dims below one vector width are padded inside a tile; their cost is occupancy, in g(x).
  if (x < rl::kGemmAlignedDivisor) return 1.0;
  const std::int64_t pow2 = x & -x;  // largest power of two dividing x
  if (pow2 >= rl::kGemmAlignedDivisor) return 1.0;
  return pow2 >= 2 ? rl::kGemmAlignEvenFactor : rl::kGemmAlignOddFactor;
}
}  // namespace

double gemm_alignment_factor(std::int64_t m, std::int64_t n, std::int64_t k) {
  if (m <= 0 || n <= 0 || k <= 0) return 1.0;
  return std::min({dim_alignment(m), dim_alignment(n), dim_alignment(k)});
}

double gemm_efficiency(double plateau, int sm_count, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                       int sm_available) {
  return plateau * gemm_dimension_factor(static_cast<double>(k)) *
         gemm_dimension_factor(static_cast<double>(std::min(m, n))) *
         gemm_wave_factor(m, n, batch, sm_count, sm_available) * gemm_alignment_factor(m, n, k);
}

}  // namespace trainsim
