// A measured row faster than its GPU can run (above the dense peak, or moving bytes faster than HBM) is refused
// with its file and line: a ms/us slip would otherwise make every kernel priced from it impossibly fast.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "compute/op_database.hpp"
#include "compute/op_database_physics.hpp"
#include "core/error.hpp"
#include "op_database_text.hpp"
#include "test_gpus.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using test::kOpDatabaseHeader;

// What parsing `rows` under the header says ("" when it reads them).
std::string rows_error(const std::string& rows) {
  return test::op_database_parse_error(std::string(kOpDatabaseHeader) + rows);
}

// 2 * 8192 * 12288 * 4096 = 8.246e11 FLOP: 1250 us is 660 TFLOP/s (a real H100 GEMM), 81.25 us would be 10149
// TFLOP/s, ten times H100-SXM's 989.4 dense bf16 peak (the catalog's, checked when the file is read).
TEST(OpDatabasePhysics, GemmFasterThanThePeakIsRefusedWithItsLine) {
  const std::string ok = "H100-SXM,gemm,bf16,8192,12288,4096,1,0,0,1250\n";
  EXPECT_EQ(rows_error(ok), "");
  const std::string e = rows_error(ok + "H100-SXM,gemm,bf16,8192,8192,4096,1,0,0,54.2\n");
  EXPECT_THAT(e, StartsWith("db.csv:3: "));
  EXPECT_THAT(e, HasSubstr("above H100-SXM's dense bf16 peak of 989.4 TFLOP/s"));
  EXPECT_THAT(e, HasSubstr("is time_us in microseconds"));
}

// Fused attention counts its FLOPs as the lookups do (4*b*m*n*k forward, halved when causal).
TEST(OpDatabasePhysics, AttentionIsHeldToThePeakToo) {
  // 4 * 32 * 4096 * 4096 * 128 / 2 = 1.374e11 FLOP causal: 50 us would be 2749 TFLOP/s.
  EXPECT_THAT(rows_error("H100-SXM,flash_attn_fwd,bf16,4096,4096,128,32,1,0,50\n"),
              HasSubstr("db.csv:2: flash_attn_fwd"));
  EXPECT_EQ(rows_error("H100-SXM,flash_attn_fwd,bf16,4096,4096,128,32,1,0,400\n"), "");  // 344 TFLOP/s
}

// layernorm of 64 MiB: 45.2 us is 1485 GB/s (fine on 3350 GB/s HBM); 4.52 us would be 14848 GB/s.
TEST(OpDatabasePhysics, MemoryBoundRowFasterThanHbmIsRefused) {
  EXPECT_EQ(rows_error("H100-SXM,layernorm,bf16,0,0,0,1,0,67108864,45.2\n"), "");
  const std::string e = rows_error("H100-SXM,layernorm,bf16,0,0,0,1,0,67108864,4.52\n");
  EXPECT_THAT(e, StartsWith("db.csv:2: "));
  EXPECT_THAT(e, HasSubstr("above H100-SXM's HBM bandwidth of 3350 GB/s"));
}

// An fp32 GEMM may run on TF32 tensor cores: it is held to the larger of the two peaks (A100: 19.5 / 156).
TEST(OpDatabasePhysics, Fp32RowsMayUseTf32TensorCores) {
  const GpuSpec a100 = test::a100_80gb();
  OpRecord r;
  r.kind = KernelKind::Gemm;
  r.dtype = Precision::FP32;
  r.m = r.n = r.k = 4096;  // 1.374e11 FLOP
  r.time_us = 1374.4;      // 100 TFLOP/s: above fp32's 19.5, below tf32's 156
  EXPECT_FALSE(beyond_peak(r, a100).has_value());
  r.time_us = 687.2;  // 200 TFLOP/s
  ASSERT_TRUE(beyond_peak(r, a100).has_value());
  EXPECT_THAT(*beyond_peak(r, a100), HasSubstr("dense fp32 peak of 156 TFLOP/s"));
}

// A GPU the catalog does not know (a scenario's cluster.gpu_spec) is checked against the scenario's description.
TEST(OpDatabasePhysics, RowsOfAnUnknownGpuAreCheckedAgainstItsDescription) {
  const std::string rows =
      std::string(kOpDatabaseHeader) + "MyGPU,gemm,bf16,4096,4096,4096,1,0,0,100\n";  // 1374 TFLOP/s
  const OpDatabase db = OpDatabase::parse(rows, "db.csv");  // not in the catalog: nothing to compare with yet
  GpuSpec mine = test::h100_sxm();
  mine.name = "MyGPU";
  try {
    check_rows_within_peak(db, "MyGPU", mine);
    FAIL() << "expected an Error";
  } catch (const Error& e) { EXPECT_THAT(std::string(e.what()), StartsWith("db.csv:2: gemm bf16")); }
  mine.bf16_tflops = 2000;
  EXPECT_NO_THROW(check_rows_within_peak(db, "MyGPU", mine));
}

}  // namespace
}  // namespace trainsim
