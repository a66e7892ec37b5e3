// Today's Megatron recipes in the generated workload and the memory model: selective recompute by module
// (Megatron's --recompute-modules), DeepSeek-V3's MTP blocks, explicit pipeline layouts and MoE parallel folding
// (expert groups across tensor x data with expert_tensor 1).
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"
#include "workload/parallel_plan.hpp"

namespace trainsim {
namespace {

// A small DeepSeek-shaped model on 32 H100s: tensor 2 x pipeline 2 x data 8, expert 4 with expert_tensor 1
// (expert-DP 4). Layer 0 dense, layers 1-3 MoE with one shared expert; MLA with q and kv LoRA; untied embeddings.
std::string recipe_yaml(const std::string& training_extra, const std::string& model_extra = "",
                        const std::string& parallel_extra = "") {
  return R"(
model:
  family: deepseek
  num_layers: 4
  hidden_size: 512
  num_attention_heads: 8
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: 1024
  untie_embeddings: true
  mla: {q_lora_rank: 128, kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 32}
  moe: {num_experts: 8, router_topk: 2, expert_ffn_hidden_size: 256, shared_experts: 1, first_dense_layers: 1}
)" + model_extra +
         R"(
training:
  global_batch_size: 32
  micro_batch_size: 1
  recompute: selective
)" + training_extra +
         R"(
parallelism:
  tensor: 2
  pipeline: 2
  expert: 4
  expert_tensor: 1
  sequence_parallel: true
)" + parallel_extra +
         R"(
cluster:
  gpu: H100-SXM
  num_gpus: 32
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";
}

Scenario recipe_scenario(const std::string& training_extra, const std::string& model_extra = "",
                         const std::string& parallel_extra = "") {
  return parse_scenario(recipe_yaml(training_extra, model_extra, parallel_extra), "recipes.yaml");
}

// Names of the ops a simulated rank issues in `phase` (all simulated ranks: one per pipeline stage).
std::set<std::string> op_names(const Workload& wl, Phase phase, int stage = -1) {
  std::set<std::string> out;
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    if (stage >= 0 && static_cast<int>(r) != stage) continue;
    for (const Op& op : wl.ranks[r].ops)
      if (op.phase == phase) out.insert(wl.names[op.name]);
  }
  return out;
}

TEST(RecomputeModules, DefaultRecomputesCoreAttentionOnly) {
  const auto redo = op_names(generate_workload(recipe_scenario("")), Phase::Recompute);
  EXPECT_EQ(redo, (std::set<std::string>{"core_attn.fwd"}));
  // An empty list: selective with nothing to re-run.
  EXPECT_TRUE(op_names(generate_workload(recipe_scenario("  recompute_modules: []\n")), Phase::Recompute).empty());
}

TEST(RecomputeModules, EachModuleReRunsItsOwnOps) {
  const auto redo = [](const char* modules) {
    return op_names(generate_workload(recipe_scenario(std::string("  recompute_modules: ") + modules + "\n")),
                    Phase::Recompute);
  };
  const auto up = redo("[mla_up_proj]");
  EXPECT_TRUE(up.count("mla.q_up") && up.count("mla.kv_up") && up.count("mla.rope_concat") &&
              up.count("tp.ag.mla_kv_latent"));
  EXPECT_FALSE(up.count("core_attn.fwd"));
  EXPECT_FALSE(up.count("mla.kv_down"));  // the down-projections are kept
  const auto mlp = redo("[mlp]");         // layer 0 is dense
  EXPECT_TRUE(mlp.count("fc1") && mlp.count("fc2") && mlp.count("tp.ag.fc1_input"));
  EXPECT_FALSE(mlp.count("experts.fc1"));  // never MoE layers
  const auto moe = redo("[moe]");
  EXPECT_TRUE(moe.count("moe.router") && moe.count("ep.alltoall.dispatch") && moe.count("experts.fc1") &&
              moe.count("ep.alltoall.combine") && moe.count("shared_experts.fc1"));
  EXPECT_FALSE(moe.count("pre_mlp_norm"));  // the norm sits outside the MoE layer's checkpoint
  EXPECT_EQ(redo("[moe_act]"), (std::set<std::string>{"experts.swiglu"}));
  const auto shared = redo("[shared_experts]");
  EXPECT_TRUE(shared.count("shared_experts.fc1") && shared.count("shared_experts.fc2"));
  EXPECT_FALSE(shared.count("experts.fc1"));
  EXPECT_EQ(redo("[layernorm]"), (std::set<std::string>{"input_norm", "pre_mlp_norm"}));
  // moe covers moe_act and shared_experts: nothing re-run twice.
  const Workload both = generate_workload(recipe_scenario("  recompute_modules: [moe, moe_act, shared_experts]\n"));
  int swiglu = 0;
  for (const Op& op : both.ranks[1].ops)
    if (op.phase == Phase::Recompute && both.names[op.name] == "experts.swiglu" && op.micro_batch == 0 && op.layer == 3)
      ++swiglu;
  EXPECT_EQ(swiglu, 1);
}

