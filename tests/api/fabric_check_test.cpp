// A fabric that cannot be built is never priced silently: 131072 GPUs in 16384 nodes of 8 need 4096 rail leaves,
// but 2 tiers of radix-64 switches connect at most 64. The flow level refuses it; the analytical model used to
// price it as if it existed and now runs with the same finding as a warning (an error there would change two
// published validation cases, which describe such fabrics); nccl-test and validate's collective cases refuse it.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

const char* kUnbuildableFabricJob = R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 16384, micro_batch_size: 1}
parallelism: {tensor: 8, pipeline: 1}
cluster:
  gpu: H100-SXM
  num_gpus: 131072
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
  network: {topology: rail-optimized, tiers: 2, switch_radix: 64}
)";

ScenarioError error_of(const std::vector<std::string>& overrides) {
  try {
    run_scenario(parse_scenario(kUnbuildableFabricJob, "job.yaml", overrides));
  } catch (const ScenarioError& e) { return e; }
  ADD_FAILURE() << "expected a ScenarioError";
  return ScenarioError("", "", "");
}

TEST(FabricCheck, UnbuildableFabricIsAFlowErrorAndAnAnalyticalWarning) {
  const ScenarioError flow = error_of({"simulation.network_model=flow"});
  EXPECT_EQ(flow.key(), "cluster.network.tiers");
  EXPECT_EQ(flow.file(), "job.yaml");
  EXPECT_NE(flow.detail().find("connect at most 64 leaves"), std::string::npos) << flow.what();
  const RunOutput analytical =
      run_scenario(parse_scenario(kUnbuildableFabricJob, "job.yaml", {"simulation.network_model=analytical"}));
  ASSERT_EQ(analytical.result.warnings.size(), 1u);
  EXPECT_EQ(analytical.result.warnings[0].key, "cluster.network.tiers");
  EXPECT_NE(analytical.result.warnings[0].message.find("the fabric cannot be built: " + flow.detail()),
            std::string::npos)
      << analytical.result.warnings[0].message;
}

TEST(FabricCheck, ABuildableFabricRunsAnalytically) {
  // Three tiers with pods of 1024 GPUs (128 pods) still exceed radix 64 at the core; 32768 GPUs fit.
  const RunOutput out = run_scenario(
      parse_scenario(kUnbuildableFabricJob, "job.yaml",
                     {"cluster.num_gpus=32768", "cluster.network.tiers=3", "training.global_batch_size=4096"}));
  EXPECT_GT(out.result.iteration_time_s, 0);
  EXPECT_TRUE(out.result.warnings.empty());
}

TEST(FabricCheck, NcclTestRefusesAnUnbuildableFabric) {
  const Scenario s = parse_scenario(R"(
cluster:
  gpu: H100-SXM
  num_gpus: 131072
  network: {tiers: 2, switch_radix: 64}
collective: {op: all_reduce, points: [{size: 1M, busbw_GBps: 100}]}
)",
                                    "coll.yaml");
  EXPECT_THROW(run_nccl_test(s, NcclTestOptions{}), ScenarioError);
  EXPECT_THROW(run_collective_benchmark(s), ScenarioError);
  NcclTestOptions eight;
  eight.gpus = 8;  // one node of the same cluster: a fabric of one node builds
  EXPECT_NO_THROW(run_nccl_test(s, eight));
}

}  // namespace
