// Parameter counts against published totals and closed forms.
#include <gtest/gtest.h>

#include "model/layer_shapes.hpp"

namespace trainsim {
namespace {

ModelSpec gpt(int L, std::int64_t h, int a) {
  ModelSpec m;
  m.family = "gpt";
  m.num_layers = L;
  m.hidden_size = h;
  m.num_attention_heads = a;
  m.num_query_groups = a;
  m.ffn_hidden_size = 4 * h;
  m.vocab_size = 51200;
  m.seq_length = 2048;
  return m;
}

// Narayanan et al. 2021 eq. 2: P = 12*L*h^2 * (1 + 13/(12h) + (V + s)/(12*L*h)) counts weights, biases and the two
// LayerNorms of every layer plus word and position embeddings; it leaves out the final LayerNorm (2h).
TEST(LayerShapes, Gpt3_175B_MatchesNarayananEq2) {
  const ModelSpec m = gpt(96, 12288, 96);
  const double L = 96, h = 12288, V = 51200, s = 2048;
  const double eq2 = 12 * L * h * h * (1 + 13 / (12 * h) + (V + s) / (12 * L * h));
  EXPECT_NEAR(total_params(m, 8), eq2 + 2 * h, 1.0);
  EXPECT_NEAR(total_params(m, 8) / 1e9, 174.6, 0.1);
}

// Llama 3 8B: Meta's checkpoint has 8,030,261,248 parameters (the Hugging Face model page's "8.03B"); hand count:
//   embeddings 2 x 128256 x 4096 = 1,050,673,152; per layer q,o 2*4096^2 + k,v 2*4096*1024 + MLP 3*4096*14336
//   + 2 RMSNorm 8192 = 218,112,000, x32 = 6,979,584,000; final norm 4096.
TEST(LayerShapes, Llama3_8B_ExactCount) {
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 14336;
  m.gated_mlp = true;
  m.vocab_size = 128256;
  m.seq_length = 8192;
  m.untie_embeddings = true;
  m.normalization = Normalization::RMSNorm;
  m.position_embedding = PositionEmbedding::Rope;
  m.add_bias_linear = false;
  EXPECT_DOUBLE_EQ(total_params(m, 1), 8'030'261'248.0);
  const LayerParams p = layer_params(m, 0);
  EXPECT_DOUBLE_EQ(p.replicated, 8192.0);  // only the two RMSNorm gammas stay replicated under TP
  EXPECT_DOUBLE_EQ(p.tp_sharded, 218'112'000.0 - 8192.0);
  EXPECT_DOUBLE_EQ(p.expert, 0.0);
}

// GPT layer under TP: the replicated part is 2 LayerNorms (4h) + the two row-parallel output biases (2h).
TEST(LayerShapes, GptReplicatedPartIsNormsAndRowParallelBiases) {
  const ModelSpec m = gpt(2, 1024, 16);
  const LayerParams p = layer_params(m, 0);
  EXPECT_DOUBLE_EQ(p.replicated, 6 * 1024.0);
  EXPECT_DOUBLE_EQ(p.total(), 12.0 * 1024 * 1024 + 13 * 1024);
}

// Mixtral-8x7B-like MoE layer: 8 experts of 3 x 4096 x 14336 and a 4096 x 8 router; known total ~46.7B.
TEST(LayerShapes, MoeLayerSplitsExpertsFromDenseParts) {
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 14336;
  m.gated_mlp = true;
  m.vocab_size = 32000;
  m.seq_length = 4096;
  m.untie_embeddings = true;
  m.normalization = Normalization::RMSNorm;
  m.position_embedding = PositionEmbedding::Rope;
  m.add_bias_linear = false;
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.expert_ffn_hidden_size = 14336;
  const LayerParams p = layer_params(m, 0);
  EXPECT_DOUBLE_EQ(p.expert, 8 * 3.0 * 4096 * 14336);
  EXPECT_DOUBLE_EQ(p.replicated, 2 * 4096.0 + 4096.0 * 8);
  // Mixtral 8x7B is published as 46.7B total parameters (Jiang et al. 2024, "Mixtral of Experts").
  EXPECT_NEAR(total_params(m, 1) / 1e9, 46.7, 0.1);
}

// What Transformer Engine quantizes: the linear weights alone. A GPT layer's 12h^2 (QKV 3h^2, projection h^2, fc1 and
// fc2 4h^2 each) without its 13h biases and norm parameters; an MoE layer's experts all of theirs, its attention's
// weights, not the router; MLA's down-projections (replicated under TP) without their norms' gains.
TEST(LayerShapes, LinearWeightsLeaveOutBiasesNormsAndTheRouter) {
  const ModelSpec g = gpt(2, 1024, 16);
  const LayerParams w = layer_linear_weights(g, 0);
  EXPECT_DOUBLE_EQ(w.tp_sharded, 12.0 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(w.replicated, 0.0);
  EXPECT_DOUBLE_EQ(w.expert, 0.0);
  ModelSpec moe = g;
  moe.add_bias_linear = false;
  moe.moe.num_experts = 8;
  moe.moe.router_topk = 2;
  moe.moe.expert_ffn_hidden_size = 2048;
  const LayerParams e = layer_linear_weights(moe, 0);
  EXPECT_DOUBLE_EQ(e.expert, layer_params(moe, 0).expert);
  EXPECT_DOUBLE_EQ(e.tp_sharded, 4.0 * 1024 * 1024);  // attention only
  EXPECT_DOUBLE_EQ(e.replicated, 0.0);                // the router is not a TE linear
  ModelSpec mla = g;
  mla.add_bias_linear = false;
  mla.mla = MlaSpec{};
  mla.mla->q_lora_rank = 1536;
  mla.mla->kv_lora_rank = 512;
  mla.mla->qk_nope_head_dim = 128;
  mla.mla->qk_rope_head_dim = 64;
  mla.mla->v_head_dim = 128;
  const LayerParams l = layer_linear_weights(mla, 0);
  EXPECT_DOUBLE_EQ(l.replicated, 1024.0 * 1536 + 1024.0 * (512 + 64));
  EXPECT_DOUBLE_EQ(l.tp_sharded, layer_params(mla, 0).tp_sharded);
}

TEST(LayerShapes, DefaultsForHeadDimAndKvHeads) {
  ModelSpec m = gpt(1, 2560, 32);
  m.kv_channels = 0;
  m.num_query_groups = 0;
  EXPECT_EQ(head_dim(m), 80);
  EXPECT_EQ(kv_heads(m), 32);
  EXPECT_EQ(mlp_matrices(m), 2);
}

}  // namespace
}  // namespace trainsim
