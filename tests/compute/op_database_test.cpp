// The measured op database: the CSV format (docs/op-database.md), every way a row can be malformed
// (each named with its line), and the lookup rules: exact hit, log-log interpolation between the two
// neighbours, constant-throughput extrapolation, same-aspect GEMM points, equal-work points merged,
// aliases, and no answer when the group has no points.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>

#include "compute/op_database.hpp"
#include "core/error.hpp"
#include "op_database_text.hpp"
#include "test_kernels.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

using test::kOpDatabaseHeader;
using test::op_database_of;
using test::op_database_parse_error;

TEST(OpDatabaseParse, ReadsTheDocumentedExample) {
  const OpDatabase db = OpDatabase::parse(
      "# trainsim op database v1\n"
      "\n"
      "gpu,op,dtype,m,n,k,batch,causal,bytes,time_us\n"
      "H100-SXM,gemm,bf16,8192,12288,4096,1,0,0,1250\n"
      "# a comment between rows\n"
      "H100-SXM,flash_attn_fwd,bf16,4096,4096,128,32,1,0,1234.0\r\n"  // CRLF files too
      "H100-SXM,layernorm,bf16,0,0,0,1,0,67108864,45.2\n",
      "db.csv");
  ASSERT_EQ(db.records().size(), 3u);
  const OpRecord& g = db.records()[0];
  EXPECT_EQ(g.gpu, "H100-SXM");
  EXPECT_EQ(g.kind, KernelKind::Gemm);
  EXPECT_EQ(g.dtype, Precision::BF16);
  EXPECT_EQ(g.m, 8192);
  EXPECT_EQ(g.n, 12288);
  EXPECT_EQ(g.k, 4096);
  EXPECT_EQ(g.batch, 1);
  EXPECT_DOUBLE_EQ(g.time_us, 1250.0);
  EXPECT_EQ(g.line, 4);
  const OpRecord& fa = db.records()[1];
  EXPECT_EQ(fa.kind, KernelKind::FlashAttnFwd);
  EXPECT_TRUE(fa.causal);
  EXPECT_EQ(fa.batch, 32);
  EXPECT_EQ(fa.line, 6);
  const OpRecord& ln = db.records()[2];
  EXPECT_EQ(ln.kind, KernelKind::LayerNorm);
  EXPECT_DOUBLE_EQ(ln.bytes, 67108864.0);
  EXPECT_DOUBLE_EQ(ln.time_us, 45.2);
  EXPECT_EQ(db.path(), "db.csv");
  EXPECT_EQ(db.gpus(), std::vector<std::string>{"H100-SXM"});
  EXPECT_TRUE(db.has_gpu("H100-SXM"));
  EXPECT_FALSE(db.has_gpu("h100-sxm"));  // names are matched exactly
}

TEST(OpDatabaseParse, ResolvesAliases) {
  const OpDatabase db = op_database_of(
      "MI300X,rmsnorm,bf16,0,0,0,1,0,1048576,9\n"
      "MI300X,grouped_gemm,bf16,2048,1408,2048,8,0,0,300\n"
      "MI300X,attention_unfused,fp16,2048,2048,128,64,0,0,700\n");
  EXPECT_EQ(db.records()[0].kind, KernelKind::LayerNorm);
  EXPECT_EQ(db.records()[1].kind, KernelKind::Gemm);
  EXPECT_EQ(db.records()[1].batch, 8);
  EXPECT_EQ(db.records()[2].kind, KernelKind::AttnScoreGemm);
  EXPECT_EQ(db.records()[2].dtype, Precision::FP16);
}

TEST(OpDatabaseParse, ToleratesSpacesAroundFields) {
  const OpDatabase db = OpDatabase::parse(
      "gpu, op, dtype, m, n, k, batch, causal, bytes, time_us\n"
      " H100-SXM , gemm , fp8 , 128 , 256 , 512 , 1 , 0 , 0 , 7.5 \n",
      "db.csv");
  ASSERT_EQ(db.records().size(), 1u);
  EXPECT_EQ(db.records()[0].gpu, "H100-SXM");
  EXPECT_EQ(db.records()[0].dtype, Precision::FP8);
  EXPECT_EQ(db.records()[0].k, 512);
}

struct BadCase {
  const char* what;
  std::string text;
  std::string expected;  // the whole message starts with this
};

