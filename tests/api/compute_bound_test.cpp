// compute_lower_bound_s and RunOptions::give_up_above_s: the bound a search prunes with is a true lower bound on
// the simulated iteration (interference and communication only add to it), and a run over its limit stops before
// the engine with the bound in the error.
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "support/examples.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

using test::example;

TEST(ComputeBound, IsBelowTheSimulatedIterationAndNotFarBelowOnAComputeBoundJob) {
  for (const char* name : {"tiny-8-h100.yaml", "gpt3-175b-1024-h100.yaml", "mixtral-8x7b-64-h100.yaml"}) {
    const Scenario s = load_scenario(example(name), {});
    const double bound = compute_lower_bound_s(s);
    const RunResult r = run_scenario(s).result;
    EXPECT_GT(bound, 0) << name;
    EXPECT_LE(bound, r.iteration_time_s) << name;
    // The critical rank's compute (interference included) is at least the bound's share of it.
    EXPECT_GE(r.breakdown.compute + r.breakdown.optimizer, 0.9 * bound) << name;
  }
}

TEST(ComputeBound, ARunOverItsLimitStopsBeforeTheEngine) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {});
  const double bound = compute_lower_bound_s(s);
  RunOptions o;
  o.give_up_above_s = bound * 0.5;
  try {
    run_scenario(s, o);
    FAIL() << "expected SlowerThanLimitError";
  } catch (const SlowerThanLimitError& e) {
    EXPECT_DOUBLE_EQ(e.bound_s(), bound);
    EXPECT_NE(std::string(e.what()).find("compute kernels alone"), std::string::npos) << e.what();
  }
  o.give_up_above_s = bound * 1.01;  // above the bound: simulated as usual
  EXPECT_GE(run_scenario(s, o).result.iteration_time_s, bound);
}

TEST(ComputeBound, OutOfMemoryIsReportedAsARunWouldReportIt) {
  const Scenario s =
      load_scenario(example("gpt3-175b-1024-h100.yaml"), {"parallelism.pipeline=1", "parallelism.tensor=8"});
  EXPECT_THROW(compute_lower_bound_s(s), OutOfMemoryError);
  EXPECT_GT(compute_lower_bound_s(s, true), 0);
}

}  // namespace
}  // namespace trainsim
