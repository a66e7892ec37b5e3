// Memory-bound kernels: achievable HBM fraction, the small-size ramp and the per-kernel floor
// (docs/compute-model.md §1.3, §2).
#include <gtest/gtest.h>

#include "compute/compute_model.hpp"
#include "compute/memory_efficiency.hpp"
#include "test_gpus.hpp"
#include "test_kernels.hpp"

namespace trainsim {
namespace {

double us(const ComputeModel& m, const KernelDesc& k) { return to_microseconds(m.time(k).time); }

// A 1 GB LayerNorm on H100: bytes / (3.35e12 B/s * 0.90) = 331.7 us, plus one DRAM latency
// (0.4 us, the size ramp) and the 2 us kernel floor = 334.1 us. Memory-bound, not compute-bound.
TEST(MemoryModel, LargeLayerNormRunsAtTheHbmFraction) {
  const auto model = make_roofline_model(test::h100_sxm());
  const KernelDesc ln = test::memory(KernelKind::LayerNorm, 1e9, 0.5e9 * 6);  // 6 flops per element
  const double expected_us = 1e9 / (3.35e12 * 0.90) * 1e6 + 0.4 + 2.0;
  EXPECT_NEAR(us(*model, ln), expected_us, expected_us * 0.002);
  EXPECT_FALSE(model->time(ln).compute_bound);
}

// Tiny kernels are latency-bound: a 1 KB add costs the 2 us launch floor (torchao's GPU-side
// minimum on H100, torchao roofline_utils.py) plus at most one DRAM round trip, and 1 B costs the same.
TEST(MemoryModel, TinyKernelsAreFlooredByLaunchOverhead) {
  const auto model = make_roofline_model(test::h100_sxm());
  const double t_1k = us(*model, test::memory(KernelKind::Elementwise, 1024));
  EXPECT_GE(t_1k, 2.0);
  EXPECT_LT(t_1k, 2.5);
  EXPECT_NEAR(us(*model, test::memory(KernelKind::Memset, 1)), t_1k, 0.01);
  // Tensor-core kernels have the larger 5 us floor (XLA's 256^3 GEMM takes ~5 us, matmul_interpolator_data.h).
  const double t_gemm = us(*model, test::gemm(16, 16, 16));
  EXPECT_GE(t_gemm, 5.0);
  EXPECT_LT(t_gemm, 5.5);
}

// Little's law: at B_half = bandwidth * 400 ns the ramp is exactly one half; far above it, ~1.
TEST(MemoryModel, SizeRampHalvesBandwidthAtTheLatencyBandwidthProduct) {
  const double bw = 3.35e12 * 0.9;
  EXPECT_NEAR(memory_size_ramp(bw * 400e-9, bw), 0.5, 1e-12);
  EXPECT_GT(memory_size_ramp(1e9, bw), 0.998);
}

// Fused AdamW moves ~30 B/param per step; at ~90% of 3.35 TB/s that is ~10 us per million
// parameters on H100 [derived: read master, m, v, grad 16 B, write master, m, v, bf16 copy 14 B]. 100 M
// parameters: ~1 ms.
TEST(MemoryModel, OptimizerStepMatchesTheAdamEstimate) {
  const auto model = make_roofline_model(test::h100_sxm());
  const double t = us(*model, test::memory(KernelKind::OptimizerStep, 100e6 * 30));
  EXPECT_NEAR(t, 1000.0, 50.0);
}

// EleutherAI's unfused layer (cookbook benchmarks/sizing transformer.out): softmax over 4*16*2048^2 = 268 M fp16 scores
// took 7.6 ms. Reading and writing them once is 1.07 GB; on an A100-40GB (1555 GB/s) the model
// must reproduce ~7.6 ms within 10%.
TEST(MemoryModel, UnfusedSoftmaxIsFarFromBandwidthBound) {
  GpuSpec a100_40 = test::a100_80gb();
  a100_40.name = "A100-SXM4-40GB";
  a100_40.hbm_GBps = 1555;
  const auto model = make_roofline_model(a100_40);
  const double scores = 4.0 * 16 * 2048.0 * 2048.0;
  const double t_ms = us(*model, test::memory(KernelKind::Softmax, scores * 2 * 2, scores * 5)) / 1000;
  EXPECT_NEAR(t_ms, 7.6, 0.76);
  // The same bytes as a well-written elementwise kernel run ~10x faster.
  EXPECT_GT(t_ms * 1000 / us(*model, test::memory(KernelKind::Elementwise, scores * 2 * 2)), 8.0);
}

// Blackwell's measured memory fraction is lower (B300: 0.84, torchao roofline_utils.py).
TEST(MemoryModel, BlackwellUsesItsMeasuredFraction) {
  EXPECT_DOUBLE_EQ(memory_bandwidth_fraction(ArchFamily::Blackwell, KernelKind::LayerNorm), 0.84);
  EXPECT_DOUBLE_EQ(memory_bandwidth_fraction(ArchFamily::Hopper, KernelKind::LayerNorm), 0.90);
  const auto model = make_roofline_model(test::b200());
  const double expected_us = 1e9 / (7.7e12 * 0.84) * 1e6 + 0.4 + 2.0;
  EXPECT_NEAR(us(*model, test::memory(KernelKind::Elementwise, 1e9)), expected_us, expected_us * 0.002);
}

// Memory-bound kinds keep a compute side at the FP32 vector peak: a kernel labelled elementwise
// but doing 1000 FLOPs per byte (far past H100's fp32 ridge of 66.9e12 / 3.0e12 = 22 FLOP/B)
// becomes compute-bound instead of being priced as free arithmetic.
TEST(MemoryModel, ArithmeticHeavyMemoryKindBecomesComputeBound) {
  const auto model = make_roofline_model(test::h100_sxm());
  const KernelDesc k = test::memory(KernelKind::Elementwise, 1e8, 1e11);
  EXPECT_TRUE(model->time(k).compute_bound);
  EXPECT_NEAR(us(*model, k), 1e11 / 66.9e12 * 1e6 + 2.0, 0.5);
}

}  // namespace
}  // namespace trainsim
