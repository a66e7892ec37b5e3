// The roofline's two in-step effects: collectives beside a kernel take SMs and HBM bandwidth
// (interference_slowdown, gpu_left_by), and tensor kernels run at the sustained clock.
#include <gtest/gtest.h>

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

TEST(Interference, ManyWaveGemmSlowsByTheSmShareTaken) {
  const auto m = make_roofline_model(test::h100_sxm());
  const double s = m->interference_slowdown(big_gemm(), CommLoad{24, 0});
  // 132 / 108 = 1.222, give or take the last wave's fill on 108 SMs.
  EXPECT_GT(s, 1.18);
  EXPECT_LT(s, 1.30);
}

TEST(Interference, OneWaveGemmNeedsTwoWavesOnWhatIsLeft) {
  // The measured case (kernels-in-training.md §2.2): a one-wave GEMM beside a 24-CTA all-gather ~2x.
  const auto m = make_roofline_model(test::h100_sxm());
  EXPECT_NEAR(m->interference_slowdown(one_wave_gemm(), CommLoad{24, 0}), 2.0, 0.1);
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

TEST(TensorClock, SustainedOverPeakBasisSlowsTensorKernelsOnly) {
  GpuSpec h = test::h100_sxm();
  const KernelDesc g = big_gemm();
  const KernelDesc norm = memory_kernel(KernelKind::LayerNorm, 512e6, 1e6, Precision::BF16);
  const double gemm_at_peak = roofline_breakdown(h, ArchFamily::Hopper, g).compute_s;
  const double norm_at_peak = roofline_breakdown(h, ArchFamily::Hopper, norm).total_s();
  h.peak_clock_mhz = 1830;
  h.sustained_clock_mhz = 1647;
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper), 0.9);
  const auto b = roofline_breakdown(h, ArchFamily::Hopper, g);
  EXPECT_DOUBLE_EQ(b.clock_factor, 0.9);
  EXPECT_NEAR(b.compute_s, gemm_at_peak / 0.9, 1e-15);
  EXPECT_DOUBLE_EQ(roofline_breakdown(h, ArchFamily::Hopper, norm).total_s(), norm_at_peak);
  EXPECT_NE(make_roofline_model(h)->describe().find("1647 MHz sustained of 1830"), std::string::npos);
}

TEST(TensorClock, NoClocksOrAmdMeansAsCalibrated) {
  GpuSpec h = test::h100_sxm();
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper), 1.0);
  h.peak_clock_mhz = 1830;  // one clock without the other: unknown
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper), 1.0);
  h.sustained_clock_mhz = 2000;  // above the peak basis: never a speed-up
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Hopper), 1.0);
  h.sustained_clock_mhz = 1207;
  EXPECT_DOUBLE_EQ(tensor_clock_factor(h, ArchFamily::Cdna3), 1.0);
}
