// Wrong types and out-of-range values name the key and what was expected.
#include "scenario_test_support.hpp"

#include <yaml-cpp/yaml.h>

#include "scenario/yaml_reader.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(ValueTypes, StringForAnInteger) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.num_layers", "abc"), "model.num_layers",
                        "expected a positive integer, got 'abc'");
}

TEST(ValueTypes, FractionForAnInteger) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.tensor", "2.5"), "parallelism.tensor",
                        "expected a positive integer, got '2.5'");
}

// Replaces the first `from` in the base scenario (the YAML emitter behind edit() drops quotes).
std::string replaced(const std::string& from, const std::string& to) {
  std::string yaml = kValidScenario;
  const auto at = yaml.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return yaml.replace(at, from.size(), to);
}

TEST(ValueTypes, QuotedNumberIsAString) {
  EXPECT_SCENARIO_ERROR(replaced("tensor: 2", "tensor: \"2\""), "parallelism.tensor",
                        "expected a positive integer, got the string '2'");
  EXPECT_SCENARIO_ERROR(replaced("nic_gbps: 400", "nic_gbps: '400'"), "cluster.nic_gbps",
                        "expected a positive number, got the string '400'");
}

TEST(ValueTypes, ListForAScalar) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.global_batch_size", "[1, 2]"), "training.global_batch_size",
                        "expected a positive integer, got a list");
}

TEST(ValueTypes, MappingForAScalar) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.nic_gbps", "{a: 1}"), "cluster.nic_gbps",
                        "expected a positive number, got a mapping");
}

TEST(ValueTypes, IntegerOverflow) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.num_layers", "99999999999"), "model.num_layers", "2^31");
}

TEST(ValueTypes, Booleans) {
  // YAML's own booleans (yaml-cpp also reads YAML 1.1's yes/no) are accepted; a quoted one or a word is not.
  EXPECT_NO_THROW(parse_scenario(edit(kValidScenario, "training.flash_attention", "yes"), "test.yaml"));
  EXPECT_SCENARIO_ERROR(replaced("precision: bf16", "precision: bf16\n  flash_attention: \"true\""),
                        "training.flash_attention", "expected true or false, got the string 'true'");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.flash_attention", "maybe"), "training.flash_attention",
                        "expected true or false, got 'maybe'");
}

// The scenario reader spells booleans itself (yaml-cpp's converter is not safe to run on several threads): it
// accepts exactly the plain scalars yaml-cpp reads as booleans, with the same value.
TEST(ValueTypes, BooleansAreTheOnesYamlCppReads) {
  for (const char* word :
       {"y",    "Y",    "n",     "N",    "yes",   "Yes",   "YES",   "yEs",   "no",   "No",     "NO",    "nO",  "true",
        "True", "TRUE", "tRUE",  "TrUe", "false", "False", "FALSE", "on",    "On",   "ON",     "oN",    "off", "Off",
        "OFF",  "oFF",  "maybe", "1",    "0",     "t",     "f",     "truee", "yess", "'true'", "\"no\""}) {
    const YAML::Node node = YAML::Load(word);
    bool expected = false;
    const bool yaml_reads = node.Tag() != "!" && YAML::convert<bool>::decode(node, expected);
    bool ours = false, accepted = true;
    try {
      ours = scenario_detail::parse_bool(node, "k", "f.yaml");
    } catch (const ScenarioError&) { accepted = false; }
    EXPECT_EQ(accepted, yaml_reads) << word;
    if (accepted && yaml_reads) { EXPECT_EQ(ours, expected) << word; }
  }
}

TEST(ValueTypes, NonFiniteNumber) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.nic_gbps", ".inf"), "cluster.nic_gbps", "positive number");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.nic_gbps", "nan"), "cluster.nic_gbps", "positive number");
}

// Sizes, counts and bandwidths must be positive; each names its own key.
TEST(ValueTypes, ZeroOrNegativeSizes) {
  const struct {
    const char* key;
    const char* value;
  } cases[] = {
      {"model.num_layers", "0"},
      {"model.hidden_size", "-4096"},
      {"model.num_attention_heads", "0"},
      {"model.seq_length", "0"},
      {"model.vocab_size", "-1"},
      {"model.ffn_hidden_size", "0"},
      {"training.global_batch_size", "0"},
      {"training.micro_batch_size", "0"},
      {"parallelism.tensor", "0"},
      {"parallelism.pipeline", "-2"},
      {"parallelism.data", "0"},
      {"parallelism.context", "0"},
      {"cluster.num_gpus", "0"},
      {"cluster.gpus_per_node", "0"},
      {"cluster.nic_gbps", "0"},
      {"cluster.nics_per_node", "0"},
      {"cluster.scale_up.bandwidth_GBps", "-450"},
      {"cluster.scale_up.domain_size", "0"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.key);
    EXPECT_SCENARIO_ERROR(edit(kValidScenario, c.key, c.value), c.key, "expected a positive",
                          std::string("got '") + c.value + "'");
  }
}

TEST(ValueTypes, NegativeWhereZeroIsFine) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "simulation.threads", "-1"), "simulation.threads",
                        "expected a non-negative integer");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.link_latency_ns", "-5"),
                        "cluster.network.link_latency_ns", "expected a non-negative number");
}

TEST(ValueTypes, EnumsListTheAllowedValues) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.precision", "bf32"), "training.precision",
                        "expected one of bf16 | fp16 | fp8 | fp4 | fp32, got 'bf32'");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "simulation.network_model", "packets"), "simulation.network_model",
                        "analytical | flow | packet", "did you mean packet?");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.framework", "jax"), "parallelism.framework",
                        "megatron | deepspeed | fsdp");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.topology", "torus"), "cluster.network.topology",
                        "rail-optimized | fat-tree | hpn | dragonfly | ideal");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.family", "bert"), "model.family",
                        "gpt | llama | mixtral | deepseek");
}

TEST(ValueTypes, EnumsIgnoreCase) {
  const Scenario s = parse_scenario(edit(kValidScenario, "training.precision", "BF16"), "test.yaml");
  EXPECT_EQ(s.training.precision, Precision::BF16);
}

TEST(ValueTypes, ZeroStageRange) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.zero_stage", "4"), "parallelism.zero_stage",
                        "expected 0, 1, 2 or 3, got 4");
}

TEST(ValueTypes, SyntaxErrorNamesLine) {
  const auto e = test::parse_error("model:\n  num_layers: [1, 2\n");
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.file, "test.yaml");
  EXPECT_NE(e.what.find("YAML syntax error at line"), std::string::npos) << e.what;
}

}  // namespace
}  // namespace trainsim
