// What Megatron rejects for mixture-of-experts jobs, each a ScenarioError naming the key to change
// (megatron/training/arguments.py, core/model_parallel_config.py, parallel_state.py; validation.cpp
// check_experts), and the MoE parallelism keys this implementation adds (parallelism.expert_tensor,
// parallelism.moe_dispatcher; docs/moe.md).
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// kValidScenario: tensor 2 x pipeline 2 on 16 GPUs, data 4 (derived), sequence parallelism on.
std::string moe(const char* experts = "8") {
  return edit(kValidScenario, "model.moe", (std::string("{num_experts: ") + experts + "}").c_str());
}

TEST(MoeValidation, ExpertTensorDefaultsToTensorAndDispatcherToAllToAll) {
  const Scenario s = parse_scenario(edit(moe(), "parallelism.expert", "4"), "test.yaml");
  EXPECT_EQ(s.parallelism.expert_tensor, 2);
  EXPECT_EQ(s.parallelism.moe_dispatcher, MoeDispatcher::AllToAll);
  std::string y = edit(moe(), "parallelism.expert_tensor", "1");
  y = edit(y, "parallelism.moe_dispatcher", "allgather");
  const Scenario t = parse_scenario(y, "test.yaml");
  EXPECT_EQ(t.parallelism.expert_tensor, 1);
  EXPECT_EQ(t.parallelism.moe_dispatcher, MoeDispatcher::AllGather);
  EXPECT_SCENARIO_ERROR(edit(moe(), "parallelism.moe_dispatcher", "deepep"), "parallelism.moe_dispatcher", "alltoall",
                        "allgather", "flex");
}

// An moe block that forgot num_experts would run dense without a word: its other keys are refused, naming them.
TEST(MoeValidation, MoeKeysOnADenseModelAreRefused) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.moe.router_topk", "2"), "model.moe.router_topk",
                        "needs an MoE model", "num_experts is 0 or missing");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.moe.capacity_factor", "1.25"), "model.moe.capacity_factor",
                        "needs an MoE model");
  EXPECT_NO_THROW(parse_scenario(edit(kValidScenario, "model.moe.num_experts", "0"), "test.yaml"));
}

TEST(MoeValidation, ExpertParallelMustDivideExperts) {
  EXPECT_SCENARIO_ERROR(edit(moe("6"), "parallelism.expert", "4"), "parallelism.expert",
                        "model.moe.num_experts 6 is not divisible by expert 4");
}

// The expert view world = expert_tensor x expert x expert-data x pipeline: t_e x e must divide the stage's
// tensor x context x data = 2 x 1 x 4 = 8 ranks.
TEST(MoeValidation, ExpertRanksMustTileAPipelineStage) {
  std::string y = edit(edit(moe(), "parallelism.expert", "8"), "parallelism.expert_tensor", "2");
  EXPECT_SCENARIO_ERROR(y, "parallelism.expert", "expert 8 does not divide data 4 x context 1 = 4");
  y = edit(edit(moe(), "parallelism.expert", "4"), "parallelism.expert_tensor", "4");
  EXPECT_SCENARIO_ERROR(y, "parallelism.expert_tensor", "expert_tensor 4 x expert 4 = 16 does not divide tensor 2",
                        "= 8");
  y = edit(edit(moe(), "parallelism.expert", "8"), "parallelism.expert_tensor", "1");  // 1 x 8 = 8 divides 8
  EXPECT_EQ(parse_scenario(y, "test.yaml").parallelism.expert, 8);
}

// "When using MoE and tensor parallelism, sequence parallelism must be used."
TEST(MoeValidation, TensorParallelMoeNeedsSequenceParallel) {
  EXPECT_SCENARIO_ERROR(edit(moe(), "parallelism.sequence_parallel", "false"), "parallelism.sequence_parallel",
                        "needs sequence_parallel: true");
  // With tensor 1 there is nothing to require.
  std::string y = edit(edit(moe(), "parallelism.tensor", "1"), "parallelism.sequence_parallel", "false");
  EXPECT_NO_THROW(parse_scenario(y, "test.yaml"));
}

// "Expert parallelism is not supported with fp16 training."
TEST(MoeValidation, ExpertParallelRejectsFp16) {
  std::string y = edit(edit(moe(), "parallelism.expert", "2"), "training.precision", "fp16");
  EXPECT_SCENARIO_ERROR(y, "training.precision", "fp16", "use bf16");
  EXPECT_NO_THROW(parse_scenario(edit(moe(), "training.precision", "fp16"), "test.yaml"));  // expert 1: allowed
}

TEST(MoeValidation, OnlyMegatronSimulatesMoe) {
  for (const char* fw : {"deepspeed", "fsdp"}) {
    std::string y = edit(edit(moe(), "parallelism.framework", fw), "parallelism.zero_stage", "1");
    y = edit(y, "parallelism.pipeline", "1");
    y = edit(y, "training.global_batch_size", "64");
    EXPECT_SCENARIO_ERROR(y, "parallelism.framework", "framework megatron");
  }
}

TEST(MoeValidation, ExpertKeysNeedAnMoeModel) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.expert_tensor", "1"), "parallelism.expert_tensor",
                        "needs an MoE model");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.expert", "2"), "parallelism.expert", "needs an MoE model");
}

// Expert fc1/fc2 split over expert-TP, shared experts over TP.
TEST(MoeValidation, ExpertWidthsDivideTheirTensorGroups) {
  std::string y = edit(moe(), "model.moe.expert_ffn_hidden_size", "1001");
  EXPECT_SCENARIO_ERROR(y, "parallelism.tensor",
                        "expert_ffn_hidden_size 1001 is not divisible by parallelism.tensor 2");
  y = edit(edit(y, "parallelism.expert_tensor", "1"), "model.moe.shared_experts", "1");
  EXPECT_SCENARIO_ERROR(y, "parallelism.tensor", "shared-expert width");
}

}  // namespace
}  // namespace trainsim
