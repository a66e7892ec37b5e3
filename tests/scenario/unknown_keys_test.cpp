// Unknown keys are errors naming the file, the full key path and the closest known key
// (spec/scenario.md: "unknown key parallelism.tensor_parallel; did you mean parallelism.tensor?").
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(UnknownKeys, ValidScenarioParses) {
  // The base every other test edits must itself be accepted, or the error tests prove nothing.
  EXPECT_NO_THROW(parse_scenario(kValidScenario, "test.yaml"));
}

TEST(UnknownKeys, MisspeltKeySuggestsTheSibling) {
  const std::string yaml = edit(kValidScenario, "parallelism.tensor_parallel", "4");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.tensor_parallel", "test.yaml",
                        "unknown key parallelism.tensor_parallel; did you mean parallelism.tensor?");
}

TEST(UnknownKeys, TypoInNestedBlock) {
  // Edit distance 1 from bandwidth_GBps inside cluster.scale_up.
  const std::string yaml = edit(kValidScenario, "cluster.scale_up.bandwith_GBps", "450");
  EXPECT_SCENARIO_ERROR(yaml, "cluster.scale_up.bandwith_GBps", "did you mean cluster.scale_up.bandwidth_GBps?");
}

TEST(UnknownKeys, KeyInTheWrongSectionPointsToItsHome) {
  const std::string yaml = edit(kValidScenario, "model.global_batch_size", "64");
  EXPECT_SCENARIO_ERROR(yaml, "model.global_batch_size", "did you mean training.global_batch_size?");
}

TEST(UnknownKeys, TopLevelSection) {
  const std::string yaml = edit(kValidScenario, "paralelism", "{tensor: 2}");
  EXPECT_SCENARIO_ERROR(yaml, "paralelism", "unknown key paralelism; did you mean parallelism?");
}

TEST(UnknownKeys, NothingCloseListsTheKnownKeys) {
  const std::string yaml = edit(kValidScenario, "simulation.zzzzzzzzzzzz", "1");
  EXPECT_SCENARIO_ERROR(yaml, "simulation.zzzzzzzzzzzz", "known keys under simulation:", "network_model", "per_rank");
}

TEST(UnknownKeys, InsideFaultList) {
  const std::string yaml = edit(kValidScenario, "faults", "[{kind: node_down, node: 0, always: true, rnak: 3}]");
  EXPECT_SCENARIO_ERROR(yaml, "faults[0].rnak", "unknown key faults[0].rnak; did you mean faults[0].rank?");
}

TEST(UnknownKeys, InsideCollectivePoints) {
  const std::string yaml = R"(
cluster: {gpu: H100-SXM, num_gpus: 8}
collective:
  op: all_reduce
  points: [{size: 1M, busbw_GBs: 100}]
)";
  EXPECT_SCENARIO_ERROR(yaml, "collective.points[0].busbw_GBs", "did you mean collective.points[0].busbw_GBps?");
}

TEST(UnknownKeys, NcclKeysMustBeEnvironmentVariables) {
  // Any NCCL_* is accepted (NCCL has many); a bare name is not, and the message suggests the variable.
  EXPECT_NO_THROW(parse_scenario(edit(kValidScenario, "nccl.NCCL_SOMETHING_NEW", "1"), "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "nccl.ALGO", "Ring"), "nccl.ALGO", "did you mean nccl.NCCL_ALGO?");
}

TEST(UnknownKeys, DuplicateKeyIsAnError) {
  // yaml-cpp would silently keep the first; a duplicate usually means a paste mistake.
  const std::string yaml = std::string(kValidScenario) + "simulation: {seed: 1}\nsimulation: {seed: 2}\n";
  EXPECT_SCENARIO_ERROR(yaml, "simulation", "duplicate key simulation");
}

TEST(UnknownKeys, SectionThatIsNotAMapping) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism", "8"), "parallelism", "expected a mapping", "'8'");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "faults", "{kind: node_down}"), "faults", "expected a list");
}

}  // namespace
}  // namespace trainsim
