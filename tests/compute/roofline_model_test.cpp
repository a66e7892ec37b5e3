// The ComputeModel interface of the roofline: input checks, timing fields, description and the
// choice of calibration curves per GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "compute/arch_family.hpp"
#include "compute/compute_model.hpp"
#include "compute/roofline_constants.hpp"
#include "compute/roofline_model.hpp"
#include "core/error.hpp"
#include "test_gpus.hpp"
#include "test_kernels.hpp"

namespace trainsim {
namespace {

TEST(RooflineModel, RejectsBadKernels) {
  const auto model = make_roofline_model(test::h100_sxm());
  KernelDesc k = test::gemm(1024, 1024, 1024);
  k.flops = -1;
  EXPECT_THROW(model->time(k), Error);
  k = test::gemm(1024, 1024, 1024);
  k.bytes = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(model->time(k), Error);
  k = test::gemm(1024, 1024, 1024);
  k.n = 0;  // FLOPs without a shape
  EXPECT_THROW(model->time(k), Error);
  k = test::memory(KernelKind::LayerNorm, std::numeric_limits<double>::infinity());
  EXPECT_THROW(model->time(k), Error);
}

TEST(RooflineModel, RejectsGpuWithoutBandwidth) {
  GpuSpec g = test::h100_sxm();
  g.hbm_GBps = 0;
  EXPECT_THROW(make_roofline_model(g), Error);
  g = test::h100_sxm();
  g.sm_count = -1;
  EXPECT_THROW(make_roofline_model(g), Error);
}

// An FP8 request on a hand-written spec without an fp8 peak names the GPU in the error.
TEST(RooflineModel, MissingPrecisionErrorNamesTheGpu) {
  GpuSpec g = test::h100_sxm();
  g.name = "custom-accel";
  g.fp8_tflops.reset();
  const auto model = make_roofline_model(g);
  try {
    model->time(test::gemm(4096, 4096, 4096, Precision::FP8));
    FAIL() << "expected an Error";
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("custom-accel"), std::string::npos) << e.what(); }
}

// Nothing to do, nothing launched.
TEST(RooflineModel, EmptyKernelTakesNoTime) {
  const auto model = make_roofline_model(test::h100_sxm());
  KernelDesc k;
  k.kind = KernelKind::Elementwise;
  EXPECT_EQ(model->time(k).time, 0);
  EXPECT_EQ(model->time(k).achieved_tflops, 0.0);
}

// achieved_tflops is flops / time; the time equals the breakdown max(compute, memory) + overhead.
TEST(RooflineModel, TimingFieldsAreConsistent) {
  const GpuSpec gpu = test::h100_sxm();
  const auto model = make_roofline_model(gpu);
  const KernelDesc k = test::gemm(4096, 8192, 2048);
  const KernelTiming t = model->time(k);
  EXPECT_NEAR(t.achieved_tflops / (k.flops / to_seconds(t.time) / 1e12), 1.0, 1e-12);
  // The breakdown is in unrounded seconds; SimTime rounds to the picosecond.
  const RooflineBreakdown b = roofline_breakdown(gpu, classify_arch(gpu), k);
  EXPECT_NEAR(to_seconds(t.time), b.total_s(), 1e-12);  // 1 ps
  EXPECT_STREQ(t.source, "roofline");
}

// Which side of the roofline decides: a big square GEMM (arithmetic intensity ~2700 FLOP/B) is
// compute-bound; a matrix-vector product (m = 1, ~1 FLOP/B, far below H100's ridge of ~300) is
// memory-bound and runs at about bytes / bandwidth.
TEST(RooflineModel, ReportsTheBindingSide) {
  const auto model = make_roofline_model(test::h100_sxm());
  EXPECT_TRUE(model->time(test::gemm(8192, 8192, 8192)).compute_bound);
  const KernelDesc gemv = test::gemm(1, 16384, 16384);
  const KernelTiming t = model->time(gemv);
  EXPECT_FALSE(t.compute_bound);
  EXPECT_NEAR(to_microseconds(t.time), gemv.bytes / (3.35e12 * 0.9) * 1e6 + 0.4 + 5.0, 1.0);
}

TEST(RooflineModel, DescribeNamesGpuAndCurves) {
  const std::string d = make_roofline_model(test::b200())->describe();
  EXPECT_NE(d.find("B200-HGX"), std::string::npos) << d;
  EXPECT_NE(d.find("blackwell"), std::string::npos) << d;
  EXPECT_NE(d.find(fmt::format("bf16 {:.2f}", roofline::kPlateauBlackwell16)), std::string::npos) << d;
}

// The catalog's architecture picks the curves; a hand-written spec without one falls back to
// sm_version, then vendor, then Hopper.
TEST(RooflineModel, ClassifiesArchitectures) {
  EXPECT_EQ(classify_arch(test::a100_80gb()), ArchFamily::Ampere);
  EXPECT_EQ(classify_arch(test::h100_sxm()), ArchFamily::Hopper);
  EXPECT_EQ(classify_arch(test::b200()), ArchFamily::Blackwell);
  EXPECT_EQ(classify_arch(test::mi300x()), ArchFamily::Cdna3);
  GpuSpec g;
  g.sm_version = 80;
  EXPECT_EQ(classify_arch(g), ArchFamily::Ampere);
  g.sm_version = 0;
  g.vendor = "AMD";
  EXPECT_EQ(classify_arch(g), ArchFamily::Cdna3);
  g.vendor = "";
  EXPECT_EQ(classify_arch(g), ArchFamily::Hopper);
  g.architecture = "CDNA2";
  EXPECT_EQ(classify_arch(g), ArchFamily::Cdna2);
}

// A scenario's gpu_spec may give only peaks and bandwidth (no SM count, no architecture): the
// model still prices every kind with Hopper curves and no wave quantisation.
TEST(RooflineModel, MinimalHandWrittenSpecWorks) {
  GpuSpec g;
  g.name = "my-accelerator";
  g.bf16_tflops = 500;
  g.hbm_GBps = 2000;
  const auto model = make_roofline_model(g);
  const KernelTiming t = model->time(test::gemm(16384, 16384, 16384));
  // Hopper plateau at the long-run clock share, shape factors ~1.
  EXPECT_NEAR(t.achieved_tflops / 500.0, 0.80 * roofline::kLongRunClockShare, 0.02);
  EXPECT_GT(model->time(test::flash(true, 32, 4096, 4096, 128, true)).time, 0);
  // Memory-bound kinds without an fp32 peak simply have no compute side.
  EXPECT_FALSE(model->time(test::memory(KernelKind::LayerNorm, 1e6, 1e6)).compute_bound);
}

}  // namespace
}  // namespace trainsim
