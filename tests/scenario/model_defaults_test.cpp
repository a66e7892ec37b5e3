// Defaults applied to a scenario that leaves keys out (spec/scenario.md defaults and the
// family defaults of model.family).
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(Defaults, GptFamilyAndDerivedShapes) {
  const Scenario s = parse_scenario(kValidScenario, "dir/my-case.yaml");
  EXPECT_EQ(s.file, "dir/my-case.yaml");
  EXPECT_EQ(s.name, "my-case");  // file stem
  EXPECT_TRUE(s.has_training_job);
  const ModelSpec& m = s.model;
  EXPECT_EQ(m.name, "custom");
  EXPECT_EQ(m.num_query_groups, 16);       // = num_attention_heads (no GQA)
  EXPECT_EQ(m.kv_channels, 2048 / 16);     // hidden / heads = 128
  EXPECT_EQ(m.ffn_hidden_size, 4 * 2048);  // GPT MLP is 4h
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_EQ(m.normalization, Normalization::LayerNorm);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::LearnedAbsolute);
  EXPECT_TRUE(m.add_bias_linear);
  EXPECT_FALSE(m.moe.enabled());
  EXPECT_FALSE(m.mla.has_value());
  EXPECT_FALSE(m.sliding_window.has_value());
}

TEST(Defaults, DataParallelIsDerivedFromTheWorld) {
  const Scenario s = parse_scenario(kValidScenario, "test.yaml");
  // 16 GPUs / (tensor 2 x pipeline 2 x context 1) = 4.
  EXPECT_EQ(s.parallelism.data, 4);
  // 64 sequences / (micro-batch 2 x data 4) = 8 micro-batches per iteration.
  EXPECT_EQ(s.micro_batches_per_iteration(), 8);
}

TEST(Defaults, TrainingAndParallelism) {
  const Scenario s = parse_scenario(edit(kValidScenario, "training.micro_batch_size", nullptr), "test.yaml");
  EXPECT_EQ(s.training.micro_batch_size, 1);
  EXPECT_EQ(s.training.recompute, RecomputeGranularity::None);
  EXPECT_TRUE(s.training.recompute_num_layers.empty());
  EXPECT_TRUE(s.training.flash_attention);
  EXPECT_EQ(s.training.optimizer, Optimizer::Adam);
  EXPECT_EQ(s.training.iterations, 1);
  EXPECT_EQ(s.parallelism.context, 1);
  EXPECT_EQ(s.parallelism.expert, 1);
  EXPECT_EQ(s.parallelism.virtual_pipeline, 1);
  EXPECT_TRUE(s.parallelism.sequence_parallel);  // tensor 2 > 1, so it stays on
  EXPECT_EQ(s.parallelism.schedule, PipelineSchedule::OneFOneB);
  EXPECT_EQ(s.parallelism.framework, Framework::Megatron);
  EXPECT_EQ(s.parallelism.zero_stage, 1);
  EXPECT_FALSE(s.parallelism.grad_bucket_mb.has_value());
}

TEST(Defaults, ClusterScaleUpFollowsGpuAndNode) {
  const Scenario s = parse_scenario(kValidScenario, "test.yaml");
  // scale_up.bandwidth_GBps defaults to the GPU's own scale-up bandwidth (catalog), domain to one node.
  EXPECT_GT(s.cluster.gpu.scale_up_GBps, 0);
  EXPECT_DOUBLE_EQ(s.cluster.scale_up.bandwidth_GBps, s.cluster.gpu.scale_up_GBps);
  EXPECT_EQ(s.cluster.scale_up.domain_size, 8);
  EXPECT_EQ(s.cluster.num_nodes(), 2);
  EXPECT_EQ(s.cluster.network.oversubscription, std::vector<double>{1.0});
  EXPECT_EQ(s.simulation.threads, 0);
  EXPECT_FALSE(s.simulation.per_rank);
  EXPECT_TRUE(s.nccl.env.empty());
  EXPECT_TRUE(s.faults.empty());
  EXPECT_FALSE(s.reference.has_value());
  EXPECT_FALSE(s.collective.has_value());
}

TEST(Defaults, DomainSizeFollowsGpusPerNode) {
  std::string yaml = edit(kValidScenario, "cluster.gpus_per_node", "4");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_EQ(s.cluster.scale_up.domain_size, 4);
}

