// Progress reports of run_scenario: an estimate first (with the flow-level transfers the fabric will
// carry), then the engine's progress as a share of every run's ops, then the end; and watching
// changes nothing in the results.
#include <gtest/gtest.h>

#include "report/reports.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/examples.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

using test::example;

struct Watched {
  std::vector<RunProgress> reports;
  RunResult result;
};

Watched watch(const Scenario& s) {
  Watched w;
  RunOptions o;
  o.progress = [&w](const RunProgress& p) { w.reports.push_back(p); };
  w.result = run_scenario(s, o).result;
  return w;
}

std::string json_of(RunResult r) {
  r.simulation.wall_s = 0;
  return to_json(r).dump();
}

TEST(RunProgress, EstimateThenMonotonicProgressThenDoneAndTheSameResults) {
  // 128 micro-batches of 24 layers: ~115,000 events, past the engine's first report.
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {"training.global_batch_size=1024"});
  const Watched w = watch(s);
  ASSERT_GE(w.reports.size(), 3u);
  EXPECT_EQ(w.reports.front().stage, RunProgress::Stage::Estimated);
  EXPECT_EQ(w.reports.front().estimated_ops, static_cast<double>(w.result.simulation.ops));
  EXPECT_EQ(w.reports.front().estimated_flows, 0);  // analytical
  EXPECT_GT(w.reports.front().estimated_seconds, 0);
  double last = 0;
  int simulating = 0;
  for (std::size_t i = 1; i + 1 < w.reports.size(); ++i) {
    const RunProgress& p = w.reports[i];
    EXPECT_EQ(p.stage, RunProgress::Stage::Simulating);
    EXPECT_GE(p.fraction, last);
    EXPECT_LE(p.fraction, 1.0);
    EXPECT_GT(p.events, 0);
    last = p.fraction;
    ++simulating;
  }
  EXPECT_GE(simulating, 1);
  const RunProgress& done = w.reports.back();
  EXPECT_EQ(done.stage, RunProgress::Stage::Done);
  EXPECT_EQ(done.fraction, 1.0);
  EXPECT_EQ(done.events, w.result.simulation.events);
  EXPECT_DOUBLE_EQ(done.simulated_s, w.result.iteration_time_s);
  EXPECT_EQ(json_of(w.result), json_of(run_scenario(s).result));
}

TEST(RunProgress, FaultsRunTwiceAndTheSecondRunIsTheSecondHalf) {
  const Scenario s = load_scenario(
      example("tiny-8-h100.yaml"),
      {"training.global_batch_size=1024", "faults=[{kind: gpu_slow, rank: 0, factor: 0.5, always: true}]"});
  const Watched w = watch(s);
  bool second = false;
  for (const RunProgress& p : w.reports) {
    EXPECT_EQ(p.runs, 2);
    if (p.stage == RunProgress::Stage::Simulating && p.run == 2) {
      second = true;
      EXPECT_GE(p.fraction, 0.5);
    }
  }
  EXPECT_TRUE(second);
  EXPECT_EQ(json_of(w.result), json_of(run_scenario(s).result));
}

TEST(RunProgress, FlowLevelEstimateCountsTheTransfersTheFabricCarries) {
  // Two nodes: the data-parallel reductions cross the fabric.
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {"cluster.num_gpus=16", "training.global_batch_size=16",
                                                                 "simulation.network_model=flow"});
  const Watched w = watch(s);
  const double planned = w.reports.front().estimated_flows;
  ASSERT_GT(w.result.simulation.flows, 0);
  EXPECT_NEAR(planned / static_cast<double>(w.result.simulation.flows), 1.0, 0.05);
  EXPECT_EQ(json_of(w.result), json_of(run_scenario(s).result));
}

}  // namespace
}  // namespace trainsim
