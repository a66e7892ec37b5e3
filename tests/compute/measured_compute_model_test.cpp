// MeasuredComputeModel: measured times on the target GPU first, then SimAI-CP-Model scaling from the
// scale_from GPU, then the fallback model, with every fallback op recorded (sorted, counted,
// thread-safe). The scaling test takes its peaks from the GPU catalog (data/gpus.yaml).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "compute/compute_model.hpp"
#include "compute/measured_compute_model.hpp"
#include "compute/op_database.hpp"
#include "core/error.hpp"
#include "hardware/gpu_catalog.hpp"
#include "op_database_text.hpp"
#include "test_kernels.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;

const GpuSpec& catalog_gpu(const std::string& name) {
  const GpuSpec* g = GpuCatalog::builtin().find(name);
  if (g == nullptr) throw Error("test: GPU " + name + " is not in the catalog");
  return *g;
}
const GpuSpec& a100() { return catalog_gpu("A100-SXM-80GB"); }
const GpuSpec& h100() { return catalog_gpu("H100-SXM"); }

OpDatabase db_of(const std::string& rows) { return test::op_database_of(rows, "ops.csv"); }

// Measured on the A100:
//   GEMM 8192^3 bf16: FLOPs 2 * 8192^3 = 1.0995e12, bytes 3 * 8192^2 * 2 = 4.027e8 -> 2730.7 FLOP/B;
//   a GEMV-like GEMM 1 x 8192 x 8192: FLOPs 1.342e8, bytes (8192 + 8192^2 + 8192) * 2 = 1.342e8 -> ~1 FLOP/B;
//   a LayerNorm over 64 MiB.
const std::string kA100Rows =
    "A100-SXM-80GB,gemm,bf16,8192,8192,8192,1,0,0,4000\n"
    "A100-SXM-80GB,gemm,bf16,1,8192,8192,1,0,0,70\n"
    "A100-SXM-80GB,layernorm,bf16,0,0,0,1,0,67108864,40\n";

TEST(MeasuredComputeModel, MeasuredOnTheTargetGpu) {
  const auto model = make_measured_model(db_of("H100-SXM,gemm,bf16,8192,12288,4096,1,0,0,1250\n"), h100());
  const KernelDesc k = test::gemm(8192, 12288, 4096);
  const KernelTiming t = model->time(k);
  EXPECT_STREQ(t.source, "measured");
  EXPECT_EQ(t.time, from_microseconds(1250));
  // 2 * 8192 * 12288 * 4096 = 8.246e11 FLOP in 1250 us = 659.7 TFLOP/s, 67% of the dense bf16 peak (989.4; a
  // row above the peak is refused when the database is read: op_database_physics_test.cpp).
  EXPECT_NEAR(t.achieved_tflops, k.flops / 1250e-6 / 1e12, 1e-9);
  EXPECT_NEAR(t.achieved_tflops, 659.7, 0.1);
  // 8.246e11 FLOP / ((8192*4096 + 4096*12288 + 8192*12288) * 2 = 3.691e8 B) = 2234 FLOP/B, above the
  // H100's ridge point 989.4e12 / 3350e9 = 295 FLOP/B.
  EXPECT_TRUE(t.compute_bound);
}

TEST(MeasuredComputeModel, SimaiScalingComputeBoundGemmByFlopsRatio) {
  const auto model = make_measured_model(db_of(kA100Rows), h100(), a100());
  const KernelDesc k = test::gemm(8192, 8192, 8192);
  // A100 ridge point: 312e12 FLOP/s / 2039e9 B/s = 153.0 FLOP/B; the GEMM's 2730.7 FLOP/B is above
  // it: compute-bound, so time x peak_A100 / peak_H100 = 4000 us x 312 / 989.4 = 1261.37 us.
  ASSERT_GT(k.flops / k.bytes, a100().peak_tflops(Precision::BF16) * 1e12 / (a100().hbm_GBps * 1e9));
  EXPECT_TRUE(simai_compute_bound(a100(), k));
  const KernelTiming t = model->time(k);
  EXPECT_STREQ(t.source, "scaled");
  EXPECT_TRUE(t.compute_bound);
  const double expected_us = 4000.0 * a100().peak_tflops(Precision::BF16) / h100().peak_tflops(Precision::BF16);
  EXPECT_NEAR(expected_us, 1261.37, 0.01);  // the catalog's numbers are the ones in the comment
  EXPECT_EQ(t.time, from_microseconds(expected_us));
}