TEST(Defaults, LlamaFamily) {
  std::string yaml = edit(kValidScenario, "model.family", "llama");
  yaml = edit(yaml, "model.ffn_hidden_size", "5632");
  yaml = edit(yaml, "model.num_query_groups", "4");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_TRUE(s.model.gated_mlp);
  EXPECT_EQ(s.model.normalization, Normalization::RMSNorm);
  EXPECT_EQ(s.model.position_embedding, PositionEmbedding::Rope);
  EXPECT_FALSE(s.model.add_bias_linear);
  EXPECT_EQ(s.model.num_query_groups, 4);
}

TEST(Defaults, FamilyDefaultsCanBeOverridden) {
  std::string yaml = edit(kValidScenario, "model.family", "llama");
  yaml = edit(yaml, "model.ffn_hidden_size", "8192");
  yaml = edit(yaml, "model.gated_mlp", "false");
  yaml = edit(yaml, "model.add_bias_linear", "true");
  yaml = edit(yaml, "model.normalization", "layernorm");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_FALSE(s.model.gated_mlp);
  EXPECT_TRUE(s.model.add_bias_linear);
  EXPECT_EQ(s.model.normalization, Normalization::LayerNorm);
  EXPECT_EQ(s.model.position_embedding, PositionEmbedding::Rope);  // not overridden: family default
}

TEST(Defaults, LlamaWithoutFfnAsksForIt) {
  const std::string yaml = edit(kValidScenario, "model.family", "llama");
  EXPECT_SCENARIO_ERROR(yaml, "model.ffn_hidden_size", "missing required key model.ffn_hidden_size", "gated MLP");
}

TEST(Defaults, LlamaWithoutVocabAsksForIt) {
  std::string yaml = edit(kValidScenario, "model.family", "llama");
  yaml = edit(yaml, "model.ffn_hidden_size", "5632");
  yaml = edit(yaml, "model.vocab_size", nullptr);
  EXPECT_SCENARIO_ERROR(yaml, "model.vocab_size", "missing required key model.vocab_size");
}

TEST(Defaults, GptVocabDefaultsToGpt2Bpe) {
  // Megatron's default GPT-2 BPE vocabulary has 50257 entries.
  const Scenario s = parse_scenario(edit(kValidScenario, "model.vocab_size", nullptr), "test.yaml");
  EXPECT_EQ(s.model.vocab_size, 50257);
}

TEST(Defaults, HiddenNotDivisibleByHeadsNeedsKvChannels) {
  const std::string yaml = edit(kValidScenario, "model.hidden_size", "2050");
  EXPECT_SCENARIO_ERROR(yaml, "model.hidden_size", "not divisible by num_attention_heads 16", "kv_channels");
  // With the head dimension given, the shape is fine (2050 is still divisible by tensor 2 for ffn 4h).
  EXPECT_NO_THROW(parse_scenario(edit(yaml, "model.kv_channels", "128"), "test.yaml"));
}

TEST(Defaults, QueryGroupsMustDivideHeads) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "model.num_query_groups", "6"), "model.num_query_groups",
                        "num_attention_heads 16 is not divisible by num_query_groups 6");
}

TEST(Defaults, MoeDefaultsAndChecks) {
  std::string yaml = edit(kValidScenario, "model.moe", "{num_experts: 8}");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_TRUE(s.model.moe.enabled());
  EXPECT_EQ(s.model.moe.router_topk, 2);
  EXPECT_EQ(s.model.moe.expert_ffn_hidden_size, s.model.ffn_hidden_size);  // Megatron: moe_ffn = ffn by default
  EXPECT_EQ(s.model.moe.layer_freq, 1);
  EXPECT_FALSE(s.model.moe.capacity_factor.has_value());
  EXPECT_SCENARIO_ERROR(edit(yaml, "model.moe.router_topk", "9"), "model.moe.router_topk",
                        "router_topk 9 exceeds num_experts 8");
}

TEST(Defaults, MlaNeedsItsDimensions) {
  const std::string yaml =
      edit(kValidScenario, "model.mla", "{kv_lora_rank: 512, qk_nope_head_dim: 128, qk_rope_head_dim: 64}");
  EXPECT_SCENARIO_ERROR(yaml, "model.mla.v_head_dim", "missing required key model.mla.v_head_dim");
  const Scenario s = parse_scenario(edit(yaml, "model.mla.v_head_dim", "128"), "test.yaml");
  ASSERT_TRUE(s.model.mla.has_value());
  EXPECT_EQ(s.model.mla->q_lora_rank, 0);  // not given: queries not compressed
  EXPECT_EQ(s.model.mla->kv_lora_rank, 512);
}

}  // namespace
}  // namespace trainsim
