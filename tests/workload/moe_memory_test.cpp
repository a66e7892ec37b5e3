// Memory of MoE layers (docs/moe.md §5): routed-expert weights, grads and optimizer states sharded by EP x
// expert-TP and expert-DP, and the activations of an MoE layer written out by hand: what Megatron keeps for
// backward on the routed path (the expert-TP-gathered fc1 input, the experts' activation input and output, the
// router's scores and routing map) plus the dispatcher's transient send/receive buffers.
#include <gtest/gtest.h>

#include "core/units.hpp"
#include "workload/memory_model.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace {

// Llama-like (RMSNorm, SwiGLU, no biases, no dropout), h = 1024, 16 heads, s = 2048; 2 layers, both MoE:
// 8 experts of width 512, top-2.
ModelSpec moe_model(int layers) {
  ModelSpec m;
  m.name = "test-moe";
  m.family = "mixtral";
  m.num_layers = layers;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.kv_channels = 64;
  m.ffn_hidden_size = 2048;
  m.gated_mlp = true;
  m.vocab_size = 51200;
  m.seq_length = 2048;
  m.normalization = Normalization::RMSNorm;
  m.position_embedding = PositionEmbedding::Rope;
  m.add_bias_linear = false;
  m.untie_embeddings = true;
  m.moe.num_experts = 8;
  m.moe.router_topk = 2;
  m.moe.expert_ffn_hidden_size = 512;
  return m;
}

Scenario moe_memory_scenario(const ModelSpec& m, int t, int d, int e, int te) {
  Scenario s;
  s.model = m;
  s.parallelism.tensor = t;
  s.parallelism.pipeline = 1;
  s.parallelism.data = d;
  s.parallelism.expert = e;
  s.parallelism.expert_tensor = te;
  s.parallelism.sequence_parallel = t > 1;
  s.cluster.num_gpus = t * d;
  s.training.global_batch_size = d;
  s.training.micro_batch_size = 1;
  return s;
}

using test::gib;

// Expert parameters of one layer: 8 experts x 3 x 1024 x 512 = 12,582,912; per rank / (e * t_e); the distributed
// optimizer shards their 12 B over expert-DP = t*D/(t_e*e). TP 2, data 8 (16 GPUs):
//   e 4, t_e 2: 1/8 of the experts per rank, expert-DP 16/8 = 2;
//   e 4, t_e 1: 1/4 per rank, expert-DP 16/4 = 4.
TEST(MoeMemory, ExpertStatesShardOverExpertTensorAndExpertData) {
  const double experts = 8.0 * 3 * 1024 * 512;
  const auto a = estimate_memory(moe_memory_scenario(moe_model(2), 2, 8, 4, 2))[0];
  const auto b = estimate_memory(moe_memory_scenario(moe_model(2), 2, 8, 4, 1))[0];
  // Only the expert part differs: weights 2 B, grads 4 B, optimizer 12 B over expert-DP; 2 layers.
  EXPECT_NEAR(b.weights_gib - a.weights_gib, gib(2 * 2 * (experts / 4 - experts / 8)), 1e-9);
  EXPECT_NEAR(b.grads_gib - a.grads_gib, gib(2 * 4 * (experts / 4 - experts / 8)), 1e-9);
  EXPECT_NEAR(b.optimizer_gib - a.optimizer_gib, gib(2 * 12 * (experts / 4 / 4 - experts / 8 / 2)), 1e-9);
}

// One more MoE layer adds one layer's activations (p = 1: one micro-batch in flight; flash attention). For the
// MoE part, per rank, with T = 2048 tokens, t = 2 with SP (T_l = 1024), k = 2, t_e = 2, h = 1024, F_e = 512, E = 8:
//   norm input 2h + router/shared input 2h, sequence-sharded        T_l * 4h                = 1024 * 4096
//   router scores fp32 + routing map                                T_l * 5E                = 1024 * 40
//   expert-TP-gathered fc1 input                                    t_e*T_l*k * 2h          = 4096 * 2048
//   activation input (2 x F_e/t_e gated) and output per row         t_e*T_l*k * 3*2*F_e/t_e = 2048 * 3072
// and the attention part (Korthikanti with SP, no dropout, MHA q = kv = h): norm input + QKV input 4h/t, Q, K, V and
// projection input 8h/t -> T * 12h / t.
TEST(MoeMemory, MoeLayerActivationsByHand) {
  const auto two = estimate_memory(moe_memory_scenario(moe_model(2), 2, 8, 4, 2))[0];
  const auto three = estimate_memory(moe_memory_scenario(moe_model(3), 2, 8, 4, 2))[0];
  const double h = 1024, T = 2048, Tl = 1024, k = 2, te = 2, fe = 512, E = 8;
  const double attention = T * 12 * h / 2;
  const double moe = Tl * 4 * h + Tl * 5 * E + te * Tl * k * 2 * h + te * Tl * k * 3 * 2 * fe / te;
  // activations carry a 10% fragmentation allowance in `other`; compare the activations field itself.
  EXPECT_NEAR(three.activations_gib - two.activations_gib, gib(attention + moe), 1e-9);
  EXPECT_NEAR(three.weights_gib - two.weights_gib,
              gib(2 * ((4 * h * h) / 2 + 2 * h + 8 * h + 8.0 * 3 * h * fe / (4 * 2))), 1e-9);
}

// The dispatcher's transient send and receive buffers (T_l*k rows of h each) exist once, while one MoE layer runs:
// a dense model of the same shape lacks them, and they do not grow with the number of layers.
TEST(MoeMemory, DispatchBuffersCountedOnce) {
  const auto two = estimate_memory(moe_memory_scenario(moe_model(2), 2, 8, 4, 2))[0];
  const double Tl = 1024, k = 2, h = 1024;
  ModelSpec dense_shape = moe_model(2);
  dense_shape.moe.first_dense_layers = 1;  // layer 0 dense, layer 1 MoE: still one buffer pair
  const auto one_moe = estimate_memory(moe_memory_scenario(dense_shape, 2, 8, 4, 2))[0];
  const double moe_layer_minus_dense =
      (Tl * 5 * 8 + 2 * Tl * k * 2 * h + Tl * k * 3 * 2 * 512) - 2048.0 * 3 * 2 * 2048 / 2;  // routed - dense MLP
  EXPECT_NEAR(two.activations_gib - one_moe.activations_gib, gib(moe_layer_minus_dense), 1e-9);
  ModelSpec no_moe = moe_model(2);
  no_moe.moe.num_experts = 0;
  const auto dense = estimate_memory(moe_memory_scenario(no_moe, 2, 8, 1, 2))[0];
  const double buffers = 2 * Tl * k * 2 * h;
  const double routed_two = 2 * (Tl * 5 * 8 + 2 * Tl * k * 2 * h + Tl * k * 3 * 2 * 512);
  const double dense_two = 2 * (2048.0 * 3 * 2 * 2048 / 2);
  EXPECT_NEAR(two.activations_gib - dense.activations_gib, gib(routed_two - dense_two + buffers), 1e-9);
}

}  // namespace
}  // namespace trainsim
