// A run with the DeepEP dispatcher (parallelism.moe_dispatcher: flex) end to end: across two nodes it sends fewer
// copies of each token over the network than the all-to-all dispatcher, so the iteration is shorter, analytical and
// flow-level alike; --explain names the exchange and its copies.
#include <gtest/gtest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "support/deepep_job.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

// 16 H100 on two nodes, expert 16 over them (support/deepep_job.hpp).
Scenario deepep_job(const std::string& dispatcher, const std::string& network) {
  test::DeepEpJob j;
  j.dispatcher = dispatcher;
  j.network = network;
  return parse_scenario(test::deepep_job_yaml(j), "deepep.yaml");
}

TEST(DeepEpRun, FewerNetworkCopiesMakeAShorterIteration) {
  for (const char* network : {"analytical", "flow"}) {
    RunOptions o;
    const double flex = run_scenario(deepep_job("flex", network), o).result.iteration_time_s;
    const double a2a = run_scenario(deepep_job("alltoall", network), o).result.iteration_time_s;
    EXPECT_LT(flex, a2a) << network;
  }
}

TEST(DeepEpRun, ExplainNamesTheExchangeAndItsCopies) {
  RunOptions o;
  o.explain = true;
  const RunResult r = run_scenario(deepep_job("flex", "analytical"), o).result;
  bool found = false;
  ASSERT_TRUE(r.explain.has_value());
  for (const auto& row : r.explain->collectives) {
    if (row.name != "ep.deepep.dispatch") continue;
    found = true;
    EXPECT_NE(row.detail.find("DeepEP exchange ep 16 ranks"), std::string::npos) << row.detail;
    EXPECT_NE(row.detail.find("copies each over the network"), std::string::npos) << row.detail;
  }
  EXPECT_TRUE(found);
}

}  // namespace