TEST(OpDatabaseParse, RejectsEveryMalformedRowWithItsLine) {
  const std::string h = kOpDatabaseHeader;                                // line 1
  const std::string ok = "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,50\n";  // line 2 in the cases below
  const BadCase cases[] = {
      {"too few columns", h + ok + "H100-SXM,gemm,bf16,1024,1024,1024,1,0,50\n",
       "db.csv:3: expected 10 comma-separated fields"},
      {"too many columns", h + "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,50,7\n",
       "db.csv:2: expected 10 comma-separated fields"},
      {"unknown op", h + ok + "H100-SXM,gemmm,bf16,1024,1024,1024,1,0,0,50\n",
       "db.csv:3: unknown op 'gemmm' (did you mean 'gemm'?)"},
      {"unknown dtype", h + "H100-SXM,gemm,bf17,1024,1024,1024,1,0,0,50\n",
       "db.csv:2: unknown dtype 'bf17' (did you mean 'bf16'?)"},
      {"non-numeric m", h + "H100-SXM,gemm,bf16,lots,1024,1024,1,0,0,50\n", "db.csv:2: m 'lots' is not an integer"},
      {"fractional k", h + "H100-SXM,gemm,bf16,1024,1024,10.5,1,0,0,50\n", "db.csv:2: k '10.5' is not an integer"},
      {"empty batch", h + "H100-SXM,gemm,bf16,1024,1024,1024,,0,0,50\n", "db.csv:2: batch '' is not an integer"},
      {"negative n", h + "H100-SXM,gemm,bf16,1024,-5,1024,1,0,0,50\n", "db.csv:2: n must be >= 0, got -5"},
      {"huge m", h + "H100-SXM,gemm,bf16,99999999999999999999,1,1,1,0,0,50\n",
       "db.csv:2: m '99999999999999999999' is out of range"},
      {"causal 2", h + "H100-SXM,flash_attn_fwd,bf16,1024,1024,128,8,2,0,50\n",
       "db.csv:2: causal must be 0 or 1, got 2"},
      {"negative bytes", h + "H100-SXM,softmax,bf16,0,0,0,1,0,-4096,50\n", "db.csv:2: bytes must be >= 0, got -4096"},
      {"non-numeric bytes", h + "H100-SXM,softmax,bf16,0,0,0,1,0,4k,50\n",
       "db.csv:2: bytes '4k' is not a finite number"},
      {"zero time", h + ok + ok.substr(0, ok.size() - 3) + "0\n", "db.csv:3: time_us must be > 0, got 0"},
      {"negative time", h + "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,-3\n", "db.csv:2: time_us must be > 0, got -3"},
      {"non-numeric time", h + "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,fast\n",
       "db.csv:2: time_us 'fast' is not a finite number"},
      {"nan time", h + "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,nan\n",
       "db.csv:2: time_us 'nan' is not a finite number"},
      {"empty gpu", h + ",gemm,bf16,1024,1024,1024,1,0,0,50\n", "db.csv:2: gpu is empty"},
      {"gemm without k", h + "H100-SXM,gemm,bf16,1024,1024,0,1,0,0,50\n", "db.csv:2: gemm needs m, n, k and batch > 0"},
      {"attention without batch", h + "H100-SXM,flash_attn_bwd,bf16,1024,1024,128,0,1,0,50\n",
       "db.csv:2: flash_attn_bwd needs m, n, k and batch > 0"},
      {"layernorm without bytes", h + "H100-SXM,layernorm,bf16,0,0,0,1,0,0,50\n",
       "db.csv:2: layernorm is memory-bound and needs bytes > 0"},
      {"duplicate row", h + ok + "# same kernel again\n" + ok, "db.csv:4: duplicate of line 2"},
      {"alias duplicates its op",
       h + "H100-SXM,layernorm,bf16,0,0,0,1,0,4096,5\nH100-SXM,rmsnorm,bf16,0,0,0,1,0,4096,6\n",
       "db.csv:3: duplicate of line 2"},
      {"wrong header", "# v1\ngpu,op,dtype,m,n,k,batch,bytes,time_us\n" + ok, "db.csv:2: expected the header row"},
      {"rows before the header", ok + h, "db.csv:1: expected the header row"},
      {"no header at all", "# nothing here\n\n", "db.csv: no header row"},
      {"header only", "# v1\n" + h, "db.csv: the op database has a header but no measured rows"},
  };
  for (const BadCase& c : cases) { EXPECT_THAT(op_database_parse_error(c.text), StartsWith(c.expected)) << c.what; }
}

