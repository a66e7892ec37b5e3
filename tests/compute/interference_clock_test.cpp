// The roofline's two in-step effects: collectives beside a kernel take SMs and HBM bandwidth
// (interference_slowdown, gpu_left_by), and tensor kernels run at the sustained clock.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compute/gemm_efficiency.hpp"
#include "compute/roofline_constants.hpp"
#include "hardware/gpu_catalog.hpp"
#include "compute/roofline_model.hpp"
#include "test_gpus.hpp"
#include "workload/kernels_factory.hpp"

using namespace trainsim;

namespace {

KernelDesc big_gemm() { return gemm(16384, 16384, 8192, Precision::BF16); }

// 132 tiles of 128 x 256: exactly one wave on an H100's 132 SMs.
KernelDesc one_wave_gemm() { return gemm(128 * 12, 256 * 11, 8192, Precision::BF16); }

}  // namespace

TEST(GpuLeftBy, CtasTakeSmsAndTheirShareOfEveryPeak) {
  const GpuSpec h = test::h100_sxm();
  const GpuSpec left = gpu_left_by(h, CommLoad{24, 0});
  EXPECT_EQ(left.sm_count, 108);
  EXPECT_NEAR(*left.bf16_tflops, 989.4 * 108.0 / 132.0, 1e-9);
  EXPECT_NEAR(*left.fp8_tflops, 1978.9 * 108.0 / 132.0, 1e-9);
  EXPECT_NEAR(*left.fp32_tflops, 66.9 * 108.0 / 132.0, 1e-9);
  EXPECT_DOUBLE_EQ(left.hbm_GBps, h.hbm_GBps);
}

TEST(GpuLeftBy, HbmTrafficIsSharedButNeverStarvesTheKernel) {
  const GpuSpec h = test::h100_sxm();
  EXPECT_DOUBLE_EQ(gpu_left_by(h, CommLoad{0, 1000}).hbm_GBps, 2350);
  EXPECT_DOUBLE_EQ(gpu_left_by(h, CommLoad{0, 1e6}).hbm_GBps, 3350 * 0.25);
  EXPECT_EQ(gpu_left_by(h, CommLoad{0, 1000}).sm_count, 132);
  // More CTAs than SMs leave one SM, not zero or a negative count.
  EXPECT_EQ(gpu_left_by(h, CommLoad{500, 0}).sm_count, 1);
}

TEST(Interference, ManyWaveGemmSlowsByTheSmShareTakenAndHoppersByMore) {
  // 132 / 108 = 1.222 on the SMs left, give or take the last wave's fill on 108 SMs; a Hopper GEMM beside another
  // kernel holding SMs runs a further 1.10x slower (measured on an H200, roofline_constants.hpp).
  const double s = make_roofline_model(test::h100_sxm())->interference_slowdown(big_gemm(), CommLoad{24, 0});
  EXPECT_GT(s, 1.18 * roofline::kGemmBesideSmHolderSlowdown);
  EXPECT_LT(s, 1.30 * roofline::kGemmBesideSmHolderSlowdown);
  // Ampere's GEMMs lose their SM share only: 108 / 84 = 1.286.
  const double a = make_roofline_model(test::a100_80gb())->interference_slowdown(big_gemm(), CommLoad{24, 0});
  EXPECT_GT(a, 1.24);
  EXPECT_LT(a, 1.34);
}

// Transformer Engine launches the GEMMs its userbuffers overlap with an SM margin (cuBLAS's SM count target): they
// lose the SMs the userbuffers hold and nothing more.
TEST(Interference, GemmPlannedAroundUserbuffersLosesOnlyTheirSms) {
  const auto m = make_roofline_model(test::h100_sxm());
  const double ub = m->interference_slowdown(big_gemm(), CommLoad{16, 0, 16});
  EXPECT_GT(ub, 132.0 / 116.0 - 0.04);
  EXPECT_LT(ub, 132.0 / 116.0 + 0.04);
  // An NCCL call beside the same userbuffers is not planned for: the whole load costs the extra 1.10.
  EXPECT_NEAR(m->interference_slowdown(big_gemm(), CommLoad{40, 0, 16}) /
                  (m->interference_slowdown(big_gemm(), CommLoad{40, 0, 40})),
              roofline::kGemmBesideSmHolderSlowdown, 1e-3);  // less the fixed per-kernel cost
}

