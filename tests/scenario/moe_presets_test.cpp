// The MoE presets (data/models/mixtral-8x7b.yaml, mixtral-8x22b.yaml, deepseek-v3.yaml) resolve to the shapes of
// their config.json files and count the published parameter totals: Mixtral 8x7B 46.7B (Jiang et al. 2024),
// Mixtral 8x22B 141B (Mistral AI), DeepSeek-V3 671B without its multi-token-prediction module (technical report).
#include "model/layer_shapes.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

Scenario parsed_preset(const char* preset, const char* pipeline = "2") {
  std::string yaml = edit(kValidScenario, "model", "{}");
  yaml = edit(yaml, "model.preset", preset);
  yaml = edit(yaml, "parallelism.pipeline", pipeline);
  return parse_scenario(yaml, "test.yaml");
}

TEST(MoePresets, Mixtral8x7B) {
  const Scenario s = parsed_preset("mixtral-8x7b");
  const ModelSpec& m = s.model;
  EXPECT_EQ(m.family, "mixtral");
  EXPECT_EQ(m.num_layers, 32);
  EXPECT_EQ(m.hidden_size, 4096);
  EXPECT_EQ(m.num_query_groups, 8);
  EXPECT_EQ(m.moe.num_experts, 8);
  EXPECT_EQ(m.moe.router_topk, 2);
  EXPECT_EQ(m.moe.expert_ffn_hidden_size, 14336);
  EXPECT_EQ(num_moe_layers(m), 32);
  EXPECT_EQ(m.normalization, Normalization::RMSNorm);
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_FALSE(m.add_bias_linear);
  EXPECT_NEAR(total_params(m, 1) / 1e9, 46.7, 0.05);
}

TEST(MoePresets, Mixtral8x22B) {
  const Scenario s = parsed_preset("mixtral-8x22b");
  EXPECT_EQ(s.model.num_layers, 56);
  EXPECT_EQ(s.model.hidden_size, 6144);
  EXPECT_EQ(s.model.moe.expert_ffn_hidden_size, 16384);
  EXPECT_NEAR(total_params(s.model, 1) / 1e9, 141, 0.01 * 141);
}

// Multi-latent attention sizes its heads from model.mla: the plain-attention keys written on such a model would
// be read by nothing, so they are refused naming the key.
TEST(MoePresets, PlainAttentionKeysOnAnMlaModelAreRefused) {
  std::string yaml = edit(kValidScenario, "model", "{}");
  yaml = edit(yaml, "model.preset", "deepseek-v3");
  yaml = edit(yaml, "parallelism.pipeline", "1");
  EXPECT_NO_THROW(parse_scenario(yaml, "test.yaml"));
  for (const char* key : {"model.kv_channels", "model.num_query_groups"}) {
    const auto e = test::parse_error(edit(yaml, key, "16"));
    ASSERT_TRUE(e.thrown) << key;
    EXPECT_EQ(e.key, key);
    EXPECT_NE(e.what.find("does not apply to multi-latent attention"), std::string::npos) << e.what;
  }
}

TEST(MoePresets, DeepSeekV3) {
  const Scenario s = parsed_preset("deepseek-v3", "1");  // 61 layers: no even 2-stage split
  const ModelSpec& m = s.model;
  EXPECT_EQ(m.family, "deepseek");
  EXPECT_EQ(m.num_layers, 61);
  EXPECT_EQ(m.hidden_size, 7168);
  EXPECT_EQ(m.num_attention_heads, 128);
  EXPECT_EQ(m.vocab_size, 129280);
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->q_lora_rank, 1536);
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.mla->qk_nope_head_dim, 128);
  EXPECT_EQ(m.mla->qk_rope_head_dim, 64);
  EXPECT_EQ(m.mla->v_head_dim, 128);
  EXPECT_EQ(m.moe.num_experts, 256);
  EXPECT_EQ(m.moe.shared_experts, 1);
  EXPECT_EQ(m.moe.router_topk, 8);
  EXPECT_EQ(m.moe.expert_ffn_hidden_size, 2048);
  EXPECT_EQ(m.moe.first_dense_layers, 3);
  EXPECT_EQ(num_moe_layers(m), 58);
  EXPECT_FALSE(is_moe_layer(m, 2));
  EXPECT_TRUE(is_moe_layer(m, 3));
  EXPECT_NEAR(total_params(m, 1) / 1e9, 671, 0.005 * 671);
  // 37B activated per token (technical report): attention, dense/shared MLPs, the router and 8 of 256 experts,
  // plus the embedding and LM head.
  double active = 2.0 * 129280 * 7168;
  for (int l = 0; l < m.num_layers; ++l) {
    const LayerParams p = layer_params(m, l);
    active += p.tp_sharded + p.replicated + p.expert * 8 / 256;
  }
  EXPECT_NEAR(active / 1e9, 37, 0.02 * 37);
}

}  // namespace
}  // namespace trainsim
