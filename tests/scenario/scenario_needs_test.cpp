// A command reads the blocks it uses (ScenarioNeeds): topo and nccl-test need only the cluster, so
// a file without a job, or with a job they would not use that is wrong, still serves them.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

constexpr const char* kClusterOnly = R"(
cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
nccl:
  NCCL_ALGO: Ring
)";

std::string error_of(const std::string& yaml, ScenarioNeeds needs, const std::vector<std::string>& overrides = {}) {
  try {
    parse_scenario(yaml, "test.yaml", overrides, needs);
  } catch (const ScenarioError& e) { return e.what(); }
  return "";
}

TEST(ScenarioNeeds, AClusterAloneServesACommandThatNeedsOnlyTheCluster) {
  const Scenario s = parse_scenario(kClusterOnly, "test.yaml", {}, ScenarioNeeds::ClusterOnly);
  EXPECT_FALSE(s.has_training_job);
  EXPECT_EQ(s.cluster.num_gpus, 16);
  EXPECT_EQ(s.nccl.get("NCCL_ALGO"), "Ring");
  // A command that simulates the job still asks for it.
  EXPECT_NE(error_of(kClusterOnly, ScenarioNeeds::Job).find("missing required section model"), std::string::npos);
}

TEST(ScenarioNeeds, AJobErrorDoesNotStopACommandThatDoesNotReadTheJob) {
  // 63 sequences do not split into micro-batches of 2 over 4 data-parallel replicas.
  const std::string yaml = edit(kValidScenario, "training.global_batch_size", "63");
  EXPECT_NE(error_of(yaml, ScenarioNeeds::Job).find("training.global_batch_size"), std::string::npos);
  const Scenario s = parse_scenario(yaml, "test.yaml", {}, ScenarioNeeds::ClusterOnly);
  EXPECT_FALSE(s.has_training_job);
  EXPECT_EQ(s.cluster.num_gpus, 16);
}

TEST(ScenarioNeeds, UnknownKeysAreErrorsInEveryBlock) {
  // Not read is not unchecked: a misspelt key is still a typo the user should hear about.
  const std::string yaml = edit(kValidScenario, "parallelism.tensor_parallel", "4");
  EXPECT_NE(error_of(yaml, ScenarioNeeds::ClusterOnly).find("did you mean parallelism.tensor?"), std::string::npos);
}

TEST(ScenarioNeeds, OverridingAJobKeyTheCommandDoesNotReadIsAnError) {
  for (const char* text : {"parallelism.tensor=4", "model.preset=gpt3-175b", "training={global_batch_size: 8}"}) {
    const std::string e = error_of(kValidScenario, ScenarioNeeds::ClusterOnly, {text});
    EXPECT_EQ(e.rfind("--set " + std::string(text) + ": ", 0), 0u) << e;
    EXPECT_NE(e.find("this command does not read the"), std::string::npos) << e;
  }
  // Cluster keys are what it reads.
  EXPECT_EQ(error_of(kValidScenario, ScenarioNeeds::ClusterOnly, {"cluster.nic_gbps=200"}), "");
}

TEST(ScenarioNeeds, AnEmptyFileNamesWhatTheCommandNeeds) {
  EXPECT_NE(error_of("", ScenarioNeeds::ClusterOnly).find("expected a cluster section"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