// The H200 measurement behind kGemmBesideSmHolderSlowdown: beside a copy kernel of 16 CTAs (1,449 GB/s of HBM
// traffic) four layer-sized cuBLAS GEMMs took 1.21-1.29x their time alone and FlashAttention-2's forward 1.15x
// (data/measured/H200-2026-11-27/README.md). The SM share alone gives 1.14x to both.
TEST(Interference, HopperGemmsLoseMoreThanTheirSmShareAttentionDoesNot) {
  GpuSpec h200 = test::h100_sxm();
  h200.hbm_GBps = 4800;
  const auto m = make_roofline_model(h200);
  const CommLoad copy16{16, 1449};
  for (const KernelDesc& g : {gemm(8192, 8192, 8192, Precision::BF16), gemm(16384, 12288, 4096, Precision::BF16),
                              gemm(16384, 4096, 4096, Precision::BF16), gemm(8192, 28672, 8192, Precision::BF16)}) {
    const double s = m->interference_slowdown(g, copy16);
    EXPECT_GT(s, 1.21 * 0.95) << g.m << "x" << g.n << "x" << g.k;
    EXPECT_LT(s, 1.29 * 1.05) << g.m << "x" << g.n << "x" << g.k;
  }
  EXPECT_NEAR(m->interference_slowdown(flash_attention_fwd(128, 4096, 4096, 128, true, Precision::BF16), copy16), 1.15,
              0.03);
}

// An independent check (pytorch/pytorch PR #172714, 8x H100, fp16 8192^3 matmul and an all-gather of 64 MiB per
// rank): run one after the other 2.96 ms, overlapped with NCCL's all-gather 2.02 ms, with a copy-engine all-gather
// (no SMs taken) 1.77 ms, so the SMs NCCL holds cost the overlap 1.14x. The matmul alone is the roofline's short-run
// time (the benchmark ran at boost), the all-gather the rest of the sequential time; overlapped, the matmul runs at
// its slowdown while the all-gather (24 CTAs, kernels-in-training.md §2.1) lasts and alone after it.
TEST(Interference, NcclOverlapCostsMoreThanCopyEngineOverlap) {
  const GpuSpec h = test::h100_sxm();
  const auto m = make_roofline_model(h);
  const KernelDesc mm = gemm(8192, 8192, 8192, Precision::FP16);
  const RooflineBreakdown alone = roofline_breakdown(h, ArchFamily::Hopper, mm);
  const double matmul_s = alone.compute_s * alone.clock_factor + alone.overhead_s;
  const double gather_s = 2.96e-3 - matmul_s;
  ASSERT_GT(gather_s, 0.0);
  const auto overlapped = [&](const CommLoad& load) {
    const double slowdown = m->interference_slowdown(mm, load);
    return gather_s + std::max(0.0, matmul_s - gather_s / slowdown);
  };
  const double traffic = 2 * 0.537 * 7.0 / 8.0 / gather_s;  // GB/s of HBM: 512 MiB gathered, read and written
  const double ratio = overlapped(CommLoad{24, traffic}) / overlapped(CommLoad{0, traffic});
  EXPECT_NEAR(ratio, 2.02 / 1.77, 0.04);
}

TEST(Interference, OneWaveGemmNeedsTwoWavesOnWhatIsLeft) {
  // The measured case (NVIDIA developer forum, GEMM tail effect beside ncclAllGather): a one-wave GEMM beside a
  // 24-CTA all-gather "~2x" (a rounded figure): two waves, and Hopper's 1.10 beside another kernel (2.14).
  const auto m = make_roofline_model(test::h100_sxm());
  EXPECT_NEAR(m->interference_slowdown(one_wave_gemm(), CommLoad{24, 0}), 2.0, 0.15);
}

