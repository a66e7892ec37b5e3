// The key table's defaults (scenario/key_table.cpp) are the readers' own: writing a key's declared default into a
// scenario gives the same result as leaving it out.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <string>

#include "../scenario/scenario_test_support.hpp"
#include "report/reports.hpp"
#include "scenario/key_table.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// A declared default that is a value (not derived, required or "not stated") is what the reader assumes: writing it
// gives the same result as leaving it out.
std::string result_of(const std::string& yaml) {
  RunResult r = run_scenario(parse_scenario(yaml, "test.yaml")).result;
  r.simulation.wall_s = 0;
  return to_json(r).dump();
}

bool written(const std::string& yaml, const std::string& path) {
  YAML::Node node = YAML::Load(yaml);
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node.IsMap() || !node[key]) return false;
    node.reset(node[key]);
    if (dot == std::string::npos) return true;
    start = dot + 1;
  }
}

TEST(KeyTable, WritingALiteralDefaultChangesNothing) {
  const std::string dense = kValidScenario;
  const std::string moe = edit(edit(kValidScenario, "model.moe", "{num_experts: 4, expert_ffn_hidden_size: 1024}"),
                               "parallelism.expert", "2");
  const std::string deepspeed = edit(kValidScenario, "parallelism.framework", "deepspeed");
  const std::string fat_tree = edit(kValidScenario, "cluster.network.topology", "fat-tree");
  const std::string packet = edit(kValidScenario, "simulation.network_model", "packet");
  int checked = 0;
  std::map<const std::string*, std::string> base_results;  // each base simulated once
  for (const ScenarioKey& k : scenario_keys()) {
    const std::string_view d = k.default_value;
    if (d == "-" || d.starts_with("=") || d.starts_with("required")) continue;
    const std::string path(k.path);
    // Blocks that describe something else than the job (a measurement, a benchmark, a datasheet GPU, events).
    if (path.starts_with("reference.") || path.starts_with("collective.") || path.starts_with("cluster.gpu_spec.") ||
        path.starts_with("faults[") || path == "model.family")
      continue;
    // The key's own context: MoE keys on an MoE model, DeepSpeed's on DeepSpeed, dual-ToR on a fat-tree, the packet
    // scope and host links at packet level.
    const bool packet_level = path.starts_with("simulation.packet_scope.") || path == "simulation.packet_host_links";
    const std::string& base = path.starts_with("model.moe.")               ? moe
                              : path.starts_with("parallelism.deepspeed.") ? deepspeed
                              : path == "cluster.network.dual_tor"         ? fat_tree
                              : packet_level                               ? packet
                                                                           : dense;
    if (written(base, path)) continue;  // the base sets it: its default is not what the base runs
    try {
      auto [it, fresh] = base_results.try_emplace(&base);
      if (fresh) it->second = result_of(base);
      EXPECT_TRUE(result_of(edit(base, path, std::string(d).c_str())) == it->second)
          << path << ": writing the declared default " << d << " changes the result";
    } catch (const std::exception& e) {
      ADD_FAILURE() << path << ": writing the declared default " << d << " is refused: " << e.what();
    }
    ++checked;
  }
  EXPECT_GT(checked, 40);
}

}  // namespace
}  // namespace trainsim
