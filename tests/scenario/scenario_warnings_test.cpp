// Scenario::warnings: what validation accepts but the user likely did not intend is said, never silent.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

std::string with_tensor(const char* tensor) {
  std::string yaml = edit(kValidScenario, "parallelism.tensor", tensor);
  return edit(yaml, "parallelism.pipeline", "1");
}

// 16 GPUs in nodes of 8 (scale-up domain 8 by default): tensor 16 spans two domains, so its collectives cross the
// scale-out network. The scenario is valid (Megatron runs it) and the warning names parallelism.tensor and the domain.
TEST(ScenarioWarnings, TensorWiderThanTheScaleUpDomain) {
  const Scenario s = parse_scenario(with_tensor("16"), "test.yaml");
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0].key, "parallelism.tensor");
  EXPECT_NE(s.warnings[0].message.find("tensor 16 is larger than the scale-up domain"), std::string::npos)
      << s.warnings[0].message;
  EXPECT_NE(s.warnings[0].message.find("cluster.scale_up.domain_size 8"), std::string::npos) << s.warnings[0].message;
}

TEST(ScenarioWarnings, NoneWhenTensorFitsTheDomain) {
  EXPECT_TRUE(parse_scenario(with_tensor("8"), "test.yaml").warnings.empty());  // exactly the domain
  EXPECT_TRUE(parse_scenario(kValidScenario, "test.yaml").warnings.empty());
  // An NVL72-style domain spanning nodes: tensor 16 stays inside it.
  const std::string nvl = edit(edit(with_tensor("16"), "cluster.num_gpus", "32"), "cluster.scale_up.domain_size", "32");
  EXPECT_TRUE(parse_scenario(nvl, "test.yaml").warnings.empty());
}

// Megatron-FSDP's sharding reaches the memory model, not the timing: the report says so.
TEST(ScenarioWarnings, MegatronFsdpIsTimedAsTheDistributedOptimizer) {
  const Scenario z3 = parse_scenario(edit(kValidScenario, "parallelism.zero_stage", "3"), "test.yaml");
  ASSERT_EQ(z3.warnings.size(), 1u);
  EXPECT_EQ(z3.warnings[0].key, "parallelism.zero_stage");
  EXPECT_NE(z3.warnings[0].message.find("timed as zero_stage 1"), std::string::npos) << z3.warnings[0].message;
  EXPECT_TRUE(parse_scenario(edit(kValidScenario, "parallelism.zero_stage", "1"), "test.yaml").warnings.empty());
}

// The analytical network model does not simulate the fabric beyond the NICs: keys that shape it are named in a
// warning there, and pass without one at flow level, where they act.
TEST(ScenarioWarnings, FabricKeysUnderTheAnalyticalModel) {
  const std::string fabric =
      edit(edit(kValidScenario, "cluster.network.oversubscription", "[1, 4]"), "cluster.network.tiers", "2");
  const Scenario analytical = parse_scenario(fabric, "test.yaml");
  ASSERT_EQ(analytical.warnings.size(), 1u);
  EXPECT_EQ(analytical.warnings[0].key, "cluster.network.oversubscription");
  EXPECT_NE(analytical.warnings[0].message.find("simulation.network_model: flow"), std::string::npos)
      << analytical.warnings[0].message;
  const Scenario routed = parse_scenario(edit(fabric, "cluster.network.link_latency_ns", "900"), "test.yaml");
  ASSERT_EQ(routed.warnings.size(), 1u);
  EXPECT_NE(routed.warnings[0].message.find("cluster.network.link_latency_ns"), std::string::npos)
      << routed.warnings[0].message;
  EXPECT_TRUE(parse_scenario(edit(fabric, "simulation.network_model", "flow"), "test.yaml").warnings.empty());
  // A flat fabric written out as such changes nothing either way: no warning.
  EXPECT_TRUE(
      parse_scenario(edit(kValidScenario, "cluster.network.oversubscription", "[1]"), "test.yaml").warnings.empty());
}

}  // namespace
}  // namespace trainsim