TEST(Interference, MemoryBoundKernelFeelsHbmTrafficNotSms) {
  const auto m = make_roofline_model(test::h100_sxm());
  const KernelDesc norm = memory_kernel(KernelKind::LayerNorm, 512e6, 1e6, Precision::BF16);
  EXPECT_NEAR(m->interference_slowdown(norm, CommLoad{24, 0}), 1.0, 1e-9);
  const double s = m->interference_slowdown(norm, CommLoad{0, 1000});
  EXPECT_GT(s, 1.35);  // 3350 / 2350 = 1.43 on the bandwidth side, less the fixed launch cost
  EXPECT_LT(s, 1.43);
}

TEST(Interference, NoLoadNoSlowdownAndUnknownSmsIgnoreCtas) {
  const auto m = make_roofline_model(test::h100_sxm());
  EXPECT_DOUBLE_EQ(m->interference_slowdown(big_gemm(), CommLoad{}), 1.0);
  GpuSpec unknown = test::h100_sxm();
  unknown.sm_count = 0;
  EXPECT_DOUBLE_EQ(make_roofline_model(unknown)->interference_slowdown(big_gemm(), CommLoad{24, 0}), 1.0);
}

KernelDesc attention_fwd() { return flash_attention_fwd(32, 4096, 4096, 128, true, Precision::BF16); }

TEST(TensorClock, LockedTablesRunAtSustainedOverPeakBasis) {
  GpuSpec h = test::h100_sxm();
  const double at_peak = roofline_breakdown(h, ArchFamily::Hopper, attention_fwd()).compute_s;
  h.peak_clock_mhz = 1830;
  h.sustained_clock_mhz = 1647;
  // cuDNN (auto on Hopper) comes from the FA3 paper's tables, locked at 1830 MHz.
  // Throughput ~ clock^0.67 (measured on an H200): 0.9^0.67 = 0.9319.
  const double expected = std::pow(0.9, roofline::kClockThroughputElasticity);
  EXPECT_NEAR(expected, 0.9319, 1e-3);
  const auto b = roofline_breakdown(h, ArchFamily::Hopper, attention_fwd());
  EXPECT_DOUBLE_EQ(b.clock_factor, expected);
  EXPECT_NEAR(b.compute_s, at_peak / expected, 1e-15);
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, attention_fwd(), AttentionKernel::Flash3).clock_factor,
                   expected);
  EXPECT_NE(make_roofline_model(h)->describe().find("1647 MHz sustained of 1830"), std::string::npos);
}

TEST(TensorClock, ShortRunTablesLoseOnlyTheLongRunShare) {
  GpuSpec h = test::h100_sxm();
  h.peak_clock_mhz = 1830;
  h.sustained_clock_mhz = 1647;
  // GEMM plateaus and the FlashAttention repository's FA2 figures ran under the power cap already.
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, big_gemm()).clock_factor, 0.96);
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, attention_fwd(), AttentionKernel::Flash2).clock_factor,
                   0.96);
  // Memory-bound kernels keep the memory clock: no factor at all.
  const KernelDesc norm = memory_kernel(KernelKind::LayerNorm, 512e6, 1e6, Precision::BF16);
  GpuSpec plain = test::h100_sxm();
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, norm).total_s(),
                   roofline_breakdown(plain, ArchFamily::Hopper, norm).total_s());
  // A100's FA2 table is a short-run one too.
  GpuSpec a = test::a100_80gb();
  a.peak_clock_mhz = 1410;
  a.sustained_clock_mhz = 1200;
  EXPECT_DOUBLE_EQ(roofline_breakdown(a, ArchFamily::Ampere, attention_fwd()).clock_factor, 0.96);
}

