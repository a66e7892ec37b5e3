// FLOPs of MTP blocks (megatron/training/training.py num_floating_point_operations) and the hardware FLOPs of
// selective recompute by module, against hand derivations.
#include <gtest/gtest.h>

#include "model/flops.hpp"
#include "model/layer_shapes.hpp"

namespace trainsim {
namespace {

// A plain GPT: h 1024, 16 heads (q = kv = h), F = 4h, not gated, V 51200 (no padding at TP 1), s 2048.
ModelSpec plain_gpt() {
  ModelSpec m;
  m.family = "gpt";
  m.num_layers = 24;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.kv_channels = 64;
  m.ffn_hidden_size = 4096;
  m.vocab_size = 51200;
  m.seq_length = 2048;
  return m;
}

TEST(MtpFlops, OneBlockAddsALayerItsProjectionAndALogitPass) {
  ModelSpec m = plain_gpt();
  const double base = model_flops_per_iteration(m, 8, 1);
  m.mtp_layers = 1;
  const double with = model_flops_per_iteration(m, 8, 1);
  const double h = 1024, F = 4096, V = 51200, s = 2048, B = 8;
  // Per token: one more layer (attention linear 6 * 4h^2, MLP 6 * 2hF), MTP norms and eh_proj 6 * (3h + 2h^2),
  // one more logit pass 6hV; per sequence squared: one more layer's core attention 6h.
  const double per_token = 24 * h * h + 12 * h * F + 6 * (3 * h + 2 * h * h) + 6 * h * V;
  EXPECT_NEAR(with - base, B * s * per_token + B * s * s * 6 * h, 1e-9 * with);
}

TEST(MtpFlops, TheMtpLayerTakesTheLastLayersType) {
  ModelSpec m = plain_gpt();
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.expert_ffn_hidden_size = 1024;
  m.moe.first_dense_layers = 1;
  EXPECT_TRUE(is_moe_layer(m, 24));  // an MTP layer after an MoE last layer
  const double base = model_flops_per_iteration(m, 1, 1);
  m.mtp_layers = 1;
  const double h = 1024, V = 51200, s = 2048;
  const double moe_mlp = 6 * h * (1024 * 2 * 2 + 8);  // k routed experts (F_eff 2) + the router
  const double per_token = 24 * h * h + moe_mlp + 6 * (3 * h + 2 * h * h) + 6 * h * V;
  EXPECT_NEAR(model_flops_per_iteration(m, 1, 1) - base, s * per_token + s * s * 6 * h, 1e-9 * base);
  // Parameters: the MTP layer (an MoE layer, like layer 23) plus eh_proj 2h^2 and three LayerNorms (2h each).
  ModelSpec no_mtp = m;
  no_mtp.mtp_layers = 0;
  EXPECT_DOUBLE_EQ(total_params(m) - total_params(no_mtp), layer_params(m, 23).total() + 2 * h * h + 3 * 2 * h);
}

TEST(SelectiveRecomputeFlops, EachModuleAddsItsForward) {
  const ModelSpec m = plain_gpt();
  const double model = model_flops_per_iteration(m, 8, 1);
  const double tokens = 8 * 2048.0, L = 24, h = 1024, F = 4096;
  RecomputeModules none{false, false, false, false, false, false, false};
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, 8, 1, RecomputeGranularity::Selective, 0, none), model);
  RecomputeModules mlp = none;
  mlp.mlp = true;
  EXPECT_NEAR(hardware_flops_per_iteration(m, 8, 1, RecomputeGranularity::Selective, 0, mlp) - model,
              tokens * L * 2 * h * F * 2, 1e-9 * model);
  // The default (core_attn) is the old selective count.
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, 8, 1, RecomputeGranularity::Selective, 0, RecomputeModules{}),
                   hardware_flops_per_iteration(m, 8, 1, RecomputeGranularity::Selective, 0));
  // layernorm and moe_act re-run element-wise work only.
  RecomputeModules ln = none;
  ln.layernorm = true;
  ln.moe_act = true;
  EXPECT_DOUBLE_EQ(hardware_flops_per_iteration(m, 8, 1, RecomputeGranularity::Selective, 0, ln), model);
}

TEST(SelectiveRecomputeFlops, MlaUpProjectionsAndMoe) {
  ModelSpec m = plain_gpt();
  m.mla = MlaSpec{128, 64, 32, 16, 32};
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.expert_ffn_hidden_size = 1024;
  m.moe.shared_experts = 1;
  const double model = model_flops_per_iteration(m, 1, 1);
  const double tokens = 2048, L = 24, h = 1024, a = 16;
  RecomputeModules up{false, false, false, false, false, false, false};
  up.mla_up_proj = true;
  EXPECT_NEAR(hardware_flops_per_iteration(m, 1, 1, RecomputeGranularity::Selective, 0, up) - model,
              tokens * L * 2 * (128 * a * (32 + 16) + 64 * a * (32 + 32)), 1e-9 * model);
  RecomputeModules moe{false, false, false, false, false, false, false};
  moe.moe = true;
  const double per_moe_layer = 2 * h * (1024 * 2 * 2 + 8) + 2 * h * 1024 * 2;  // routed + router, shared
  EXPECT_NEAR(hardware_flops_per_iteration(m, 1, 1, RecomputeGranularity::Selective, 0, moe) - model,
              tokens * L * per_moe_layer, 1e-9 * model);
  RecomputeModules shared{false, false, false, false, false, false, false};
  shared.shared_experts = true;
  EXPECT_NEAR(hardware_flops_per_iteration(m, 1, 1, RecomputeGranularity::Selective, 0, shared) - model,
              tokens * L * 2 * h * 1024 * 2, 1e-9 * model);
}

}  // namespace
}  // namespace trainsim
