// Fused-attention pricing: the published FlashAttention-2 (A100) and cuDNN (H100) tables of
// the FlashAttention-2 repository and FA3 paper figures, split into forward and backward, interpolated, and
// scaled to other generations.
#include <gtest/gtest.h>

#include "compute/attention_efficiency.hpp"
#include "compute/compute_model.hpp"
#include "compute/roofline_constants.hpp"
#include "core/error.hpp"
#include "test_gpus.hpp"
#include "test_kernels.hpp"

namespace trainsim {
namespace {

using test::bench_batch_heads;

// A100 FA2, causal, hd128, s = 4096: 173 TFLOPS fwd+bwd (flash2_a100_fwd_bwd_benchmark.png). With bwd = 2.5x fwd
// FLOPs, the combined rate is 3.5 F / (t_fwd + t_bwd); it must land on the table within 3% (the
// 5 us fixed cost per kernel is < 1% here). The forward alone is faster than the combined mean
// (backward kernels are slower) and cannot beat FA2's best forward, 73% of 312 TF = 228 TF
// (FA2 abstract, "50-73% of the theoretical maximum").
TEST(AttentionModel, A100Fa2CausalHd128At4kMatchesTable) {
  const auto model = make_roofline_model(test::a100_80gb());
  const std::int64_t bh = bench_batch_heads(4096, 128);
  const KernelDesc fwd = test::flash(false, bh, 4096, 4096, 128, true);
  const KernelDesc bwd = test::flash(true, bh, 4096, 4096, 128, true);
  const double t = to_seconds(model->time(fwd).time) + to_seconds(model->time(bwd).time);
  const double combined_tflops = 3.5 * fwd.flops / t / 1e12;
  // The FA2 repository's figure is a short-run table: in a step at the long-run clock share.
  const double in_step = roofline::kLongRunClockShare;
  EXPECT_NEAR(combined_tflops / (173.0 * in_step), 1.0, 0.03);
  const double fwd_tflops = model->time(fwd).achieved_tflops;
  EXPECT_GT(fwd_tflops, 173.0 * in_step);
  EXPECT_LE(fwd_tflops, 0.73 * 312.0);
  EXPECT_LT(model->time(bwd).achieved_tflops, fwd_tflops);
}

// A sliding window (model.sliding_window) keeps a band of width w: each row of query tiles has w / tile key tiles
// with a masked edge at both ends, the edge share of a causal attention of length w. So an 8192-token attention with
// a 1024-key window runs at the rate of a 1024-token causal one, well below the 8192-token rate.
TEST(AttentionModel, SlidingWindowRunsAtTheWindowsCausalRate) {
  const auto model = make_roofline_model(test::h100_sxm());
  KernelDesc windowed = test::flash(false, 32, 8192, 8192, 128, true);
  windowed.window = 1024;
  const KernelDesc short_causal = test::flash(false, 32, 1024, 1024, 128, true);
  const KernelDesc long_causal = test::flash(false, 32, 8192, 8192, 128, true);
  EXPECT_DOUBLE_EQ(model->time(windowed).efficiency, model->time(short_causal).efficiency);
  EXPECT_LT(model->time(windowed).efficiency, model->time(long_causal).efficiency);
}

// H100 cuDNN fused attention (FA3 paper figures, arXiv 2407.08608): fwd causal hd128 at 4k = 518 TF; bwd hd128 at 8k =
// 518 TF (the non-causal bwd panel). Both within 3%.
TEST(AttentionModel, H100MatchesCudnnTables) {
  const auto model = make_roofline_model(test::h100_sxm());
  const KernelDesc fwd = test::flash(false, bench_batch_heads(4096, 128), 4096, 4096, 128, true);
  EXPECT_NEAR(model->time(fwd).achieved_tflops / 518.0, 1.0, 0.03);
  const KernelDesc bwd = test::flash(true, bench_batch_heads(8192, 128), 8192, 8192, 128, false);
  EXPECT_NEAR(model->time(bwd).achieved_tflops / 518.0, 1.0, 0.03);
  EXPECT_TRUE(model->time(fwd).compute_bound);
}

// Between measured points the fraction is interpolated: s = 3000 lies between the 2k (484 TF) and
// 4k (518 TF) cuDNN causal hd128 values; hd 96 between hd64 (363) and hd128 (518) at 4k.
TEST(AttentionModel, InterpolatesBetweenMeasuredPoints) {
  const double peak = 989.4;
  const double s3000 = flash_attention_fraction(ArchFamily::Hopper, Precision::BF16, false, 3000, 128, true) * peak;
  EXPECT_GT(s3000, 484.0);
  EXPECT_LT(s3000, 518.0);
  const double hd96 = flash_attention_fraction(ArchFamily::Hopper, Precision::BF16, false, 4096, 96, true) * peak;
  EXPECT_GT(hd96, 363.0);
  EXPECT_LT(hd96, 518.0);
  // Exactly on a measured point the table value comes back: cuDNN non-causal hd256 at 2k = 580 TF.
  EXPECT_NEAR(flash_attention_fraction(ArchFamily::Hopper, Precision::BF16, false, 2048, 256, false) * peak, 580.0,
              1e-9);
}

// Every table shows causal attention slower than non-causal at the same length (the masked tiles
// still cost scheduling), and short sequences slower than long ones.
TEST(AttentionModel, CausalAndShortSequencesAreSlower) {
  for (ArchFamily a : {ArchFamily::Ampere, ArchFamily::Hopper}) {
    for (bool bwd : {false, true}) {
      const double causal = flash_attention_fraction(a, Precision::BF16, bwd, 1024, 128, true);
      const double full = flash_attention_fraction(a, Precision::BF16, bwd, 1024, 128, false);
      EXPECT_LT(causal, full);
      const double short_seq = flash_attention_fraction(a, Precision::BF16, bwd, 512, 128, true);
      EXPECT_LT(short_seq, causal);
      // Below the shortest measurement the fraction keeps falling but stays positive.
      const double tiny = flash_attention_fraction(a, Precision::BF16, bwd, 128, 128, true);
      EXPECT_LT(tiny, short_seq);
      EXPECT_GT(tiny, 0.0);
    }
  }
}

// Blackwell has no per-shape table: FA4/B200 vs FA3/H200 speedups 1.88x-1.95x against a 2.28x peak
// ratio give 0.84 of Hopper's fraction (ml-engineering).
TEST(AttentionModel, BlackwellScalesHopperFractions) {
  const double hopper = flash_attention_fraction(ArchFamily::Hopper, Precision::BF16, false, 8192, 128, true);
  const double blackwell = flash_attention_fraction(ArchFamily::Blackwell, Precision::BF16, false, 8192, 128, true);
  EXPECT_NEAR(blackwell / hopper, 0.84, 1e-12);
  // Absolute speed still rises: 2250 * 0.84 > 989.4.
  const KernelDesc k = test::flash(false, 16, 8192, 8192, 128, true);
  EXPECT_LT(make_roofline_model(test::b200())->time(k).time, make_roofline_model(test::h100_sxm())->time(k).time);
}

// The split keeps the combined rate: 3.5 / R_c = 1 / R_f + 2.5 / R_b, and R_b / R_f = r.
TEST(AttentionModel, CombinedSplitPreservesTheCombinedRate) {
  const double combined = 0.55, r = 0.8;
  const FwdBwdFractions f = split_combined_attention(combined, r);
  EXPECT_NEAR(1.0 / f.fwd + 2.5 / f.bwd, 3.5 / combined, 1e-12);
  EXPECT_NEAR(f.bwd / f.fwd, r, 1e-12);
}

// Context parallelism gives query blocks shorter than the keys (s_q = s/c, s_kv = s): the
// effective length sqrt(s_q * s_kv) sits between the two.
TEST(AttentionModel, ContextParallelShapeUsesGeometricMeanLength) {
  const auto model = make_roofline_model(test::h100_sxm());
  const double cp = model->time(test::flash(false, 16, 4096, 8192, 128, true)).achieved_tflops;
  const double s4k = model->time(test::flash(false, 16, 4096, 4096, 128, true)).achieved_tflops;
  const double s8k = model->time(test::flash(false, 16, 8192, 8192, 128, true)).achieved_tflops;
  EXPECT_GT(cp, s4k);
  EXPECT_LT(cp, s8k);
}

// FP8 attention is priced on the FP8 peak at 0.78 of the BF16 fraction (FA3 FP8 ~1008 TF vs BF16
// 648 TF best, FA3 paper): faster than BF16, by ~1.55x.
TEST(AttentionModel, Fp8AttentionUsesFp8PeakWithLowerFraction) {
  const auto model = make_roofline_model(test::h100_sxm());
  const double bf16 = to_seconds(model->time(test::flash(false, 64, 8192, 8192, 128, false)).time);
  const double fp8 = to_seconds(model->time(test::flash(false, 64, 8192, 8192, 128, false, Precision::FP8)).time);
  EXPECT_NEAR(bf16 / fp8, 2.0 * 0.78, 0.05);
  EXPECT_THROW(
      make_roofline_model(test::a100_80gb())->time(test::flash(false, 64, 8192, 8192, 128, false, Precision::FP8)),
      Error);
}

TEST(AttentionModel, RejectsMissingShape) {
  const auto model = make_roofline_model(test::h100_sxm());
  KernelDesc k = test::flash(false, 16, 4096, 4096, 128, true);
  k.k = 0;  // head dim missing while FLOPs are set
  EXPECT_THROW(model->time(k), Error);
  EXPECT_THROW(flash_attention_fraction(ArchFamily::Hopper, Precision::BF16, false, 0, 128, true), Error);
}

}  // namespace
}  // namespace trainsim
