// The run model (src/plan/run_model.cpp) against cases computed by hand, and its Monte Carlo against its
// expectation where the first-order model is exact enough (failures rare within a checkpoint interval).
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "plan/run_model.hpp"

namespace trainsim::plan {
namespace {

constexpr double kHour = 3600;

RunModelInputs no_failures() {
  RunModelInputs in;
  in.useful_s = 1000 * kHour;
  in.failure_rate_per_s = {{"gpu", 0.0}, {"software", 0.0}};
  in.needs_node = {{"gpu", true}, {"software", false}};
  in.checkpoint_stall_s = 60;
  in.checkpoint_write_s = 60;
  return in;
}

// Failures every 50 h on average (80% hardware), restarts of 10 min, loads of 5 min.
RunModelInputs failing() {
  RunModelInputs in = no_failures();
  in.failure_rate_per_s = {{"gpu", 0.8 / (50 * kHour)}, {"software", 0.2 / (50 * kHour)}};
  in.restart_s = 600;
  in.load_s = 300;
  return in;
}

TEST(RunModel, WithoutFailuresGoodputIsOneMinusTheCheckpointStallShare) {
  const RunModelInputs in = no_failures();
  const RunExpectation e = expect_run(in, kHour);
  // 1,000 h of training in 1 h segments: a checkpoint after each but the last.
  EXPECT_DOUBLE_EQ(e.checkpoint_stall_s, 999 * 60.0);
  EXPECT_DOUBLE_EQ(e.wall_s, in.useful_s + 999 * 60.0);
  EXPECT_DOUBLE_EQ(e.goodput, 1 - e.checkpoint_stall_s / e.wall_s);
  EXPECT_EQ(e.failures, 0);
}

TEST(RunModel, YoungsIntervalIsTheSquareRootOfTwiceTheStallTimesTheMtbf) {
  const RunModelInputs in = failing();
  const double mtbf = 50 * kHour;
  EXPECT_NEAR(young_interval_s(in), std::sqrt(2 * 60 * mtbf), 1e-6);
  EXPECT_NEAR(daly_interval_s(in), std::sqrt(2 * 60 * mtbf) - 60, 1e-6);
}

TEST(RunModel, TheModelsOptimumIsNearYoungsWhenTheStallIsSmall) {
  const RunModelInputs in = failing();
  const double best = optimal_interval_s(in);
  EXPECT_NEAR(best / young_interval_s(in), 1.0, 0.05);
  // And it is a minimum: the wall time is higher either side.
  EXPECT_LT(expect_run(in, best).wall_s, expect_run(in, best * 0.7).wall_s);
  EXPECT_LT(expect_run(in, best).wall_s, expect_run(in, best * 1.4).wall_s);
}

TEST(RunModel, ExpectationAddsUpByHand) {
  const RunModelInputs in = failing();
  const double interval = 2 * kHour, rate = 1 / (50 * kHour);
  const RunExpectation e = expect_run(in, interval);
  const double stalls = 499 * 60.0, lost = 0.5 * (interval + 60);
  const double running = (in.useful_s + stalls) / (1 - rate * lost);
  EXPECT_NEAR(e.running_s, running, 1e-6 * running);
  EXPECT_NEAR(e.failures, rate * running, 1e-9 * running);
  EXPECT_NEAR(e.wall_s, running + e.failures * (600 + 300), 1e-6 * running);
}

TEST(RunModel, MonteCarloMeanConvergesToTheExpectation) {
  const RunModelInputs in = failing();
  const double interval = kHour;
  const RunExpectation e = expect_run(in, interval);
  const RunTrials t = simulate_runs(in, interval, 400, 7);
  EXPECT_NEAR(t.mean_wall_s / e.wall_s, 1.0, 0.003);
  EXPECT_NEAR(t.mean_failures / e.failures, 1.0, 0.03);
  EXPECT_LE(t.percentile(0.1), t.percentile(0.5));
  EXPECT_LE(t.percentile(0.5), t.percentile(0.9));
  EXPECT_LT(t.percentile(0.1), t.percentile(0.9));  // failures make runs differ
}

TEST(RunModel, AsynchronousCheckpointsStallLessAndLoseTheWriteWindow) {
  RunModelInputs sync = failing();
  sync.checkpoint_stall_s = sync.checkpoint_write_s = 600;
  RunModelInputs async = sync;
  async.checkpoint_stall_s = 10;
  const double interval = 2 * kHour;
  const RunExpectation a = expect_run(async, interval), s = expect_run(sync, interval);
  EXPECT_LT(a.checkpoint_stall_s, s.checkpoint_stall_s / 50);
  // Each failure loses the write window on top of half a cycle.
  EXPECT_NEAR(a.lost_work_s / a.failures, 0.5 * (interval + 10) + 590, 1e-6);
  EXPECT_LT(a.wall_s, s.wall_s);
  EXPECT_NEAR(simulate_runs(async, interval, 300, 3).mean_wall_s / a.wall_s, 1.0, 0.004);
}

TEST(RunModel, WithoutSparesEveryHardwareFailureWaitsForTheRepair) {
  RunModelInputs in = failing();
  in.spare_nodes = 0;
  in.repair_s = 4 * kHour;
  EXPECT_DOUBLE_EQ(expected_spare_wait_s(in), 4 * kHour);
  const RunExpectation e = expect_run(in, kHour);
  EXPECT_NEAR(e.spare_wait_s, 0.8 * e.failures * 4 * kHour, 1e-6 * e.spare_wait_s);
  EXPECT_NEAR(simulate_runs(in, kHour, 400, 11).mean_wall_s / e.wall_s, 1.0, 0.01);
  // Spares take the wait away (almost: all of them are rarely in repair at once).
  in.spare_nodes = 4;
  EXPECT_LT(expected_spare_wait_s(in), 1e-3 * kHour);
}

TEST(RunModel, BadMachinesMultiplyHardwareFailures) {
  RunModelInputs in = failing();
  const double base = total_failure_rate(in);
  in.recurrence = 0.5;
  EXPECT_NEAR(total_failure_rate(in), 0.2 * base + 0.8 * base / 0.5, 1e-15);
}

TEST(RunModel, WithoutCheckpointsAFailureStartsOver) {
  RunModelInputs in = failing();
  in.checkpoints = false;
  in.useful_s = 20 * kHour;
  const RunExpectation e = expect_run(in, 0);
  const double rate = 1 / (50 * kHour);
  EXPECT_NEAR(e.failures, std::expm1(rate * in.useful_s), 1e-12);
  EXPECT_NEAR(simulate_runs(in, 0, 4000, 5).mean_wall_s / e.wall_s, 1.0, 0.02);
  in.useful_s = 1e6 * kHour;  // e^(20,000): never
  EXPECT_THROW(expect_run(in, 0), Error);
}

TEST(RunModel, ARunThatNeverFinishesIsAnError) {
  RunModelInputs in = failing();
  EXPECT_THROW(expect_run(in, 200 * kHour), Error);  // each failure loses ~100 h, one every 50 h
}

TEST(RunModel, ATrialWithoutFailuresTakesItsTrainingAndCheckpointsExactly) {
  // Failures so rare that none strikes: the trial skips whole cycles at once and must land where the checkpoints
  // put it, for synchronous and asynchronous writes.
  RunModelInputs in = no_failures();
  for (double rate : {1e-15, 0.0})  // none drawn, or none possible
    for (double stall : {60.0, 5.0}) {
      in.failure_rate_per_s = {{"gpu", rate}, {"software", 0.0}};
      in.checkpoint_stall_s = stall;
      in.checkpoint_write_s = 60;
      const RunTrials t = simulate_runs(in, 0.7 * kHour, 3, 1);
      EXPECT_EQ(t.mean_failures, 0);
      const double checkpoints = std::ceil(in.useful_s / (0.7 * kHour)) - 1;
      EXPECT_NEAR(t.mean_wall_s, in.useful_s + checkpoints * stall, 1e-6 * in.useful_s) << stall;
    }
}

TEST(RunModel, TrialsAreDeterministicForASeed) {
  const RunModelInputs in = failing();
  EXPECT_EQ(simulate_runs(in, kHour, 50, 42).wall_s, simulate_runs(in, kHour, 50, 42).wall_s);
  EXPECT_NE(simulate_runs(in, kHour, 50, 42).wall_s, simulate_runs(in, kHour, 50, 43).wall_s);
}

}  // namespace
}  // namespace trainsim::plan