TEST(MeasuredComputeModel, SimaiScalingLayerNormByBandwidthRatio) {
  const auto model = make_measured_model(db_of(kA100Rows), h100(), a100());
  // No FLOPs: memory-bound. time x hbm_A100 / hbm_H100 = 40 us x 2039 / 3350 = 24.346 us.
  const KernelDesc k = test::memory(KernelKind::LayerNorm, 67108864);
  EXPECT_FALSE(simai_compute_bound(a100(), k));
  const KernelTiming t = model->time(k);
  EXPECT_STREQ(t.source, "scaled");
  EXPECT_FALSE(t.compute_bound);
  const double expected_us = 40.0 * a100().hbm_GBps / h100().hbm_GBps;
  EXPECT_NEAR(expected_us, 24.346, 0.001);
  EXPECT_EQ(t.time, from_microseconds(expected_us));
  // A few FLOPs per byte (a real LayerNorm's ~5 per element = 2.5 per byte) stay far below the ridge.
  EXPECT_FALSE(simai_compute_bound(a100(), test::memory(KernelKind::LayerNorm, 67108864, 67108864 * 2.5)));
}

TEST(MeasuredComputeModel, SimaiClassifiesByIntensityNotByKind) {
  const auto model = make_measured_model(db_of(kA100Rows), h100(), a100());
  // The 1 x 8192 x 8192 GEMM does ~1 FLOP per byte, below the A100's 153: memory-bound, so it scales
  // by the HBM ratio: 70 us x 2039 / 3350 = 42.606 us, not by the FLOPS ratio (22.07 us).
  const KernelDesc k = test::gemm(1, 8192, 8192);
  EXPECT_FALSE(simai_compute_bound(a100(), k));
  const KernelTiming t = model->time(k);
  EXPECT_STREQ(t.source, "scaled");
  EXPECT_FALSE(t.compute_bound);
  EXPECT_EQ(t.time, from_microseconds(70.0 * 2039.0 / 3350.0));
}

TEST(MeasuredComputeModel, ScalingUsesTheInterpolatedSourceTime) {
  // Looked up on the A100 first, then scaled: 16384 x 8192 x 8192 is 2x the work of the largest
  // measured point (8192^3, 4000 us), so 8000 us on the A100 (extrapolated at constant throughput),
  // still compute-bound, x 312 / 989.4 = 2522.74 us on the H100.
  const auto model = make_measured_model(db_of(kA100Rows), h100(), a100());
  const KernelTiming t = model->time(test::gemm(16384, 8192, 8192));
  EXPECT_STREQ(t.source, "scaled");
  EXPECT_EQ(t.time, from_microseconds(8000.0 * 312.0 / 989.4));
}

TEST(MeasuredComputeModel, TargetMeasurementWinsOverScaling) {
  const auto model =
      make_measured_model(db_of(kA100Rows + "H100-SXM,layernorm,bf16,0,0,0,1,0,67108864,30\n"), h100(), a100());
  const KernelTiming t = model->time(test::memory(KernelKind::LayerNorm, 67108864));
  EXPECT_STREQ(t.source, "measured");
  EXPECT_EQ(t.time, from_microseconds(30));
  EXPECT_FALSE(t.compute_bound);
  EXPECT_DOUBLE_EQ(t.achieved_tflops, 0.0);  // no FLOPs
}

