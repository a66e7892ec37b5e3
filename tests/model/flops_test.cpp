// Model/hardware FLOPs against hand derivations and published formulas (Megatron-LM
// training.py::num_floating_point_operations; Narayanan et al. 2021).
#include <gtest/gtest.h>

#include "model/flops.hpp"
#include "model/layer_shapes.hpp"

namespace trainsim {
namespace {

ModelSpec llama3_8b_like() {
  ModelSpec m;
  m.family = "llama";
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.kv_channels = 128;
  m.ffn_hidden_size = 14336;
  m.gated_mlp = true;
  m.vocab_size = 128256;
  m.seq_length = 8192;
  m.untie_embeddings = true;
  m.normalization = Normalization::RMSNorm;
  m.position_embedding = PositionEmbedding::Rope;
  m.add_bias_linear = false;
  return m;
}

ModelSpec gpt3_175b() {
  ModelSpec m;
  m.family = "gpt";
  m.num_layers = 96;
  m.hidden_size = 12288;
  m.num_attention_heads = 96;
  m.num_query_groups = 96;
  m.kv_channels = 128;
  m.ffn_hidden_size = 4 * 12288;
  m.gated_mlp = false;
  m.vocab_size = 51200;
  m.seq_length = 2048;
  return m;
}

// num_floating_point_operations worked check. Hand expansion, per token (6 = fwd+bwd x FMA):
//   attention linear 6*(4096*(4096+2*1024) + 4096*4096) = 251,658,240 per layer  x32 =  8,053,063,680
//   SwiGLU MLP       6*4096*14336*3                    = 1,056,964,608 per layer x32 = 33,822,867,456
//   LM head          6*4096*128256                                                  =  3,152,019,456
//   total                                                                             45,027,950,592  (45.03 G)
// attention core 6*q*L = 6*4096*32 = 786,432 per s^2. At s = 8192: 421.6 TFLOP per sequence.
// The worked check uses V = 128256; that is already a multiple of 128*t for t = 1 and 2 (128256 = 256*501),
// so padded and unpadded agree there; at t = 4 Megatron pads to 128512.
TEST(ModelFlops, Llama3_8B_WorkedCheckFromMegatronReference) {
  const ModelSpec m = llama3_8b_like();
  const double per_token = 45'027'950'592.0;
  const double per_sq = 786'432.0;
  const double s = 8192;
  const double expected = per_token * s + per_sq * s * s;
  EXPECT_NEAR(model_flops_per_iteration(m, 1, 1), expected, expected * 1e-12);
  EXPECT_NEAR(model_flops_per_iteration(m, 1, 1) / 1e12, 421.6, 0.05);
  EXPECT_DOUBLE_EQ(model_flops_per_iteration(m, 1, 2), model_flops_per_iteration(m, 1, 1));
  // Linear in the batch: tokens and sqsum both scale with B.
  EXPECT_NEAR(model_flops_per_iteration(m, 512, 1), 512 * expected, 512 * expected * 1e-12);
}

TEST(ModelFlops, PaddedVocabularyEntersTheLmHead) {
  const ModelSpec m = llama3_8b_like();
  ASSERT_EQ(padded_vocab_size(m.vocab_size, 4), 128512);
  // 256 extra vocabulary rows x 6 FLOP/MAC-pass x h per token.
  const double extra = 6.0 * 4096 * 256 * 8192;
  EXPECT_NEAR(model_flops_per_iteration(m, 1, 4) - model_flops_per_iteration(m, 1, 1), extra, extra * 1e-9);
}

// GPT-3 175B, GELU MLP of 4h, MHA. Per layer and token: QKV+proj 2*(3h^2 + h^2) + MLP 2*8h^2 = 24h^2 FLOP forward,
// attention 4*s*h forward, halved by the causal mask (Megatron) = 2*s*h. x3 for fwd+bwd, plus the LM head 6*h*V:
//   model = 72*B*s*L*h^2 * (1 + s/(12h) + V/(12*L*h)).
// Narayanan et al. 2021 eq. 3 counts attention without the causal halving (s/(6h)) and includes the full-recompute
// forward: 96*B*s*L*h^2*(1 + s/(6h) + V/(16*L*h)). Megatron's hardware FLOPs with full recompute of all layers are
// therefore eq. 3 with s/(6h) -> s/(12h), i.e. eq. 3 minus 96*B*s*L*h^2*s/(12h) = 8*B*s^2*L*h.
TEST(ModelFlops, Gpt3_175B_MatchesClosedFormAndNarayananEq3) {
  const ModelSpec m = gpt3_175b();
  const double B = 1536, s = 2048, L = 96, h = 12288, V = 51200;
  const double model = 72 * B * s * L * h * h * (1 + s / (12 * h) + V / (12 * L * h));
  EXPECT_NEAR(model_flops_per_iteration(m, 1536, 8), model, model * 1e-12);

  const double eq3 = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h));
  const double hw = hardware_flops_per_iteration(m, 1536, 8, RecomputeGranularity::Full, 96);
  EXPECT_NEAR(hw, eq3 - 8 * B * s * s * L * h, eq3 * 1e-12);
  // Full recompute of every layer: layers cost 4/3 of their fwd+bwd; the LM head is not recomputed.
  const double lm_head = 6 * B * s * h * V;
  EXPECT_NEAR(hw, (model - lm_head) * 4.0 / 3.0 + lm_head, hw * 1e-12);
}