TEST(OpDatabaseLoad, ReadsAFileAndNamesAMissingOne) {
  const std::string path = ::testing::TempDir() + "op_database_test.csv";
  {
    std::ofstream out(path);
    out << kOpDatabaseHeader << "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,50\n"
        << "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,60\n";
  }
  // The message carries the real path, so the user knows which file to fix.
  try {
    OpDatabase::load(path);
    ADD_FAILURE() << "a duplicate row was accepted";
  } catch (const Error& e) { EXPECT_THAT(e.what(), StartsWith(path + ":3: duplicate of line 2")); }
  {
    std::ofstream out(path);
    out << kOpDatabaseHeader << "H100-SXM,gemm,bf16,1024,1024,1024,1,0,0,50\n";
  }
  EXPECT_EQ(OpDatabase::load(path).records().size(), 1u);
  std::remove(path.c_str());
  EXPECT_THROW(
      {
        try {
          OpDatabase::load(path);
        } catch (const Error& e) {
          EXPECT_THAT(e.what(), HasSubstr(path + ": cannot open"));
          throw;
        }
      },
      Error);
}

TEST(OpDatabaseWork, FollowsTheKernelFlopConventions) {
  // gemm 2*m*n*k*batch = 2*8*4*2*3 = 384
  EXPECT_DOUBLE_EQ(op_work(KernelKind::Gemm, 8, 4, 2, 3, false, 0), 384.0);
  // flash forward 4*batch*m*n*k = 4*2*8*8*4 = 2048, causal half 1024; backward 2.5x: 5120, 2560
  EXPECT_DOUBLE_EQ(op_work(KernelKind::FlashAttnFwd, 8, 8, 4, 2, false, 0), 2048.0);
  EXPECT_DOUBLE_EQ(op_work(KernelKind::FlashAttnFwd, 8, 8, 4, 2, true, 0), 1024.0);
  EXPECT_DOUBLE_EQ(op_work(KernelKind::FlashAttnBwd, 8, 8, 4, 2, false, 0), 5120.0);
  EXPECT_DOUBLE_EQ(op_work(KernelKind::FlashAttnBwd, 8, 8, 4, 2, true, 0), 2560.0);
  // memory-bound: the bytes; no shape, no work
  EXPECT_DOUBLE_EQ(op_work(KernelKind::Softmax, 0, 0, 0, 1, false, 4096), 4096.0);
  EXPECT_DOUBLE_EQ(op_work(KernelKind::Gemm, 8, 0, 2, 3, false, 0), 0.0);
  // The same numbers as the KernelDesc builders' FLOPs.
  const KernelDesc fa = test::flash(true, 32, 4096, 4096, 128, true);
  EXPECT_DOUBLE_EQ(op_work(fa), fa.flops);
  const KernelDesc g = test::gemm(8192, 12288, 4096, Precision::BF16, 4);
  EXPECT_DOUBLE_EQ(op_work(g), g.flops);
}

TEST(OpDatabaseLookup, ExactShapeGivesItsTime) {
  const OpDatabase db = op_database_of(
      "H100-SXM,gemm,bf16,8192,12288,4096,1,0,0,1250\n"
      "H100-SXM,gemm,bf16,4096,12288,4096,1,0,0,420\n");
  const auto hit = db.lookup("H100-SXM", test::gemm(8192, 12288, 4096));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->rule, LookupRule::Exact);
  EXPECT_DOUBLE_EQ(hit->time_s, 1250e-6);
  EXPECT_DOUBLE_EQ(*db.time_s("H100-SXM", test::gemm(4096, 12288, 4096)), 420e-6);
}

// Two same-aspect points (n = k = 4096):
//   A: m = 1024, work W = 2*1024*4096*4096 = 34,359,738,368 FLOP, 100 us
//   B: m = 4096, work 4W,                                          300 us
const std::string kTwoGemms =
    "H100-SXM,gemm,bf16,1024,4096,4096,1,0,0,100\n"
    "H100-SXM,gemm,bf16,4096,4096,4096,1,0,0,300\n";