TEST(RecomputeModules, EachModuleKeepsLessActivationMemory) {
  const double none = estimate_memory(recipe_scenario("  recompute_modules: []\n"))[0].activations_per_micro_batch_gib;
  for (const char* m : {"[mla_up_proj]", "[mlp]", "[moe]", "[moe_act]", "[shared_experts]", "[layernorm]"}) {
    const double with = estimate_memory(recipe_scenario(std::string("  recompute_modules: ") + m + "\n"))[0]
                            .activations_per_micro_batch_gib;
    EXPECT_LT(with, none) << m;
  }
  // moe drops more than moe_act or shared_experts alone.
  const auto act = [](const char* m) {
    return estimate_memory(recipe_scenario(std::string("  recompute_modules: ") + m + "\n"))[1]
        .activations_per_micro_batch_gib;
  };
  EXPECT_LT(act("[moe]"), act("[moe_act]"));
  EXPECT_LT(act("[moe]"), act("[shared_experts]"));
}

TEST(Mtp, LastStageRunsTheMtpBlock) {
  const Workload wl = generate_workload(recipe_scenario("", "  mtp_layers: 1\n"));
  const auto fwd = op_names(wl, Phase::Forward, 1);
  for (const char* name : {"mtp.embedding", "mtp.enorm", "mtp.hnorm", "mtp.eh_proj", "tp.ag.mtp_eh_output",
                           "mtp.final_norm", "mtp.lm_head", "mtp.cross_entropy.max"})
    EXPECT_TRUE(fwd.count(name)) << name;
  EXPECT_FALSE(op_names(wl, Phase::Forward, 0).count("mtp.eh_proj"));
  const auto bwd = op_names(wl, Phase::Backward, 1);
  for (const char* name : {"mtp.eh_proj.dgrad", "mtp.eh_proj.wgrad", "mtp.lm_head.wgrad", "mtp.embedding.bwd"})
    EXPECT_TRUE(bwd.count(name)) << name;
  // The MTP block's transformer layer is layer 4, an MoE layer like the last decoder layer.
  bool routed = false;
  for (const Op& op : wl.ranks[1].ops) routed |= op.layer == 4 && wl.names[op.name] == "moe.router";
  EXPECT_TRUE(routed);
  // Untied embeddings: the MTP stage's embedding copy is all-reduced with the first stage's.
  for (int stage : {0, 1})
    EXPECT_TRUE(op_names(wl, Phase::GradSync, stage).count("embedding.grad_all_reduce")) << stage;
  EXPECT_FALSE(op_names(generate_workload(recipe_scenario("")), Phase::GradSync, 0).count("embedding.grad_all_reduce"));
}

TEST(Mtp, AddsWeightsAndActivationsToItsStage) {
  const auto without = estimate_memory(recipe_scenario(""));
  const auto with = estimate_memory(recipe_scenario("", "  mtp_layers: 1\n"));
  EXPECT_DOUBLE_EQ(with[0].weights_gib, without[0].weights_gib);
  EXPECT_GT(with[1].weights_gib, without[1].weights_gib);
  EXPECT_GT(with[1].activations_per_micro_batch_gib, without[1].activations_per_micro_batch_gib);
}

