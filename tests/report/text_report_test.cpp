// write_text_report: the numbers a reader needs are there, formatted with fixed precision, and the
// out-of-memory verdict is unmissable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "report/reports.hpp"
#include "sample_result.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string text_of(const RunResult& r) {
  std::ostringstream out;
  write_text_report(out, r);
  return out.str();
}

TEST(TextReport, HeaderNamesTheJob) {
  const std::string t = text_of(test::sample_result());
  EXPECT_THAT(t, HasSubstr("gpt3-175b-1024-h100"));
  EXPECT_THAT(t, HasSubstr("H100-SXM (bf16)"));
  EXPECT_THAT(t, HasSubstr("1024 GPUs"));
  EXPECT_THAT(t, HasSubstr("TP 8  PP 8  DP 16  CP 1"));
  EXPECT_THAT(t, HasSubstr("micro-batches 96"));
}

// Expert and virtual pipeline sizes appear when they matter; chosen settings are printed with their reason.
TEST(TextReport, HeaderShowsExpertLayoutAndChosenSettings) {
  RunResult r = test::sample_result();
  EXPECT_THAT(text_of(r), Not(HasSubstr("EP ")));
  EXPECT_THAT(text_of(r), Not(HasSubstr("chosen:")));
  r.expert = 64;
  r.expert_tensor = 1;
  r.virtual_pipeline = 2;
  r.inferred.push_back({"parallelism.expert_tensor", "1", "not given; the default does not fit"});
  const std::string t = text_of(r);
  EXPECT_THAT(t, HasSubstr("TP 8  PP 8  DP 16  CP 1  VP 2  EP 64  ETP 1"));
  EXPECT_THAT(t, HasSubstr("chosen: parallelism.expert_tensor = 1  (not given; the default does not fit)"));
}

// The job's size in tokens: sequence length and global batch size, so a reader sees what was trained (a Hugging
// Face config's max_position_embeddings taken as the sequence length would show here).
TEST(TextReport, HeaderShowsSequenceLengthAndGlobalBatch) {
  RunResult r = test::sample_result();
  EXPECT_THAT(text_of(r), Not(HasSubstr("sequence length")));  // unknown: not printed as 0
  r.seq_length = 2048;
  r.global_batch_size = 1536;
  EXPECT_THAT(text_of(r), HasSubstr("sequence length 2048   global batch size 1536"));
}

// Warnings about the scenario are printed in the header, one line each with the key, in their order.
TEST(TextReport, HeaderListsWarnings) {
  RunResult r = test::sample_result();
  EXPECT_THAT(text_of(r), Not(HasSubstr("warning:")));
  r.warnings.push_back({"parallelism.tensor", "tensor 16 is larger than the scale-up domain"});
  r.warnings.push_back({"cluster.gpu", "second"});
  const std::string t = text_of(r);
  EXPECT_THAT(t, HasSubstr("  warning: parallelism.tensor: tensor 16 is larger than the scale-up domain\n"));
  EXPECT_LT(t.find("warning: parallelism.tensor"), t.find("warning: cluster.gpu"));
  EXPECT_LT(t.find("warning: cluster.gpu"), t.find("iteration time"));  // in the header, before the numbers
}

TEST(TextReport, HeadlineNumbers) {
  const std::string t = text_of(test::sample_result());
  EXPECT_THAT(t, HasSubstr("12.5000 s"));            // iteration time, 4 decimals
  EXPECT_THAT(t, HasSubstr("251,658 tokens/s"));     // 251,658.24 rounded and grouped
  EXPECT_THAT(t, HasSubstr("(245.8 per GPU)"));      // 245.76 to one decimal
  EXPECT_THAT(t, HasSubstr("400.0  (peak 989.0)"));  // TFLOPS/GPU against peak
  EXPECT_THAT(t, HasSubstr("40.4 %"));               // MFU 0.40445 -> 40.4 %
  EXPECT_THAT(t, HasSubstr("50.0 %"));               // HFU
}