TEST(OpDatabaseLookup, InterpolatesLogTimeInLogWork) {
  const OpDatabase db = op_database_of(kTwoGemms);
  // m = 2048: work 2W, f = ln(2W/W) / ln(4W/W) = ln 2 / ln 4 = 0.5;
  // ln t = ln 100 + 0.5 (ln 300 - ln 100)  =>  t = 100 * sqrt(3) = 173.2051 us.
  const auto hit = db.lookup("H100-SXM", test::gemm(2048, 4096, 4096));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->rule, LookupRule::Interpolated);
  EXPECT_NEAR(hit->time_s * 1e6, 173.2051, 1e-3);
  // m = 3072: work 3W, f = ln 3 / ln 4 = 0.79248; t = 100 * 3^0.79248 = 238.84 us.
  EXPECT_NEAR(*db.time_s("H100-SXM", test::gemm(3072, 4096, 4096)) * 1e6,
              100 * std::pow(3.0, std::log(3.0) / std::log(4.0)), 1e-9);
  EXPECT_NEAR(*db.time_s("H100-SXM", test::gemm(3072, 4096, 4096)) * 1e6, 238.84, 0.01);
}

TEST(OpDatabaseLookup, ExtrapolatesAtTheNearestPointsThroughput) {
  const OpDatabase db = op_database_of(kTwoGemms);
  // Above the range: m = 8192 is work 8W, 2x the largest point (4W, 300 us) -> 600 us.
  const auto above = db.lookup("H100-SXM", test::gemm(8192, 4096, 4096));
  ASSERT_TRUE(above.has_value());
  EXPECT_EQ(above->rule, LookupRule::Extrapolated);
  EXPECT_NEAR(above->time_s * 1e6, 600.0, 1e-9);
  // Below: m = 256 is W/4 -> 100 us / 4 = 25 us.
  const auto below = db.lookup("H100-SXM", test::gemm(256, 4096, 4096));
  ASSERT_TRUE(below.has_value());
  EXPECT_EQ(below->rule, LookupRule::Extrapolated);
  EXPECT_NEAR(below->time_s * 1e6, 25.0, 1e-9);
}

TEST(OpDatabaseLookup, PrefersGemmPointsOfTheSameAspect) {
  // C has the same FLOPs as a 2048x4096x4096 GEMM (2W) but another aspect, and a time (250 us) far
  // from the same-aspect answer (173.2 us).
  const OpDatabase db = op_database_of(kTwoGemms + "H100-SXM,gemm,bf16,1024,8192,4096,1,0,0,250\n");
  EXPECT_NEAR(*db.time_s("H100-SXM", test::gemm(2048, 4096, 4096)) * 1e6, 173.2051, 1e-3);
  // Batch counts as m for the aspect: 1024 x 4096 x 4096 twice is work 2W, same aspect -> 173.2 us.
  EXPECT_NEAR(*db.time_s("H100-SXM", test::gemm(1024, 4096, 4096, Precision::BF16, 2)) * 1e6, 173.2051, 1e-3);
  // No point of aspect n = 2048, k = 4096: all three points, sorted by work A (W, 100), C (2W, 250),
  // B (4W, 300). m = 6144 is 2*6144*2048*4096 = 3W: between C and B, f = ln 1.5 / ln 2 = 0.58496;
  // t = 250 * (300/250)^0.58496 = 250 * 1.11255 = 278.14 us.
  const double t = *db.time_s("H100-SXM", test::gemm(6144, 2048, 4096)) * 1e6;
  EXPECT_NEAR(t, 250 * std::pow(1.2, std::log(1.5) / std::log(2.0)), 1e-9);
  EXPECT_NEAR(t, 278.14, 0.01);
}

TEST(OpDatabaseLookup, MergesPointsOfEqualWorkByGeometricMean) {
  // Two aspects with the same work 2W: 200 us and 800 us. A third aspect at 2W has no points of its
  // own, so it reads the merged point: sqrt(200 * 800) = 400 us.
  const OpDatabase db = op_database_of(
      "H100-SXM,gemm,bf16,2048,4096,4096,1,0,0,200\n"
      "H100-SXM,gemm,bf16,4096,2048,4096,1,0,0,800\n");
  const auto hit = db.lookup("H100-SXM", test::gemm(1024, 8192, 4096));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->rule, LookupRule::Interpolated);
  EXPECT_NEAR(hit->time_s * 1e6, 400.0, 1e-9);
}