TEST(MeasuredComputeModel, FallsBackToTheRooflineAndRecordsIt) {
  const auto roofline = make_roofline_model(h100());
  MeasuredComputeModel model(db_of(kA100Rows), h100(), a100(), make_roofline_model(h100()));
  // Groups with no rows on either GPU: fp8 and fp16 GEMMs, a softmax, a causal attention. (Any bf16
  // GEMM would be answered from the A100's bf16 GEMM points, by interpolation or extrapolation.)
  const KernelDesc fp8 = test::gemm(4096, 4096, 4096, Precision::FP8);
  const KernelDesc softmax = test::memory(KernelKind::Softmax, 1 << 20);
  const KernelDesc big = test::gemm(2048, 1024, 512, Precision::FP16);
  const KernelDesc small = test::gemm(1024, 1024, 512, Precision::FP16);
  const KernelDesc fa = test::flash(false, 16, 2048, 2048, 128, true);
  const KernelTiming t = model.time(fp8);
  EXPECT_STREQ(t.source, "roofline");
  EXPECT_EQ(t.time, roofline->time(fp8).time);
  model.time(softmax);
  model.time(big);
  model.time(small);
  model.time(big);
  model.time(fa);
  model.time(test::memory(KernelKind::Memset, 0));  // empty: costs nothing, not a gap to report
  model.time(test::gemm(8192, 8192, 8192));         // scaled, not a fallback

  const auto fb = model.fallbacks();
  // Sorted by kind name (flash_attn_fwd < gemm < softmax), then shape (m: 1024 < 2048 < 4096).
  ASSERT_EQ(fb.size(), 5u);
  EXPECT_EQ(describe(fb[0]), "flash_attn_fwd bf16 m=2048 n=2048 k=128 batch=16 causal");
  EXPECT_EQ(describe(fb[1]), "gemm fp16 m=1024 n=1024 k=512 batch=1");
  EXPECT_EQ(describe(fb[2]), "gemm fp16 m=2048 n=1024 k=512 batch=1");
  EXPECT_EQ(fb[2].count, 2u);
  EXPECT_EQ(describe(fb[3]), "gemm fp8 m=4096 n=4096 k=4096 batch=1");
  EXPECT_EQ(describe(fb[4]), "softmax bf16 bytes=1048576");
  EXPECT_EQ(fb[4].count, 1u);
  const auto counts = model.counts();
  EXPECT_EQ(counts.measured, 0u);
  EXPECT_EQ(counts.scaled, 1u);
  EXPECT_EQ(counts.fallback, 7u);  // the empty memset was priced by the fallback too
}

TEST(MeasuredComputeModel, RecordsFallbacksFromManyThreads) {
  const MeasuredComputeModel model(db_of(kA100Rows), h100(), std::nullopt, make_roofline_model(h100()));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&model, i] {
      for (int j = 0; j < 250; ++j) {
        model.time(test::gemm(1024 * (1 + (i + j) % 2), 1024, 1024));  // two shapes
      }
    });
  }
  for (auto& th : threads) th.join();
  const auto fb = model.fallbacks();
  ASSERT_EQ(fb.size(), 2u);
  EXPECT_EQ(fb[0].m, 1024);
  EXPECT_EQ(fb[1].m, 2048);
  EXPECT_EQ(fb[0].count + fb[1].count, 1000u);
  EXPECT_EQ(fb[0].count, 500u);  // (i + j) even for half of each thread's calls
  EXPECT_EQ(model.counts().fallback, 1000u);
}

TEST(MeasuredComputeModel, WithoutScaleFromOtherGpusRowsAreNotUsed) {
  const auto model = make_measured_model(db_of(kA100Rows), h100());
  EXPECT_STREQ(model->time(test::gemm(8192, 8192, 8192)).source, "roofline");
}

TEST(MeasuredComputeModel, RejectsBadConstruction) {
  // No fallback model is a programming error, not a user's: an internal error.
  EXPECT_THROW(MeasuredComputeModel(db_of(kA100Rows), h100(), std::nullopt, nullptr), InternalError);
  GpuSpec no_bw = h100();
  no_bw.hbm_GBps = 0;
  EXPECT_THROW(MeasuredComputeModel(db_of(kA100Rows), no_bw, std::nullopt, make_roofline_model(h100())), Error);
  // scale_from a GPU the database never measured: named, with the GPUs it has.
  try {
    make_measured_model(db_of(kA100Rows), h100(), catalog_gpu("B200"));
    ADD_FAILURE() << "scale_from without rows was accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("compute.scale_from B200"));
    EXPECT_THAT(e.what(), HasSubstr("ops.csv"));
    EXPECT_THAT(e.what(), HasSubstr("A100-SXM-80GB"));
  }
}

TEST(MeasuredComputeModel, ScalingToAGpuWithoutTheDtypeIsAnError) {
  // fp8 measured on an H100, target A100 (no fp8): the FLOPS ratio does not exist.
  const auto model = make_measured_model(db_of("H100-SXM,gemm,fp8,8192,8192,8192,1,0,0,700\n"), a100(), h100());
  EXPECT_THROW(model->time(test::gemm(8192, 8192, 8192, Precision::FP8)), Error);
}

TEST(MeasuredComputeModel, DescribeNamesDatabaseScalingAndFallback) {
  const auto model = make_measured_model(db_of(kA100Rows), h100(), a100());
  const std::string d = model->describe();
  EXPECT_THAT(d, HasSubstr("ops.csv (3 rows; GPUs: A100-SXM-80GB) for H100-SXM"));
  EXPECT_THAT(d, HasSubstr("scaled SimAI-CP style"));
  EXPECT_THAT(d, HasSubstr("roofline model for H100-SXM"));
}

}  // namespace
}  // namespace trainsim