// Where the catalog knows the boost clock (Hopper: measured on an H200), short-run tables ran at it and a
// step runs them at (sustained / boost)^0.67: 1470 / 1980 MHz -> 0.819, the measured 660 / 807 TF.
TEST(TensorClock, ShortRunTablesRunAtSustainedOverBoostWhereBoostIsKnown) {
  GpuSpec h = test::h100_sxm();
  h.peak_clock_mhz = 1830;
  h.sustained_clock_mhz = 1470;
  h.boost_clock_mhz = 1980;
  const double f = roofline_breakdown(h, ArchFamily::Hopper, big_gemm()).clock_factor;
  EXPECT_NEAR(f, 660.0 / 807.0, 0.005);
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, attention_fwd(), AttentionKernel::Flash2).clock_factor, f);
  // The locked FA3-paper tables go from the 1830 MHz basis, not from the boost: a smaller loss.
  EXPECT_NEAR(roofline_breakdown(h, ArchFamily::Hopper, attention_fwd()).clock_factor,
              std::pow(1470.0 / 1830.0, roofline::kClockThroughputElasticity), 1e-12);
  EXPECT_GT(roofline_breakdown(h, ArchFamily::Hopper, attention_fwd()).clock_factor, f);
  EXPECT_NE(make_roofline_model(h)->describe().find("run at the 1980 MHz boost"), std::string::npos);
  // A boost equal to the sustained clock: the part never slows down, the tables stand as measured.
  h.boost_clock_mhz = 1470;
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, big_gemm()).clock_factor, 1.0);
}

// The catalog's Hopper parts carry the clocks measured on an H200, and so their big GEMMs run between
// the throughput measured for GEMMs alone under the power cap (660 TF) and a short run's (807 TF): in
// a training step's mix the clock holds 1580 MHz, above the 1470 of GEMMs alone.
TEST(TensorClock, CatalogHopperGemmRunsBetweenSustainedAndShortRunThroughput) {
  for (const char* id : {"H100-SXM", "H200", "H800-SXM"}) {
    const GpuSpec& g = *GpuCatalog::builtin().find(id);
    const KernelDesc k = big_gemm();
    const auto b = roofline_breakdown(g, ArchFamily::Hopper, k);
    const double tflops = k.flops / b.compute_s / 1e12;
    EXPECT_GT(tflops, 660.0) << id;
    EXPECT_LT(tflops, 0.95 * 807.0) << id;
    EXPECT_NEAR(b.clock_factor, 0.86, 0.01) << id;
  }
}

TEST(TensorClock, NoClocksOrAmdMeansLockedTablesAsCalibrated) {
  GpuSpec h = test::h100_sxm();
  const auto locked = CalibrationClock::LockedAtPeakBasis;
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper, locked), 1.0);
  h.peak_clock_mhz = 1830;  // one clock without the other: unknown
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper, locked), 1.0);
  h.sustained_clock_mhz = 2000;  // above the peak basis: never a speed-up
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper, locked), 1.0);
  h.sustained_clock_mhz = 1207;
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Cdna3, locked), 1.0);
  EXPECT_EQ(attention_calibration_clock(ArchFamily::Cdna3, AttentionKernel::Auto), CalibrationClock::ShortRun);
  EXPECT_EQ(attention_calibration_clock(ArchFamily::Blackwell, AttentionKernel::Auto), locked);
}

