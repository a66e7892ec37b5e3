// The keys of today's Megatron recipes (issue 14 item 2): parallelism.pipeline_layout (Megatron's
// pipeline_model_parallel_layout), account_for_embedding/loss_in_pipeline_split, training.recompute_modules and
// model.mtp_layers, accepted as Megatron accepts them and rejected, naming the key, where Megatron rejects them.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// kValidScenario: 24 layers, tensor 2 x pipeline 2 x data 4 on 16 GPUs.
std::string with_layout(const char* layout) {
  return edit(kValidScenario, "parallelism.pipeline_layout", (std::string("\"") + layout + "\"").c_str());
}

TEST(PipelineLayout, ExpandsRepeatsAndPlacesLayers) {
  // X*n repeats; 11 + 13 = 24 decoder layers on 2 stages.
  const Scenario s = parse_scenario(with_layout("Et*11|t*13L"), "test.yaml");
  ASSERT_EQ(s.parallelism.pipeline_layout_stages.size(), 2u);
  EXPECT_EQ(s.parallelism.pipeline_layout_stages[0], "E" + std::string(11, 't'));
  EXPECT_EQ(s.parallelism.pipeline_layout_stages[1], std::string(13, 't') + "L");
  // Groups, commas (cosmetic) and a repeated character inside a group.
  const Scenario g = parse_scenario(with_layout("E,t*3,(t*3|)*1,t*9,(t|)*0,t*9L"), "test.yaml");
  EXPECT_EQ(g.parallelism.pipeline_layout_stages[0], "E" + std::string(6, 't'));
  EXPECT_EQ(g.parallelism.pipeline_layout_stages[1], std::string(18, 't') + "L");
}

TEST(PipelineLayout, VirtualPipelineComesFromTheLayoutWhenNotGiven) {
  const Scenario s = parse_scenario(with_layout("Et*6|(t*6|)*2t*6L"), "test.yaml");
  EXPECT_EQ(s.parallelism.virtual_pipeline, 2);
}

TEST(PipelineLayout, WrongNumberOfStages) {
  EXPECT_SCENARIO_ERROR(with_layout("Et*8|t*8|t*8L"), "parallelism.pipeline_layout", "3 stages",
                        "not a multiple of parallelism.pipeline 2");
  std::string yaml = edit(with_layout("Et*6|(t*6|)*2t*6L"), "parallelism.virtual_pipeline", "3");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.pipeline_layout", "4 stages", "virtual_pipeline 3 = 6");
}

TEST(PipelineLayout, LayerCountsMustMatchTheModel) {
  EXPECT_SCENARIO_ERROR(with_layout("Et*11|t*12L"), "parallelism.pipeline_layout", "23 decoder layers (t)",
                        "model.num_layers is 24");
  EXPECT_SCENARIO_ERROR(with_layout("Et*12|t*12mL"), "parallelism.pipeline_layout", "1 MTP layers (m)",
                        "model.mtp_layers is 0");
}

TEST(PipelineLayout, EmbeddingFirstAndLossLast) {
  EXPECT_SCENARIO_ERROR(with_layout("tE*1t*11|t*12L"), "parallelism.pipeline_layout", "first layer must be E", "'t'");
  EXPECT_SCENARIO_ERROR(with_layout("Et*12|Lt*12"), "parallelism.pipeline_layout", "last layer must be L", "'t'");
  EXPECT_SCENARIO_ERROR(with_layout("Et*12|Et*12L"), "parallelism.pipeline_layout",
                        "E (the embedding) appears 2 times");
  EXPECT_SCENARIO_ERROR(with_layout("Et*12L|t*12L"), "parallelism.pipeline_layout", "appears 2 times");
}

TEST(PipelineLayout, MtpPlacement) {
  std::string yaml = edit(with_layout("Et*12|t*12mL"), "model.mtp_layers", "1");
  EXPECT_EQ(parse_scenario(yaml, "test.yaml").parallelism.pipeline_layout_stages[1], std::string(12, 't') + "mL");
  // Decoder layers after an MTP layer.
  EXPECT_SCENARIO_ERROR(edit(with_layout("Et*12|t*11mtL"), "model.mtp_layers", "1"), "parallelism.pipeline_layout",
                        "must all come before the MTP layers");
  // MTP in a chunk other than the rank's last (pipeline 2 x virtual 2: entry 1 is chunk 0 of rank 1).
  yaml = edit(edit(with_layout("Et*24|m||L"), "model.mtp_layers", "1"), "parallelism.virtual_pipeline", "2");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.pipeline_layout", "stage 1 (model chunk 0 of pipeline rank 1)",
                        "last virtual pipeline chunk");
  // Two MTP layers in two stages.
  yaml = edit(with_layout("Et*24m|mL"), "model.mtp_layers", "2");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.pipeline_layout", "split over several stages");
}

TEST(PipelineLayout, MalformedSyntaxSaysWhere) {
  EXPECT_SCENARIO_ERROR(with_layout("Et*12|x*12L"), "parallelism.pipeline_layout", "at character 7",
                        "unknown character 'x'");
  EXPECT_SCENARIO_ERROR(with_layout("Et*12|(tt|*6L"), "parallelism.pipeline_layout", "at character 7", "never closed");
  EXPECT_SCENARIO_ERROR(with_layout("E((t|)*2)*3"), "parallelism.pipeline_layout", "at character 3", "nested");
  EXPECT_SCENARIO_ERROR(with_layout("Et*|t*12L"), "parallelism.pipeline_layout", "at character 3", "repeat count");
  EXPECT_SCENARIO_ERROR(with_layout("E*2*3"), "parallelism.pipeline_layout", "at character 4", "'*' must follow");
  EXPECT_SCENARIO_ERROR(with_layout("Et)"), "parallelism.pipeline_layout", "at character 3", "without a matching");
  EXPECT_SCENARIO_ERROR(with_layout("E(tt)t*22|L"), "parallelism.pipeline_layout", "at character 2", "followed by *n");
  EXPECT_SCENARIO_ERROR(with_layout("E()*2t*24|L"), "parallelism.pipeline_layout", "empty group");
  EXPECT_SCENARIO_ERROR(with_layout("Et*99999999999|L"), "parallelism.pipeline_layout", "too large");
}