// Breakdown rows: seconds and share of the iteration, e.g. compute 9 s of 12.5 s = 72.0 %, and the
// five parts summing to 12.5 s in the total row.
TEST(TextReport, BreakdownRowsWithShares) {
  const std::string t = text_of(test::sample_result());
  EXPECT_THAT(t, HasSubstr("critical rank 7"));
  EXPECT_THAT(t, ::testing::ContainsRegex("compute +9\\.0000 +72\\.0"));
  EXPECT_THAT(t, ::testing::ContainsRegex("exposed comm +1\\.5000 +12\\.0"));
  EXPECT_THAT(t, ::testing::ContainsRegex("tensor-parallel +0\\.8000 +6\\.4"));
  EXPECT_THAT(t, ::testing::ContainsRegex("pipeline bubble +1\\.5000 +12\\.0"));
  EXPECT_THAT(t, ::testing::ContainsRegex("optimizer +0\\.3000 +2\\.4"));
  EXPECT_THAT(t, ::testing::ContainsRegex("total +12\\.5000 +100\\.0"));
}

// The GPU waiting on the host is shown under `other` once it is 1% of the step (12.5 s here), not for the
// first launch every step waits for.
TEST(TextReport, LaunchBoundStepsSayHowLongTheGpuWaitedOnTheHost) {
  RunResult r = test::sample_result();
  r.breakdown.other = 0.2;
  r.breakdown.host = 0.15;
  r.simulation.host_launches = 4321;
  r.simulation.host_launch_us = 12;
  const std::string t = text_of(r);
  EXPECT_THAT(t, ::testing::ContainsRegex("waiting on the host +0\\.1500 +1\\.2"));
  EXPECT_THAT(t, HasSubstr("Host: 4,321 kernel launches per iteration on the critical rank at 12 us each"));
  r.breakdown.host = 12e-6;
  EXPECT_THAT(text_of(r), Not(HasSubstr("waiting on the host")));
  EXPECT_THAT(text_of(r), Not(HasSubstr("Host:")));
}

// A zero iteration time (nothing simulated) must not print inf/nan shares.
TEST(TextReport, ZeroIterationTimeHasNoShares) {
  RunResult r = test::sample_result();
  r.iteration_time_s = 0;
  const std::string t = text_of(r);
  EXPECT_THAT(t, Not(HasSubstr("inf")));
  EXPECT_THAT(t, Not(HasSubstr("nan")));
}

TEST(TextReport, MemoryFitsAndDoesNotFit) {
  RunResult r = test::sample_result();
  std::string t = text_of(r);
  EXPECT_THAT(t, HasSubstr("70.25 of 80.00  fits"));
  EXPECT_THAT(t, Not(HasSubstr("DOES NOT FIT")));

  r.memory->peak = 93.5;
  r.memory->fits = false;
  t = text_of(r);
  EXPECT_THAT(t, HasSubstr("93.50 of 80.00  DOES NOT FIT"));

  r.memory.reset();  // no memory model: no memory block at all
  EXPECT_THAT(text_of(r), Not(HasSubstr("Memory per GPU")));
}

// Comm table: human byte units (3 GiB exactly; 1536 B = 1.50 KiB), counts, times, algorithm/protocol.
TEST(TextReport, CollectiveTable) {
  const std::string t = text_of(test::sample_result());
  EXPECT_THAT(
      t, ::testing::ContainsRegex("all_reduce +tp +8 +9216 +3\\.00 GiB +2\\.250000 +0\\.800000 +0 s +Ring/Simple"));
  EXPECT_THAT(
      t, ::testing::ContainsRegex("reduce_scatter +dp +16 +2 +1\\.50 KiB +0\\.500000 +0\\.400000 +0 s +Ring/LL128"));

  RunResult r = test::sample_result();
  r.comm.clear();
  EXPECT_THAT(text_of(r), HasSubstr("Collectives per iteration (critical rank)\n  none"));
}

TEST(TextReport, SimulationFooter) {
  const std::string t = text_of(test::sample_result());
  EXPECT_THAT(t, HasSubstr("0.750 s wall, 1,234,567 events, 4,200 flows, 64 simulated ranks, 98,765 ops, "
                           "network model analytical"));
}

TEST(TextReport, Deterministic) { EXPECT_EQ(text_of(test::sample_result()), text_of(test::sample_result())); }

}  // namespace
}  // namespace trainsim