TEST(PipelineLayout, PlacesLayersAndMtpWhereTheLayoutSays) {
  // "Et|tttmL": stage 0 holds the embedding and layer 0, stage 1 layers 1-3, the MTP block and the loss.
  const Workload wl = generate_workload(recipe_scenario("", "  mtp_layers: 1\n", "  pipeline_layout: \"Et|tttmL\"\n"));
  std::set<int> stage0, stage1;
  for (const Op& op : wl.ranks[0].ops)
    if (op.phase == Phase::Forward && op.layer >= 0) stage0.insert(op.layer);
  for (const Op& op : wl.ranks[1].ops)
    if (op.phase == Phase::Forward && op.layer >= 0) stage1.insert(op.layer);
  EXPECT_EQ(stage0, (std::set<int>{0}));
  EXPECT_EQ(stage1, (std::set<int>{1, 2, 3, 4}));
  const auto mem = estimate_memory(recipe_scenario("", "  mtp_layers: 1\n", "  pipeline_layout: \"Et|tttmL\"\n"));
  EXPECT_EQ(mem[0].layers, 1);
  EXPECT_EQ(mem[1].layers, 3);
}

// DeepSeek-V3's recipe at TP 2 x DP 32 with EP 64: Megatron's parallel folding with expert_tensor 1 forms one
// expert group of all 64 ranks of a pipeline stage (the expert view etp 1 x ep 64 x edp 1), across the TP pairs.
TEST(ParallelFolding, ExpertGroupsSpanTensorAndData) {
  const ParallelPlan plan(2, 1, 32, 16, 64, 1);
  EXPECT_EQ(plan.expert_data(), 1);
  const auto ep = plan.group_members(GroupKind::EP, 0);
  ASSERT_EQ(ep.size(), 64u);
  EXPECT_EQ(ep.front(), 0);
  EXPECT_EQ(ep.back(), 63);  // ranks 0 and 1 (one TP pair) are both in it
  EXPECT_EQ(plan.group_members(GroupKind::ExpertDP, 5), (std::vector<int>{5}));
  EXPECT_EQ(plan.group_members(GroupKind::EP, 64).front(), 64);  // the next pipeline stage's group
  // Dense DP groups stay stride-2 (over data, per TP rank).
  EXPECT_EQ(plan.group_members(GroupKind::DP, 0)[1], 2);
}

TEST(ParallelFolding, ScenarioAcceptsExpertTensorOneAndExplainsTheDefault) {
  // tensor 2 x data 8 = 16 ranks per stage: expert 16 folds over them with expert_tensor 1, not with the default 2.
  std::string y = recipe_yaml("", "", "");
  y.replace(y.find("num_experts: 8"), 14, "num_experts: 16");
  y.replace(y.find("  expert: 4\n"), 12, "  expert: 16\n");
  EXPECT_NO_THROW(parse_scenario(y, "fold.yaml"));
  // Not given: Megatron's default (tensor 2) does not fit, 1 does, so 1 is taken and said.
  y.erase(y.find("  expert_tensor: 1\n"), 19);
  const Scenario inferred = parse_scenario(y, "fold.yaml");
  EXPECT_EQ(inferred.parallelism.expert_tensor, 1);
  ASSERT_EQ(inferred.inferred.size(), 1u);
  EXPECT_EQ(inferred.inferred[0].key, "parallelism.expert_tensor");
  // Given as the default explicitly: rejected, with the folding hint.
  y.replace(y.find("  expert: 16\n"), 13, "  expert: 16\n  expert_tensor: 2\n");
  try {
    parse_scenario(y, "fold.yaml");
    FAIL() << "expert 16 with expert_tensor = tensor 2 over 16 ranks should be rejected";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "parallelism.expert");
    EXPECT_NE(std::string(e.what()).find("expert_tensor = tensor 2, Megatron's default"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace trainsim