TEST(PipelineLayout, ExcludesTheOtherSplitKeys) {
  EXPECT_SCENARIO_ERROR(edit(with_layout("Et*12|t*12L"), "parallelism.first_stage_layers", "12"),
                        "parallelism.pipeline_layout", "cannot be combined");
  EXPECT_SCENARIO_ERROR(edit(with_layout("Et*12|t*12L"), "parallelism.account_for_loss_in_pipeline_split", "true"),
                        "parallelism.pipeline_layout", "cannot be combined");
  // DeepSpeed has no such option.
  std::string yaml = edit(with_layout("Et*12|t*12L"), "parallelism.framework", "deepspeed");
  yaml = edit(yaml, "parallelism.zero_stage", "1");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.pipeline_layout", "Megatron-LM's");
}

// Llama 3.1 405B's recipe: 126 layers on pipeline 8 x virtual 8 with the embedding and the loss each counted as a
// layer: 128 / 64 = 2 slots per chunk; the first chunk holds the embedding + 1 decoder layer, the last 1 + the loss.
std::string llama405b_split() {
  return R"(
model:
  family: llama
  num_layers: 126
  hidden_size: 1024
  num_attention_heads: 8
  ffn_hidden_size: 2048
  vocab_size: 1024
  seq_length: 1024
training:
  global_batch_size: 16
  micro_batch_size: 1
parallelism:
  tensor: 1
  pipeline: 8
  virtual_pipeline: 8
  account_for_embedding_in_pipeline_split: true
  account_for_loss_in_pipeline_split: true
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
}

TEST(AccountForEmbeddingAndLoss, Llama405bOnPipeline8Virtual8Parses) {
  EXPECT_NO_THROW(
      parse_scenario(llama405b_split(), "test.yaml"));  // placement: tests/workload/stage_layout_recipes_test.cpp
  // Without the loss slot: 127 slots do not split over 8 stages.
  EXPECT_SCENARIO_ERROR(edit(llama405b_split(), "parallelism.account_for_loss_in_pipeline_split", "false"),
                        "parallelism.account_for_embedding_in_pipeline_split", "127", "not divisible by pipeline 8");
}

TEST(AccountForEmbeddingAndLoss, Errors) {
  // 128 slots / 8 stages = 16 per stage, not divisible by virtual 3.
  EXPECT_SCENARIO_ERROR(edit(llama405b_split(), "parallelism.virtual_pipeline", "3"), "parallelism.virtual_pipeline",
                        "16 per pipeline stage", "virtual_pipeline 3");
  std::string yaml = edit(llama405b_split(), "parallelism.virtual_pipeline", "1");
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.first_stage_layers", "15"),
                        "parallelism.account_for_embedding_in_pipeline_split", "cannot be combined");
  EXPECT_NO_THROW(parse_scenario(yaml, "test.yaml"));  // without interleaving: 16 slots per stage
}

TEST(RecomputeModules, ReadsMegatronsNames) {
  std::string yaml = edit(kValidScenario, "training.recompute", "selective");
  const Scenario def = parse_scenario(yaml, "test.yaml");
  EXPECT_TRUE(def.training.recompute_modules.core_attn);  // null = core_attn only
  EXPECT_FALSE(def.training.recompute_modules.mlp);
  const Scenario both = parse_scenario(edit(yaml, "training.recompute_modules", "[mlp, layernorm]"), "test.yaml");
  EXPECT_FALSE(both.training.recompute_modules.core_attn);
  EXPECT_TRUE(both.training.recompute_modules.mlp);
  EXPECT_TRUE(both.training.recompute_modules.layernorm);
  const Scenario none = parse_scenario(edit(yaml, "training.recompute_modules", "[]"), "test.yaml");
  EXPECT_EQ(none.training.recompute_modules,
            (RecomputeModules{false, false, false, false, false, false, false, false}));
}

TEST(RecomputeModules, Errors) {
  std::string yaml = edit(kValidScenario, "training.recompute", "selective");
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.recompute_modules", "[mlp, attention]"), "training.recompute_modules[1]",
                        "unknown recompute module 'attention'",
                        "core_attn, mlp, moe_act, moe, shared_experts, layernorm, mla_up_proj");
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.recompute_modules", "mlp"), "training.recompute_modules",
                        "expected a list of module names");
  EXPECT_SCENARIO_ERROR(edit(edit(yaml, "training.recompute", "full"), "training.recompute_modules", "[mlp]"),
                        "training.recompute_modules", "only applies with training.recompute: selective");
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.recompute_modules", "[moe_act]"), "training.recompute_modules",
                        "needs an MoE model");
  EXPECT_SCENARIO_ERROR(edit(yaml, "training.recompute_modules", "[mla_up_proj]"), "training.recompute_modules",
                        "multi-latent attention");
}

TEST(MtpLayers, IsANonNegativeCount) {
  EXPECT_EQ(parse_scenario(edit(kValidScenario, "model.mtp_layers", "2"), "test.yaml").model.mtp_layers, 2);
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.mtp_layers", "-1"), "model.mtp_layers");
}

}  // namespace
}  // namespace trainsim