TEST(OpDatabaseLookup, GroupedGemmRowAnswersTheBatchedGemm) {
  const OpDatabase db = op_database_of("H100-SXM,grouped_gemm,bf16,2048,1408,2048,8,0,0,300\n");
  const auto hit = db.lookup("H100-SXM", test::gemm(2048, 1408, 2048, Precision::BF16, 8));
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->rule, LookupRule::Exact);
  EXPECT_DOUBLE_EQ(hit->time_s, 300e-6);
  // 4 members instead of 8: half the work at the same throughput -> 150 us (extrapolated).
  EXPECT_NEAR(*db.time_s("H100-SXM", test::gemm(2048, 1408, 2048, Precision::BF16, 4)) * 1e6, 150.0, 1e-9);
}

TEST(OpDatabaseLookup, MemoryBoundOpsInterpolateOverBytes) {
  // rmsnorm rows answer LayerNorm kernels. 1 MB -> 10 us, 100 MB -> 100 us; 10 MB is half-way in
  // log(bytes): t = 10 * (100/10)^0.5 = 31.623 us.
  const OpDatabase db = op_database_of(
      "H100-SXM,rmsnorm,bf16,0,0,0,1,0,1000000,10\n"
      "H100-SXM,rmsnorm,bf16,0,0,0,1,0,100000000,100\n");
  EXPECT_DOUBLE_EQ(*db.time_s("H100-SXM", test::memory(KernelKind::LayerNorm, 1e6)), 10e-6);
  EXPECT_NEAR(*db.time_s("H100-SXM", test::memory(KernelKind::LayerNorm, 1e7)) * 1e6, 31.623, 1e-3);
  // The FLOPs of a memory-bound kernel do not enter its lookup.
  EXPECT_NEAR(*db.time_s("H100-SXM", test::memory(KernelKind::LayerNorm, 1e7, 5e6)) * 1e6, 31.623, 1e-3);
  EXPECT_FALSE(db.time_s("H100-SXM", test::memory(KernelKind::Softmax, 1e7)).has_value());
}

TEST(OpDatabaseLookup, AttentionIsGroupedByMask) {
  const OpDatabase db = op_database_of("H100-SXM,flash_attn_fwd,bf16,4096,4096,128,32,1,0,1234\n");
  EXPECT_DOUBLE_EQ(*db.time_s("H100-SXM", test::flash(false, 32, 4096, 4096, 128, true)), 1234e-6);
  // A non-causal kernel is not read off causal points, nor a backward off forward ones.
  EXPECT_FALSE(db.time_s("H100-SXM", test::flash(false, 32, 4096, 4096, 128, false)).has_value());
  EXPECT_FALSE(db.time_s("H100-SXM", test::flash(true, 32, 4096, 4096, 128, true)).has_value());
  // 8k causal: 4x the work of 4k causal, so 4 x 1234 us at constant throughput (extrapolated).
  EXPECT_NEAR(*db.time_s("H100-SXM", test::flash(false, 32, 8192, 8192, 128, true)) * 1e6, 4 * 1234.0, 1e-6);
}

TEST(OpDatabaseLookup, CausalColumnIsIgnoredOutsideAttention) {
  const OpDatabase db = op_database_of("H100-SXM,gemm,bf16,1024,1024,1024,1,1,0,50\n");
  EXPECT_FALSE(db.records()[0].causal);
  EXPECT_DOUBLE_EQ(*db.time_s("H100-SXM", test::gemm(1024, 1024, 1024)), 50e-6);
}

TEST(OpDatabaseLookup, NoPointsNoAnswer) {
  const OpDatabase db = op_database_of(kTwoGemms);
  EXPECT_FALSE(db.time_s("A100-SXM-80GB", test::gemm(2048, 4096, 4096)).has_value());             // other GPU
  EXPECT_FALSE(db.time_s("H100-SXM", test::gemm(2048, 4096, 4096, Precision::FP8)).has_value());  // other dtype
  EXPECT_FALSE(db.time_s("H100-SXM", test::memory(KernelKind::Elementwise, 4096)).has_value());   // other kind
  EXPECT_FALSE(db.time_s("H100-SXM", test::gemm(0, 4096, 4096)).has_value());                     // no work to place
}

}  // namespace
}  // namespace trainsim