TEST(HardwareFlops, NoRecomputeEqualsModelFlops) {
  const ModelSpec m = gpt3_175b();
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, 64, 8, RecomputeGranularity::None, 96),
                   model_flops_per_iteration(m, 64, 8));
}

// Selective (core_attn) recompute re-runs the attention core forward: 2*q*s^2 per layer per sequence.
TEST(HardwareFlops, SelectiveAddsAttentionCoreForward) {
  const ModelSpec m = llama3_8b_like();
  const double B = 8, s = 8192, q = 32 * 128, L = 32;
  const double extra = 2 * q * B * s * s * L;
  const double diff =
      hardware_flops_per_iteration(m, 8, 1, RecomputeGranularity::Selective, 0) - model_flops_per_iteration(m, 8, 1);
  EXPECT_NEAR(diff, extra, extra * 1e-9);
}

// Recomputing half of the layers adds half of the all-layer recompute.
TEST(HardwareFlops, FullRecomputeScalesWithRecomputedLayers) {
  const ModelSpec m = gpt3_175b();
  const double model = model_flops_per_iteration(m, 16, 8);
  const double all = hardware_flops_per_iteration(m, 16, 8, RecomputeGranularity::Full, 96) - model;
  const double half = hardware_flops_per_iteration(m, 16, 8, RecomputeGranularity::Full, 48) - model;
  EXPECT_GT(all, 0);
  EXPECT_NEAR(half, all / 2, all * 1e-12);
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, 16, 8, RecomputeGranularity::Full, 0), model);
}

// GQA only shrinks the K and V projections: 2*(a-g)*d columns of h, x6 per token per layer.
TEST(ModelFlops, GqaOnlyChangesKvProjection) {
  ModelSpec mha = llama3_8b_like();
  mha.num_query_groups = 32;
  const ModelSpec gqa = llama3_8b_like();
  const double tokens = 8192;
  const double expected = 6 * tokens * 32 * 4096 * 2 * (32 - 8) * 128.0;
  EXPECT_NEAR(model_flops_per_iteration(mha, 1, 1) - model_flops_per_iteration(gqa, 1, 1), expected, expected * 1e-9);
}

