// The key table (scenario/key_table.cpp) is the one declaration of every scenario key: each declared key is read by
// a reader and each key a reader reads is declared (tests/api/key_defaults_test.cpp: writing a key's declared
// default changes nothing).
#include <filesystem>
#include <set>

#include "scenario/key_table.hpp"
#include "scenario/yaml_reader.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// Scenarios that between them open every block and every kind of list element, so that every reader runs.
std::vector<std::string> every_block() {
  std::vector<std::string> out;
  std::string full =
      edit(kValidScenario, "model.moe", "{num_experts: 4, router_topk: 2, expert_ffn_hidden_size: 1024}");
  full = edit(full, "parallelism.expert", "2");
  full = edit(full, "algorithms.all_reduce", "reduction_server");
  full = edit(full, "algorithms.reduction_server", "{servers: 2}");
  full = edit(full, "nccl", "{NCCL_ALGO: Ring}");
  full = edit(full, "output", "{trace: t.json}");
  full = edit(full, "compute", "{interference: true}");
  full = edit(full, "simulation", "{seed: 1}");
  full = edit(full, "reference", "{source: test, iteration_time_s: 1.0}");
  full = edit(full, "faults",
              "[{kind: gpu_slow, rank: 1, factor: 0.5, always: true}, {kind: link_degraded, link: 'nic0.0->leaf0', "
              "factor: 0.5, at_s: 0}, {kind: link_down, link: 'nic0.0->leaf0', always: true}, "
              "{kind: nic_down, node: 0, nic: 1, always: true}, {kind: node_down, node: 1, always: true}]");
  out.push_back(full);
  out.push_back(edit(edit(kValidScenario, "simulation.network_model", "packet"), "simulation.packet_scope",
                     "{groups: [dp], min_bytes: 0}"));
  out.push_back(edit(edit(kValidScenario, "parallelism.framework", "deepspeed"), "parallelism.deepspeed",
                     "{reduce_bucket_size: 1e8}"));
  std::string spec = edit(kValidScenario, "cluster.gpu", nullptr);
  spec =
      edit(spec, "cluster.gpu_spec", "{peak_tflops: {bf16: 900}, hbm_GBps: 3000, memory_gib: 80, scale_up_GBps: 450}");
  out.push_back(spec);
  out.push_back(
      edit(edit(kValidScenario, "model", "{preset: deepseek-v3, num_layers: 4, seq_length: 1024}"), "model.mla",
           "{q_lora_rank: 1536, kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64, v_head_dim: 128}"));
  out.push_back(R"(
cluster: {gpu: H100-SXM, num_gpus: 8}
collective:
  op: all_reduce
  tool: nccl-tests
  points: [{size: 1M, busbw_GBps: 100, algbw_GBps: 50, nccl_algo: Ring}]
reference: {busbw_GBps: 100}
)");
  return out;
}

std::set<std::string> keys_read() {
  std::set<std::string> log;
  scenario_detail::set_key_access_log(&log);
  for (const std::string& yaml : every_block()) {
    try {
      (void)parse_scenario(yaml, "test.yaml");
    } catch (const std::exception& e) { ADD_FAILURE() << "a scenario of the test did not parse: " << e.what(); }
  }
  scenario_detail::set_key_access_log(nullptr);
  return log;
}

bool is_section(const std::string& path) {
  for (const ScenarioKey& k : scenario_keys())
    if (k.path.size() > path.size() && k.path.starts_with(path) &&
        (k.path[path.size()] == '.' || k.path[path.size()] == '['))
      return true;
  return false;
}

TEST(KeyTable, EveryDeclaredKeyIsReadAndEveryReadKeyIsDeclared) {
  const std::set<std::string> read = keys_read();  // paths as written, list indices included
  std::set<const ScenarioKey*> declared_and_read;
  for (const std::string& p : read) declared_and_read.insert(find_scenario_key(p));
  for (const ScenarioKey& k : scenario_keys()) {
    if (k.path == "nccl.*") continue;  // an open mapping: read by iterating it, not by name
    EXPECT_TRUE(declared_and_read.count(&k)) << k.path << " is declared but no reader reads it";
  }
  for (const std::string& p : read)
    EXPECT_TRUE(find_scenario_key(p) != nullptr || is_section(p)) << p << " is read but not declared in key_table.cpp";
}

TEST(KeyTable, PathsAreUniqueAndEveryFieldIsFilled) {
  std::set<std::string_view> seen;
  for (const ScenarioKey& k : scenario_keys()) {
    EXPECT_TRUE(seen.insert(k.path).second) << k.path << " declared twice";
    EXPECT_FALSE(k.type.empty()) << k.path;
    EXPECT_FALSE(k.default_value.empty()) << k.path;
    EXPECT_FALSE(k.help.empty()) << k.path;
  }
  EXPECT_NE(find_scenario_key("faults[12].factor"), nullptr);
  EXPECT_NE(find_scenario_key("nccl.NCCL_PROTO"), nullptr);
  EXPECT_EQ(find_scenario_key("cluster.nic_gbs"), nullptr);
}

}  // namespace
}  // namespace trainsim