TEST(TensorClock, APowerLimitSlowsTensorKernelsByItsClockAndLeavesMemoryBoundOnes) {
  GpuSpec h = test::h100_sxm();
  h.peak_clock_mhz = 1830;
  h.sustained_clock_mhz = 1580;
  h.boost_clock_mhz = 1980;
  h.power_w = 700;
  const GpuSpec rated = h;
  h.power_limit_w = 500;
  h.power_limited_clock_mhz = 1264;  // 0.8 of the sustained clock
  const double slower = std::pow(0.8, roofline::kClockThroughputElasticity);
  for (const CalibrationClock c : {CalibrationClock::LockedAtPeakBasis, CalibrationClock::ShortRun})
    EXPECT_NEAR(tensor_clock_factor(h, ArchFamily::Hopper, c),
                tensor_clock_factor(rated, ArchFamily::Hopper, c) * slower, 1e-12);
  // Tables without a boost clock, and AMD's measured at the held clock, lose the limit's share too.
  GpuSpec no_boost = h;
  no_boost.boost_clock_mhz = 0;
  EXPECT_NEAR(tensor_clock_factor(no_boost, ArchFamily::Hopper, CalibrationClock::ShortRun),
              roofline::kLongRunClockShare * slower, 1e-12);
  EXPECT_NEAR(tensor_clock_factor(h, ArchFamily::Cdna3, CalibrationClock::LockedAtPeakBasis), slower, 1e-12);
  EXPECT_NEAR(roofline_breakdown(h, ArchFamily::Hopper, big_gemm()).compute_s,
              roofline_breakdown(rated, ArchFamily::Hopper, big_gemm()).compute_s / slower, 1e-12);
  // HBM keeps its clock: a memory-bound kernel takes as long as at the rated power.
  const KernelDesc norm = memory_kernel(KernelKind::LayerNorm, 512e6, 1e6, Precision::BF16);
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, norm).total_s(),
                   roofline_breakdown(rated, ArchFamily::Hopper, norm).total_s());
  EXPECT_NE(
      make_roofline_model(h)->describe().find("1264 MHz at the 500 W power limit (1580 sustained at the rated 700 W)"),
      std::string::npos)
      << make_roofline_model(h)->describe();
}

TEST(SlowestGpu, ExpectedMinimumOfTheSkuSpread) {
  EXPECT_DOUBLE_EQ(slowest_gpu_factor(1), 1.0);
  // sigma = 0.05 / 2.847; E[min of 8] ~ -1.42 sigma, of 1,024 ~ -3.2 sigma.
  EXPECT_NEAR(slowest_gpu_factor(8), 1.0 - 0.01756 * 1.42, 0.002);
  EXPECT_NEAR(slowest_gpu_factor(1024), 1.0 - 0.01756 * 3.2, 0.003);
  double last = 1.0;
  for (std::int64_t n : {2, 8, 64, 1024, 16384, 131072}) {
    EXPECT_LT(slowest_gpu_factor(n), last) << n;
    last = slowest_gpu_factor(n);
  }
  EXPECT_GT(last, 0.9);
}

TEST(SlowestGpu, TensorKernelsOfAJobRunAtItsPace) {
  const auto one = make_roofline_model(test::h100_sxm(), AttentionKernel::Auto, 1);
  const auto job = make_roofline_model(test::h100_sxm(), AttentionKernel::Auto, 1024);
  const KernelDesc g = gemm(16384, 16384, 8192, Precision::BF16);
  const double overhead = 5e-6;
  const double t1 = to_seconds(one->time(g).time) - overhead, tn = to_seconds(job->time(g).time) - overhead;
  EXPECT_NEAR(tn / t1, 1.0 / slowest_gpu_factor(1024), 1e-6);
  EXPECT_NEAR(job->time(g).clock_factor, one->time(g).clock_factor * slowest_gpu_factor(1024), 1e-12);
  const KernelDesc norm = memory_kernel(KernelKind::LayerNorm, 512e6, 1e6, Precision::BF16);
  EXPECT_EQ(one->time(norm).time, job->time(norm).time);
  EXPECT_NE(job->describe().find("slowest of 1024 GPUs"), std::string::npos);
}

TEST(GemmWaves, TileChosenForTheWholeGpuRunsInWavesOfTheSmsLeft) {
  // 132 tiles of 128 x 256: one wave on 132 SMs; on 108 SMs the same grid takes two waves.
  EXPECT_DOUBLE_EQ(gemm_wave_factor(1536, 2816, 1, 132), 1.0);
  EXPECT_DOUBLE_EQ(gemm_wave_factor(1536, 2816, 1, 132, 108), 132.0 / 216.0);
  // 286 tiles of 128 x 128 fill 3 waves of 132 best (286/396); on 108 SMs also 3 waves: 286/324.
  EXPECT_NEAR(gemm_wave_factor(1664, 2816, 1, 132, 108), 286.0 / 324.0, 1e-12);
  EXPECT_DOUBLE_EQ(gemm_wave_factor(1664, 2816, 1, 132, 132), gemm_wave_factor(1664, 2816, 1, 132));
}
