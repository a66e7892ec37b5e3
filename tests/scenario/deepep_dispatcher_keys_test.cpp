// parallelism.moe_dispatcher: flex (DeepEP) and the router-group keys it reads (model.moe.router_num_groups /
// router_group_topk): what Megatron and DeepEP refuse, each a ScenarioError naming the key (validation.cpp
// check_flex_dispatcher, model_resolve.cpp check_router_groups), and the DeepSeek-V3 preset's node-limited groups.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// kValidScenario on 16 H100 (two 8-GPU nodes), tensor 1 x pipeline 2 x data 8, 16 experts over expert 8 with
// expert_tensor 1: the expert-parallel groups fill a node each.
std::string flex_job() {
  std::string y = edit(kValidScenario, "model.moe", "{num_experts: 16, router_topk: 4}");
  y = edit(y, "parallelism.tensor", "1");
  y = edit(y, "parallelism.expert", "8");
  y = edit(y, "parallelism.expert_tensor", "1");
  return edit(y, "parallelism.moe_dispatcher", "flex");
}

TEST(DeepEpDispatcherKeys, FlexIsAcceptedWithRouterGroups) {
  const Scenario s = parse_scenario(edit(flex_job(), "model.moe",
                                         "{num_experts: 16, router_topk: 4, "
                                         "router_num_groups: 4, router_group_topk: 2}"),
                                    "test.yaml");
  EXPECT_EQ(s.parallelism.moe_dispatcher, MoeDispatcher::Flex);
  EXPECT_EQ(s.model.moe.router_num_groups, 4);
  EXPECT_EQ(s.model.moe.router_group_topk, 2);
  const Scenario plain = parse_scenario(flex_job(), "test.yaml");
  EXPECT_EQ(plain.model.moe.router_num_groups, 0);
  EXPECT_EQ(plain.model.moe.router_group_topk, 0);
}

TEST(DeepEpDispatcherKeys, TheDeepSeekV3PresetCarriesItsNodeLimitedGroups) {
  const Scenario s = parse_scenario(
      edit(edit(kValidScenario, "model", "{preset: deepseek-v3}"), "parallelism.pipeline", "1"), "test.yaml");
  EXPECT_EQ(s.model.moe.router_num_groups, 8);  // config.json n_group
  EXPECT_EQ(s.model.moe.router_group_topk, 4);  // topk_group
}

TEST(DeepEpDispatcherKeys, WhatMegatronAndDeepEpRefuse) {
  EXPECT_SCENARIO_ERROR(edit(flex_job(), "parallelism.expert", "1"), "parallelism.moe_dispatcher", "needs expert > 1");
  // tensor 2 x data 4 per stage: expert 4 x expert_tensor 2 tiles it, but DeepEP is modelled with expert_tensor 1.
  std::string tp2 = edit(edit(flex_job(), "parallelism.tensor", "2"), "parallelism.expert_tensor", "2");
  tp2 = edit(tp2, "parallelism.expert", "4");
  tp2 = edit(tp2, "parallelism.sequence_parallel", "true");
  EXPECT_SCENARIO_ERROR(tp2, "parallelism.expert_tensor", "expert_tensor 1", "got expert_tensor 2");
  EXPECT_SCENARIO_ERROR(edit(flex_job(), "model.moe.capacity_factor", "1.0"), "model.moe.capacity_factor", "dropless",
                        "remove the key");
  EXPECT_SCENARIO_ERROR(edit(flex_job(), "cluster.gpu", "MI300X"), "parallelism.moe_dispatcher", "Ampere and Hopper",
                        "AMD");
  EXPECT_SCENARIO_ERROR(edit(flex_job(), "cluster.gpu", "B200"), "parallelism.moe_dispatcher", "Ampere and Hopper",
                        "sm 100");
  // DeepEP has no config for 12 ranks.
  std::string twelve =
      edit(edit(kValidScenario, "model.moe", "{num_experts: 24, router_topk: 4}"), "parallelism.tensor", "1");
  twelve = edit(edit(twelve, "cluster.num_gpus", "24"), "parallelism.pipeline", "1");
  twelve = edit(edit(twelve, "parallelism.expert", "12"), "parallelism.expert_tensor", "1");
  twelve = edit(edit(twelve, "parallelism.moe_dispatcher", "flex"), "training.global_batch_size", "48");
  EXPECT_SCENARIO_ERROR(twelve, "parallelism.expert", "configs for expert-parallel groups of 2, 4, 8, 16", "got 12");
  // 16 experts over 16 ranks on nodes of 4 GPUs: DeepEP's internode kernels take 8 per node.
  std::string four = edit(edit(flex_job(), "cluster.gpus_per_node", "4"), "cluster.nics_per_node", "4");
  four = edit(four, "parallelism.pipeline", "1");
  four = edit(four, "parallelism.expert", "16");
  EXPECT_SCENARIO_ERROR(four, "parallelism.moe_dispatcher", "8 GPUs per node", "got expert 16 over nodes of 4");
}

TEST(DeepEpDispatcherKeys, RouterGroupsMustSplitTheExperts) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.moe", "{router_num_groups: 4, router_group_topk: 2}"),
                        "model.moe.router_num_groups", "need an MoE model");
  const auto with = [](const char* moe) { return edit(flex_job(), "model.moe", moe); };
  EXPECT_SCENARIO_ERROR(with("{num_experts: 16, router_topk: 4, router_num_groups: 3, router_group_topk: 1}"),
                        "model.moe.router_num_groups", "does not divide num_experts 16");
  EXPECT_SCENARIO_ERROR(with("{num_experts: 16, router_topk: 4, router_num_groups: 4, router_group_topk: 5}"),
                        "model.moe.router_group_topk", "exceeds router_num_groups 4");
  EXPECT_SCENARIO_ERROR(with("{num_experts: 16, router_topk: 4, router_num_groups: 8, router_group_topk: 1}"),
                        "model.moe.router_group_topk", "fewer than router_topk 4");
  EXPECT_SCENARIO_ERROR(with("{num_experts: 16, router_topk: 4, router_num_groups: 4}"), "model.moe.router_group_topk",
                        "needs router_group_topk");
  EXPECT_SCENARIO_ERROR(with("{num_experts: 16, router_topk: 4, router_group_topk: 2}"), "model.moe.router_num_groups",
                        "needs router_num_groups");
}

}  // namespace
}  // namespace trainsim
