// Transformer Engine's low-precision GEMMs and their quantization kernels (NVFP4 on Blackwell; FP8 under its delayed,
// tensorwise and MXFP8 recipes), priced by the roofline model against published measurements: the FP4 share of the
// peak (kPlateauBlackwellFp4, data/gpus.yaml gemm_plateau.fp4), the MXFP8 GEMM's share of a tensor-scaled one, and the
// quantization kernels (workload/kernels_factory.hpp nvfp4_*_kernel, fp8_quantize_kernels). Reference numbers are
// measurements quoted from their sources, not outputs of this model.
#include <gtest/gtest.h>

#include <array>

#include "compute/compute_model.hpp"
#include "compute/gemm_efficiency.hpp"
#include "compute/roofline_constants.hpp"
#include "core/error.hpp"
#include "hardware/gpu_catalog.hpp"
#include "scenario/scenario.hpp"
#include "workload/kernels_factory.hpp"

namespace trainsim {
namespace {

// A catalog part without its clock derating, so times compare with short benchmark runs (the long-run share
// aside): the references below state no clocks.
GpuSpec short_run_part(const char* name) {
  GpuSpec gpu = *GpuCatalog::builtin().find(name);
  gpu.sustained_clock_mhz = gpu.peak_clock_mhz = gpu.boost_clock_mhz = 0;
  return gpu;
}

// pytorch/ao PR #2427 (benchmarks/float8/bench_matmul.py --recipe nvfp4, NVIDIA B200, 2025-06): cuBLAS through
// torch._scaled_mm, BF16 and NVFP4 in one sweep, as fractions of 2.25 / 9 PF. 6144^3: 0.646 / 0.611; 8192^3:
// 0.631 / 0.597. Absolute levels differ between sources (the same B200 cube reads 0.716 in another sweep), so the
// model is held to the ratio within one sweep.
TEST(Nvfp4Gemm, KeepsB200CublasShareOfBf16AtLargeCubes) {
  const GpuSpec b200 = short_run_part("B200");
  const auto model = make_roofline_model(b200);
  const auto fraction = [&](std::int64_t s, Precision p) {
    return model->time(gemm(s, s, s, p)).achieved_tflops / b200.peak_tflops(p);
  };
  EXPECT_NEAR(fraction(6144, Precision::FP4) / fraction(6144, Precision::BF16), 0.611 / 0.646, 0.05);
  EXPECT_NEAR(fraction(8192, Precision::FP4) / fraction(8192, Precision::BF16), 0.597 / 0.631, 0.05);
}

// Transformer Engine's benchmark_gemm.py on an NVIDIA B300 (docs/examples/gemm_profiling/gemm_profiling.rst): the 12
// GEMMs of a layer with hidden 4096, ffn 16384 and 15,872 tokens, each a te.Linear forward (M x K input, N x K
// weight), per layer in ms.
struct TeShape {
  std::int64_t m, k, n;
};
constexpr std::array<TeShape, 12> kTeLayer = {{{15872, 4096, 12288},
                                               {15872, 4096, 4096},
                                               {15872, 4096, 16384},
                                               {15872, 16384, 4096},
                                               {15872, 12288, 4096},
                                               {15872, 4096, 4096},
                                               {15872, 16384, 4096},
                                               {15872, 4096, 16384},
                                               {4096, 15872, 12288},
                                               {4096, 15872, 4096},
                                               {4096, 15872, 16384},
                                               {16384, 15872, 4096}}};

struct LayerTimes {
  double bf16 = 0, fp4 = 0, fp4_autocast = 0;
  double fp8_delayed_autocast = 0, fp8_tensorwise_autocast = 0, mxfp8 = 0, mxfp8_autocast = 0, fp8 = 0;
};

// Autocast: te.Linear quantizes its input and, with no is_first_microbatch, its weight on every call: NVFP4 an amax
// pass and a quantize kernel per tensor, FP8 the recipe's kernels (no TE norm before these linears).
LayerTimes te_layer(const ComputeModel& model, bool blackwell = true) {
  const auto ms = [&](const KernelDesc& k) { return to_seconds(model.time(k).time) * 1e3; };
  const auto nvfp4 = [&](double elems) {
    double t = 0;
    for (const StemmedKernel& q : nvfp4_quantize_kernels(elems)) t += ms(q.kernel);
    return t;
  };
  const auto fp8 = [&](Fp8Recipe r, double input, double weight) {
    double t = 0;
    for (const StemmedKernel& q : fp8_quantize_kernels(r, input, false, false)) t += ms(q.kernel);
    for (const StemmedKernel& q : fp8_quantize_kernels(r, weight, false, true)) t += ms(q.kernel);
    return t;
  };
  LayerTimes t;
  for (const TeShape& s : kTeLayer) {
    const double input = static_cast<double>(s.m) * static_cast<double>(s.k);
    const double weight = static_cast<double>(s.n) * static_cast<double>(s.k);
    t.bf16 += ms(gemm(s.m, s.n, s.k, Precision::BF16));
    const double fp8_gemm = ms(gemm(s.m, s.n, s.k, Precision::FP8));
    t.fp8 += fp8_gemm;
    t.fp8_delayed_autocast += fp8_gemm + fp8(Fp8Recipe::Delayed, input, weight);
    t.fp8_tensorwise_autocast += fp8_gemm + fp8(Fp8Recipe::Tensorwise, input, weight);
    if (!blackwell) continue;
    t.fp4 += ms(gemm(s.m, s.n, s.k, Precision::FP4));
    t.fp4_autocast += ms(gemm(s.m, s.n, s.k, Precision::FP4)) + nvfp4(input) + nvfp4(weight);
    KernelDesc mx = gemm(s.m, s.n, s.k, Precision::FP8);
    mx.block_scaled = true;
    t.mxfp8 += ms(mx);
    t.mxfp8_autocast += ms(mx) + fp8(Fp8Recipe::Mxfp8, input, weight);
  }
  return t;
}

// Pre-quantized (GEMM kernels only): BF16 13.102 ms, NVFP4 3.764 ms, 3.48x on a 6x peak ratio. B300's own FP4
// plateau (data/gpus.yaml, 0.43) comes from this ratio; the check is that the shape curve carries it to the layer.
TEST(Nvfp4Gemm, ReproducesTeB300PreQuantizedLayerSpeedup) {
  const LayerTimes t = te_layer(*make_roofline_model(short_run_part("B300")));
  EXPECT_NEAR((t.bf16 / t.fp4) / (13.102 / 3.764), 1.0, 0.05);
}

// Autocast, quantization included: BF16 12.758 ms, FP8 delayed scaling 7.802 ms (1.64x), NVFP4 6.453 ms (1.98x).
// FP8's cast-transpose model reproduces its speedup within 5%. NVFP4's comes out 10-11% high: its quantization
// measured 2.69 ms per layer (autocast minus pre-quantized), where the bandwidth model gives 1.93 ms; TE's fused
// Hadamard-transform cast runs below memory speed of light with its default precise math
// (TransformerEngine PR #2411), which the byte count does not see.
TEST(Nvfp4Gemm, TeB300AutocastLayerSpeedups) {
  const LayerTimes t = te_layer(*make_roofline_model(short_run_part("B300")));
  EXPECT_NEAR((t.bf16 / t.fp8_delayed_autocast) / (12.758 / 7.802), 1.0, 0.05);
  const double fp4_ratio = (t.bf16 / t.fp4_autocast) / (12.758 / 6.453);
  EXPECT_GT(fp4_ratio, 1.0);  // the known gap above, so a change that closes or widens it shows
  EXPECT_LT(fp4_ratio, 1.13);
  // Quantization is a real share of the NVFP4 layer (measured 42%), not a rounding error.
  EXPECT_GT((t.fp4_autocast - t.fp4) / t.fp4_autocast, 0.30);
}

// The FP8 recipes on the same B300 (autocast vs BF16's 12.758 ms): delayed scaling 7.802 ms (1.64x), tensorwise
// (TE's current scaling) 9.147 ms (1.39x), MXFP8 8.984 ms (1.42x); pre-quantized, the MXFP8 GEMMs take 7.161 ms
// against the tensor-scaled ones' 6.812 (kMxfp8GemmShareOfTensorScaled). Tensorwise within 5%; MXFP8 comes out 6%
// fast, its quantization measured 1.82 ms per layer (8.984 - 7.161) where the byte count gives about 1.55 ms, like
// NVFP4's (above): TE's block-scaled quantize kernels run below the element-wise bandwidth the model gives them.
TEST(Fp8Recipes, TeB300AutocastLayerSpeedups) {
  const LayerTimes t = te_layer(*make_roofline_model(short_run_part("B300")));
  EXPECT_NEAR((t.bf16 / t.fp8_tensorwise_autocast) / (12.758 / 9.147), 1.0, 0.05);
  const double mxfp8_ratio = (t.bf16 / t.mxfp8_autocast) / (12.758 / 8.984);
  EXPECT_GT(mxfp8_ratio, 1.0);  // the known gap, so a change that closes or widens it shows
  EXPECT_LT(mxfp8_ratio, 1.08);
  EXPECT_NEAR((t.mxfp8 / t.fp8) / (7.161 / 6.812), 1.0, 0.01);
  // Delayed scaling's single pass beats tensorwise's amax pass, as measured.
  EXPECT_LT(t.fp8_delayed_autocast, t.fp8_tensorwise_autocast);
}

// On an H200 NVL: delayed 18.978 ms, tensorwise 20.285 ms per layer (1.069x); pre-quantized, the tensor-scaled GEMMs
// take 16.785 ms, so quantization is 12% (delayed) and 17% (tensorwise) of the autocast layer. The H200 NVL (PCIe,
// lower power) is not in the catalog; the ratios are compared on the H200.
TEST(Fp8Recipes, TeH200TensorwiseCostsTheAmaxPass) {
  const LayerTimes t = te_layer(*make_roofline_model(short_run_part("H200")), false);
  EXPECT_NEAR((t.fp8_tensorwise_autocast / t.fp8_delayed_autocast) / (20.285 / 18.978), 1.0, 0.04);
  EXPECT_NEAR((t.fp8_tensorwise_autocast - t.fp8) / t.fp8_tensorwise_autocast, (20.285 - 16.785) / 20.285, 0.05);
}

// Blackwell Ultra's FP4 share: B300 and GB300 carry their own plateau; GB200 scales B200's by its lower BF16 share.
TEST(Nvfp4Gemm, BlackwellUltraCarriesItsOwnFp4Plateau) {
  const GpuCatalog& cat = GpuCatalog::builtin();
  EXPECT_DOUBLE_EQ(gemm_plateau(*cat.find("B200"), ArchFamily::Blackwell, Precision::FP4),
                   roofline::kPlateauBlackwellFp4);
  EXPECT_DOUBLE_EQ(gemm_plateau(*cat.find("B300"), ArchFamily::Blackwell, Precision::FP4), 0.43);
  EXPECT_DOUBLE_EQ(gemm_plateau(*cat.find("GB300"), ArchFamily::Blackwell, Precision::FP4), 0.43);
  EXPECT_DOUBLE_EQ(gemm_plateau(*cat.find("GB200"), ArchFamily::Blackwell, Precision::FP4), 0.66);  // its BF16 x 0.946
  // Their 16-bit and FP8 GEMMs keep the architecture's plateau.
  EXPECT_DOUBLE_EQ(gemm_plateau(*cat.find("B300"), ArchFamily::Blackwell, Precision::BF16),
                   roofline::kPlateauBlackwell16);
}

// An FP4 GEMM needs an FP4 peak: Hopper has none, and the model says so instead of pricing it on another peak.
TEST(Nvfp4Gemm, RefusedOnAGpuWithoutFp4) {
  const auto model = make_roofline_model(*GpuCatalog::builtin().find("H100-SXM"));
  EXPECT_THROW(model->time(gemm(4096, 4096, 4096, Precision::FP4)), Error);
}

}  // namespace
}  // namespace trainsim
