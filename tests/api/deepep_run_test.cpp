// A run with the DeepEP dispatcher (parallelism.moe_dispatcher: flex) end to end: across two nodes it sends fewer
// copies of each token over the network than the all-to-all dispatcher, so the iteration is shorter, analytical and
// flow-level alike; --explain names the exchange and its copies.
#include <gtest/gtest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

// 16 H100 on two nodes, expert 16 (expert_tensor 1) over them: 16 experts, top-4, 4 groups of 4 with 2 chosen.
Scenario deepep_job(const std::string& dispatcher, const std::string& network) {
  return parse_scenario(R"(
model:
  family: mixtral
  num_layers: 2
  hidden_size: 1024
  num_attention_heads: 8
  num_query_groups: 8
  ffn_hidden_size: 2048
  vocab_size: 1024
  seq_length: 2048
  moe: {num_experts: 16, router_topk: 4, expert_ffn_hidden_size: 512, router_num_groups: 4, router_group_topk: 2}
training: {global_batch_size: 32, micro_batch_size: 1, precision: bf16}
parallelism: {tensor: 1, pipeline: 1, expert: 16, expert_tensor: 1, moe_dispatcher: )" +
                            dispatcher + R"(}
cluster: {gpu: H100-SXM, num_gpus: 16, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 100}
simulation: {network_model: )" +
                            network + R"(}
)",
                        "deepep.yaml");
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
