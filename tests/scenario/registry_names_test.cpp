// The scenario reads collective algorithm and training framework names from their registries
// (collective/algorithm_registry.hpp, scenario.hpp frameworks()): every registered name is accepted where its
// entry supports the collective, an unknown name is an error listing the registered ones, and the key table that
// `trainsim keys` and docs/scenario-keys.md print lists exactly the registered names.
#include <string>

#include "collective/algorithm_registry.hpp"
#include "scenario/key_table.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : " | ") + n;
  return out;
}

TEST(RegistryNames, EveryAlgorithmIsAcceptedForTheCollectivesItSupports) {
  for (const AlgorithmChoiceKey& key : kAlgorithmChoiceKeys) {
    for (const CollectiveAlgorithmInfo& a : collective_algorithms()) {
      const std::string block = std::string("{") + to_string(key.kind) + ": " + a.name + "}";
      if (a.supports(key.kind)) {
        const Scenario s = parse_scenario(edit(kValidScenario, "algorithms", block.c_str()), "test.yaml");
        EXPECT_EQ(s.algorithms.*key.field, a.id) << block;
        EXPECT_EQ(s.algorithms.for_kind(key.kind), a.id) << block;
      } else {
        EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", block.c_str()),
                              std::string("algorithms.") + to_string(key.kind), std::string(a.name) + " only runs");
      }
    }
  }
}

TEST(RegistryNames, AnUnknownAlgorithmIsRejectedNamingTheRegisteredOnes) {
  std::vector<std::string> names;
  for (const CollectiveAlgorithmInfo& a : collective_algorithms()) names.emplace_back(a.name);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", "{all_reduce: butterfly}"), "algorithms.all_reduce",
                        "expected one of " + joined(names), "'butterfly'");
  // A near miss gets a suggestion.
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "algorithms", "{all_reduce: hierarchal}"), "algorithms.all_reduce",
                        "did you mean hierarchical?");
}

TEST(RegistryNames, TheKeyTableListsTheRegisteredAlgorithms) {
  for (const AlgorithmChoiceKey& key : kAlgorithmChoiceKeys) {
    std::vector<std::string> names;
    for (const CollectiveAlgorithmInfo& a : collective_algorithms())
      if (a.supports(key.kind)) names.emplace_back(a.name);
    const ScenarioKey* declared = find_scenario_key(std::string("algorithms.") + to_string(key.kind));
    ASSERT_NE(declared, nullptr) << to_string(key.kind);
    EXPECT_EQ(declared->range, joined(names)) << to_string(key.kind);
    EXPECT_EQ(declared->default_value, to_string(CollectiveAlgorithm::Nccl));
  }
}

TEST(RegistryNames, EveryFrameworkIsAcceptedAndListed) {
  std::vector<std::string> names;
  for (const FrameworkInfo& f : frameworks()) {
    names.emplace_back(f.name);
    EXPECT_STREQ(to_string(f.id), f.name);
    EXPECT_NE(std::string(f.description), "") << f.name;
    const Scenario s = parse_scenario(edit(kValidScenario, "parallelism.framework", f.name), "test.yaml");
    EXPECT_EQ(s.parallelism.framework, f.id) << f.name;
  }
  const ScenarioKey* declared = find_scenario_key("parallelism.framework");
  ASSERT_NE(declared, nullptr);
  EXPECT_EQ(declared->range, joined(names));
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.framework", "jax"), "parallelism.framework",
                        "expected one of " + joined(names));
}

}  // namespace
}  // namespace trainsim
