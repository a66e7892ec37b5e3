// Runaway work refused before it starts: a token count typed as training.global_batch_size is
// refused in milliseconds naming the key and simulation.max_ops (by `run` and by `ops`, which builds
// the same workload), and so is simulating every rank of a large job.
#include <chrono>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;

// timed(): a refusal takes milliseconds in a release build; the bounds below are 10-20x that so that a
// sanitizer build on a loaded machine passes, and still far below the runaway they guard against.

TEST(WorkLimitCli, TokensTypedAsGlobalBatchSizeAreRefusedAtOnceNamingTheKey) {
  for (const char* gbs : {"1048576", "2147483648"}) {
    Result r;
    const double seconds = timed("run " + example("tiny-8-h100.yaml") + " --set training.global_batch_size=" + gbs, r);
    EXPECT_NE(r.status, 0) << r.out;
    EXPECT_NE(r.status, 124) << "still running after 30 s";
    EXPECT_LT(seconds, 10.0) << r.out;  // refused from the estimate, nothing built
    EXPECT_THAT(r.out, HasSubstr("training.global_batch_size"));
    EXPECT_THAT(r.out, HasSubstr("micro-batches"));
    EXPECT_THAT(r.out, HasSubstr("simulation.max_ops 50000000"));
    EXPECT_THAT(r.out, HasSubstr("counts sequences, not tokens"));
  }
}

TEST(WorkLimitCli, OpsBuildsTheSameWorkloadAndHasTheSameLimit) {
  Result r;
  const double seconds = timed("ops " + example("tiny-8-h100.yaml") + " --set training.global_batch_size=1048576", r);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(seconds, 10.0);
  EXPECT_THAT(r.out, HasSubstr("training.global_batch_size"));
}

TEST(WorkLimitCli, MaxOpsIsAKeyZeroLiftsItAndNegativeIsAnError) {
  Result r = run("run " + example("tiny-8-h100.yaml") + " --set simulation.max_ops=1000");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("more than simulation.max_ops 1000"));
  r = run("run " + example("tiny-8-h100.yaml") + " --set simulation.max_ops=0 --json");
  EXPECT_EQ(r.status, 0) << r.out;
  r = run("run " + example("tiny-8-h100.yaml") + " --set simulation.max_ops=-1");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("simulation.max_ops"));
}

TEST(WorkLimitCli, SimulatingEveryRankOfALargeJobNamesPerRank) {
  Result r;
  const double seconds = timed("run " + example("deepseek-v3-2048-h800.yaml") + " --per-rank", r);
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_LT(seconds, 20.0);
  EXPECT_THAT(r.out, HasSubstr("simulation.per_rank"));
  EXPECT_THAT(r.out, HasSubstr("128 per pipeline stage"));
}

}  // namespace
