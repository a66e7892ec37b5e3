// `--set key.path=value` overrides: applied before reading, values parsed as YAML.
#include <ostream>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

Scenario with(const std::vector<std::string>& overrides) {
  return parse_scenario(kValidScenario, "test.yaml", overrides);
}

TEST(Overrides, ScalarValues) {
  // tensor 4 x pipeline 2 on 16 GPUs leaves data 2.
  const Scenario s = with({"parallelism.tensor=4", "cluster.nic_gbps=200"});
  EXPECT_EQ(s.parallelism.tensor, 4);
  EXPECT_EQ(s.parallelism.data, 2);
  EXPECT_DOUBLE_EQ(s.cluster.nic_gbps, 200);
}

TEST(Overrides, ListValue) {
  const Scenario s = with({"training.recompute=full", "training.recompute_num_layers=[4,0]"});
  EXPECT_EQ(s.training.recompute_num_layers, (std::vector<int>{4, 0}));
}

TEST(Overrides, CreatesIntermediateMappings) {
  // The base has no simulation or cluster.network block.
  const Scenario s =
      with({"simulation.network_model=flow", "cluster.network.topology=fat-tree", "nccl.NCCL_ALGO=Ring"});
  EXPECT_EQ(s.simulation.network_model, NetworkModel::Flow);
  EXPECT_EQ(s.cluster.network.topology, NetworkTopology::FatTree);
  EXPECT_EQ(s.nccl.get("NCCL_ALGO"), "Ring");
}

TEST(Overrides, LaterOverrideWins) {
  EXPECT_EQ(with({"parallelism.tensor=4", "parallelism.tensor=1"}).parallelism.tensor, 1);
}

TEST(Overrides, NullRestoresTheDefault) {
  // micro_batch_size null -> default 1.
  EXPECT_EQ(with({"training.micro_batch_size=null"}).training.micro_batch_size, 1);
}

TEST(Overrides, WholeListOfFaults) {
  const Scenario s = with({"faults=[{kind: gpu_slow, rank: 3, factor: 0.5, at_s: 10}]"});
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].rank, 3);
}

TEST(Overrides, AppliesToAnEmptyDocument) {
  // Everything from --set: a minimal collective benchmark.
  const Scenario s =
      parse_scenario("", "test.yaml", {"cluster.gpu=H100-SXM", "cluster.num_gpus=8", "collective.op=all_gather"});
  EXPECT_FALSE(s.has_training_job);
  EXPECT_EQ(s.collective->op, CollectiveOp::AllGather);
}

TEST(Overrides, OverrideValuesAreTypeChecked) {
  const auto e = test::parse_error(kValidScenario, {"parallelism.tensor=abc"});
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.key, "parallelism.tensor");
  EXPECT_NE(e.what.find("expected a positive integer, got 'abc'"), std::string::npos) << e.what;
}

// A bad value the override gave is the override's fault, not the file's: the message names it.
TEST(Overrides, ABadValueIsBlamedOnTheOverrideThatGaveIt) {
  auto e = test::parse_error(kValidScenario, {"cluster.nic_gbps=200", "parallelism.tensor=abc"});
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.file, "--set parallelism.tensor=abc");
  EXPECT_EQ(e.what.rfind("--set parallelism.tensor=abc: parallelism.tensor: expected a positive integer", 0), 0u)
      << e.what;
  // Through a whole mapping, and through a list.
  e = test::parse_error(kValidScenario, {"parallelism={tensor: abc, pipeline: 2}"});
  EXPECT_EQ(e.file, "--set parallelism={tensor: abc, pipeline: 2}") << e.what;
  EXPECT_EQ(e.key, "parallelism.tensor");
  e = test::parse_error(kValidScenario, {"faults=[{kind: gpu_slow, rank: 99, factor: 0.5, at_s: 10}]"});
  EXPECT_EQ(e.file, "--set faults=[{kind: gpu_slow, rank: 99, factor: 0.5, at_s: 10}]") << e.what;
  // The later of two overrides of the key is the one in force.
  e = test::parse_error(kValidScenario, {"parallelism.tensor=abc", "parallelism.tensor=-1"});
  EXPECT_EQ(e.file, "--set parallelism.tensor=-1") << e.what;
}

TEST(Overrides, WhatTheFileSaidStaysTheFilesFault) {
  // The file's own bad value, with an override of a sibling key whose name its name starts with.
  auto e = test::parse_error(edit(kValidScenario, "training.recompute_num_layers", "abc"), {"training.recompute=full"});
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.file, "test.yaml") << e.what;
  EXPECT_EQ(e.key, "training.recompute_num_layers");
  e = test::parse_error(edit(kValidScenario, "parallelism.tensor", "abc"), {"parallelism.pipeline=1"});
  EXPECT_EQ(e.file, "test.yaml") << e.what;
  EXPECT_EQ(e.key, "parallelism.tensor");
}

TEST(Overrides, AnEmptyValueIsAnErrorNotTheDefault) {
  // Read as YAML, "" is null: TP would silently become the default 1.
  for (const char* text : {"parallelism.tensor=", "parallelism.tensor=  "}) {
    const auto e = test::parse_error(kValidScenario, {text});
    ASSERT_TRUE(e.thrown) << text;
    EXPECT_EQ(e.file, "--set");
    EXPECT_EQ(e.key, "parallelism.tensor");
    EXPECT_NE(e.what.find("empty value"), std::string::npos) << e.what;
    EXPECT_NE(e.what.find("parallelism.tensor=null"), std::string::npos) << e.what;
  }
}

struct BadOverride {
  const char* text;
  const char* key;
  const char* fragment;
};

// The override's text in the test's name (gtest would print the struct's bytes, pointers included: names that
// change from build to build).
void PrintTo(const BadOverride& b, std::ostream* os) { *os << b.text; }

class MalformedOverride : public ::testing::TestWithParam<BadOverride> {};

TEST_P(MalformedOverride, IsAScenarioErrorLabelledSet) {
  const auto e = test::parse_error(kValidScenario, {GetParam().text});
  ASSERT_TRUE(e.thrown) << GetParam().text;
  EXPECT_EQ(e.file, "--set");
  EXPECT_EQ(e.key, GetParam().key);
  EXPECT_NE(e.what.find(GetParam().fragment), std::string::npos) << e.what;
}

INSTANTIATE_TEST_SUITE_P(
    Overrides, MalformedOverride,
    ::testing::Values(BadOverride{"parallelism.tensor", "", "expected key.path=value"},
                      BadOverride{"=4", "", "empty key"},
                      BadOverride{"parallelism..tensor=4", "parallelism..tensor", "empty key component"},
                      BadOverride{"parallelism.tensor_parallel=4", "parallelism.tensor_parallel",
                                  "did you mean parallelism.tensor?"},
                      BadOverride{"model.num_layers.x=4", "model.num_layers", "is a value, not a mapping"},
                      BadOverride{"faults.kind=node_down", "faults", "set the whole list"},
                      BadOverride{"nccl.ALGO=Ring", "nccl.ALGO", "did you mean nccl.NCCL_ALGO?"},
                      BadOverride{"parallelism.tensor=[1, 2", "parallelism.tensor", "cannot parse the value"}));

}  // namespace
}  // namespace trainsim