// MoE: only the k routed (+ shared) experts count, so k experts of width F_e cost what one dense MLP of width k*F_e
// costs; E enters only through the router's gating GEMM, 6*h*E per token per MoE layer (trainsim adds it to
// Megatron's count, flops.cpp).
TEST(ModelFlops, MoeCountsRoutedTopKSharedExpertsAndRouter) {
  ModelSpec dense = llama3_8b_like();
  dense.ffn_hidden_size = 3 * 1024;  // = (top-2 + 1 shared) x 1024
  ModelSpec moe = llama3_8b_like();
  moe.moe.num_experts = 64;
  moe.moe.router_topk = 2;
  moe.moe.shared_experts = 1;
  moe.moe.expert_ffn_hidden_size = 1024;
  const double tokens = 4 * 8192.0;
  const double router64 = 6.0 * 4096 * 64 * 32 * tokens;  // 32 MoE layers
  EXPECT_NEAR(model_flops_per_iteration(moe, 4, 1) - model_flops_per_iteration(dense, 4, 1), router64, router64 * 1e-9);
  moe.moe.num_experts = 8;
  const double router8 = 6.0 * 4096 * 8 * 32 * tokens;
  EXPECT_NEAR(model_flops_per_iteration(moe, 4, 1) - model_flops_per_iteration(dense, 4, 1), router8, router8 * 1e-9);
}

// layer_freq / first_dense_layers: L = 8, freq 2, first 3 dense -> MoE layers {4, 6}.
TEST(ModelFlops, MoeLayerPatternFollowsFreqAndFirstDenseLayers) {
  ModelSpec m = llama3_8b_like();
  m.num_layers = 8;
  m.moe.num_experts = 16;
  m.moe.router_topk = 1;
  m.moe.expert_ffn_hidden_size = 14336;  // one routed expert as wide as the dense MLP
  m.moe.layer_freq = 2;
  m.moe.first_dense_layers = 3;
  EXPECT_EQ(num_moe_layers(m), 2);
  EXPECT_FALSE(is_moe_layer(m, 2));
  EXPECT_TRUE(is_moe_layer(m, 4));
  EXPECT_FALSE(is_moe_layer(m, 5));
  // Top-1 expert of the dense width: the dense model's FLOPs plus the 2 routers, whatever the pattern.
  ModelSpec dense = m;
  dense.moe = MoeSpec{};
  const double tokens = 2 * 8192.0;
  const double routers = 2 * 6.0 * 4096 * 16 * tokens;
  EXPECT_NEAR(model_flops_per_iteration(m, 2, 1) - model_flops_per_iteration(dense, 2, 1), routers, routers * 1e-9);
  // Widen the expert: only the 2 MoE layers change, by 6*h*dF*3 per token each.
  m.moe.expert_ffn_hidden_size = 14336 + 1000;
  const double expected = 2 * 6.0 * 4096 * 1000 * 3 * tokens + routers;
  EXPECT_NEAR(model_flops_per_iteration(m, 2, 1) - model_flops_per_iteration(dense, 2, 1), expected, expected * 1e-9);
}

// MLA, hand-computed on a tiny shape (h=64, a=2, q_lora=16, kv_lora=8, d_nope=4, d_rope=2, d_v=4, s=10, L=1,
// V=128 (no padding), dense non-gated MLP F=32):
//   q_term = 16*(64 + 2*6 + 1) = 1232; kv = 8*(64 + 2*8 + 1) = 648; rope key 64*2 = 128; o proj 2*4*64 = 512
//   attn linear = 6*2520 = 15120 per token; core = 6*(2*6/2 + 2*4/2) = 60 per s^2
//   MLP 6*64*32*2 = 24576; LM head 6*64*128 = 49152
//   total = 10*(15120 + 24576 + 49152) + 100*60 = 894480
TEST(ModelFlops, MultiLatentAttentionBranch) {
  ModelSpec m;
  m.num_layers = 1;
  m.hidden_size = 64;
  m.num_attention_heads = 2;
  m.ffn_hidden_size = 32;
  m.vocab_size = 128;
  m.seq_length = 10;
  m.mla = MlaSpec{16, 8, 4, 2, 4};
  EXPECT_DOUBLE_EQ(model_flops_per_iteration(m, 1, 1), 894480.0);
}

}  // namespace
}  // namespace trainsim
