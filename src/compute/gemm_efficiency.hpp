#pragma once
// Fraction of a precision's dense peak that a (batched) GEMM sustains in its main loop, as a
// function of shape and GPU generation. The fixed per-kernel cost is separate
// (roofline::kTensorKernelOverheadS); see docs/compute-model.md for the formula and its fit.
#include <cstdint>

#include "compute/arch_family.hpp"
#include "hardware/gpu_spec.hpp"

namespace trainsim {

// Asymptotic fraction for large, aligned shapes of an architecture (roofline_constants.hpp kPlateau*).
double gemm_plateau(ArchFamily arch, Precision p);
// The same for one part: its own measured plateau where the catalog gives one (GpuSpec::gemm_plateau_16 for
// BF16/FP16/TF32, gemm_plateau_fp8 for FP8, gemm_plateau_fp4 for FP4), else its architecture's.
double gemm_plateau(const GpuSpec& gpu, ArchFamily arch, Precision p);

// g(x) = max(1 / (1 + (x0 / x)^2), 1 / (1 + x0 / x)), x0 = roofline::kGemmHalfEfficiencyDim: the
// loss from a short reduction (x = k) or a skinny output (x = min(m, n)); the quadratic term is the
// fitted one (x >= x0), the hyperbolic one bounds thin GEMMs below x0. 0 for x <= 0.
double gemm_dimension_factor(double x);

// Wave quantisation: the last wave of output tiles leaves SMs idle. For each candidate tile,
// tiles = ceil(m/tm) * ceil(n/tn) * batch and the factor is tiles / (ceil(tiles/SMs) * SMs);
// the best candidate wins. 1 when the grid fits in one wave or sm_count is unknown (<= 0).
// `sm_available` (default: all) is how many SMs the kernel gets while collectives hold the others: the
// library picked its tile for the whole GPU at launch (its heuristics do not see NCCL), and that grid
// then runs in waves of the SMs left, so a one-wave grid needs two waves.
double gemm_wave_factor(std::int64_t m, std::int64_t n, std::int64_t batch, int sm_count, int sm_available = 0);

// 1 when every dim is a multiple of 8 elements (or smaller than 8); lower for dims divisible only
// by 2 or 4, lowest for odd dims (Anthony et al. 2024, arXiv 2401.14489; ml-engineering swiglu-maf-bench.py).
double gemm_alignment_factor(std::int64_t m, std::int64_t n, std::int64_t k);

// plateau * g(k) * g(min(m, n)) * wave * alignment, with `plateau` from gemm_plateau. Shapes must be positive.
double gemm_efficiency(double plateau, int sm_count, std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t batch,
                       int sm_available = 0);

}  // namespace trainsim
