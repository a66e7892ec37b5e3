// The per-tensor view of a layer (DeepSpeed's fetch and bucket units): forward order, module names, TP split, and
// the tensors adding up to layer_params for GPT, Llama (GQA, no biases, RMSNorm) and MLA.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "model/layer_shapes.hpp"

namespace trainsim {
namespace {

double sum(const std::vector<ParamTensor>& ts, bool sharded) {
  double s = 0;
  for (const auto& t : ts)
    if (t.tp_sharded == sharded) s += t.numel;
  return s;
}

std::string modules(const std::vector<ParamTensor>& ts) {
  std::string out;
  for (const auto& t : ts) out += std::string(out.empty() ? "" : " ") + t.module;
  return out;
}

// GPT, h 1024, 16 heads, F 4096, biases and LayerNorms:
//   input_norm 1024 + 1024; qkv 1024 x 3072 + 3072; proj 1024 x 1024 + 1024; pre_mlp_norm 1024 + 1024;
//   fc1 1024 x 4096 + 4096; fc2 4096 x 1024 + 1024 = 12h^2 + 13h.
TEST(LayerParamTensors, GptForwardOrderAndSizes) {
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 1024;
  m.num_attention_heads = 16;
  m.num_query_groups = 16;
  m.ffn_hidden_size = 4096;
  const auto ts = layer_param_tensors(m, 0);
  EXPECT_EQ(modules(ts), "input_norm input_norm qkv qkv proj proj pre_mlp_norm pre_mlp_norm fc1 fc1 fc2 fc2");
  ASSERT_EQ(ts.size(), 12u);
  EXPECT_DOUBLE_EQ(ts[2].numel, 1024.0 * 3072);
  EXPECT_TRUE(ts[3].tp_sharded);  // column-parallel bias
  EXPECT_TRUE(ts[3].vector);
  EXPECT_DOUBLE_EQ(ts[5].numel, 1024);
  EXPECT_FALSE(ts[5].tp_sharded);  // row-parallel output bias: replicated
  EXPECT_FALSE(ts[8].vector);      // fc1 weight
  EXPECT_DOUBLE_EQ(ts[8].numel + ts[9].numel + ts[10].numel + ts[11].numel, 8.0 * 1024 * 1024 + 4096 + 1024);
  const LayerParams lp = layer_params(m, 0);
  EXPECT_DOUBLE_EQ(sum(ts, true) + sum(ts, false), lp.total());
  EXPECT_DOUBLE_EQ(sum(ts, true), lp.tp_sharded);
  EXPECT_DOUBLE_EQ(lp.total(), 12.0 * 1024 * 1024 + 13 * 1024);
  // A parallel block shares one norm: no pre_mlp_norm.
  m.parallel_block = true;
  EXPECT_EQ(modules(layer_param_tensors(m, 0)), "input_norm input_norm qkv qkv proj proj fc1 fc1 fc2 fc2");
  EXPECT_DOUBLE_EQ(sum(layer_param_tensors(m, 0), true) + sum(layer_param_tensors(m, 0), false),
                   layer_params(m, 0).total());
}

// Llama 3 8B layer: q,o 4096^2 each, k,v 4096 x 1024 each (GQA 8 groups of 128), gated MLP 3 x 4096 x 14336, two
// RMSNorm gains: 218,112,000 (layer_shapes_test.cpp's hand count), one tensor per module.
TEST(LayerParamTensors, LlamaGqaNoBiasRmsNorm) {
  ModelSpec m;
  m.num_layers = 32;
  m.hidden_size = 4096;
  m.num_attention_heads = 32;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 14336;
  m.gated_mlp = true;
  m.normalization = Normalization::RMSNorm;
  m.add_bias_linear = false;
  const auto ts = layer_param_tensors(m, 3);
  EXPECT_EQ(modules(ts), "input_norm qkv proj pre_mlp_norm fc1 fc2");
  EXPECT_DOUBLE_EQ(ts[1].numel, 4096.0 * (4096 + 2 * 1024));
  EXPECT_DOUBLE_EQ(ts[4].numel, 4096.0 * 2 * 14336);
  double total = 0;
  for (const auto& t : ts) total += t.numel;
  EXPECT_DOUBLE_EQ(total, 218'112'000.0);
  EXPECT_DOUBLE_EQ(total, layer_params(m, 3).total());
  EXPECT_DOUBLE_EQ(sum(ts, false), 8192.0);
}

// MLA (h 512, 8 heads, q_lora 128, kv_lora 64, nope 32, rope 16, v 32): the attention is lumped into one TP-sharded
// tensor (q_up 128 x 8 x 48 + kv_up 64 x 8 x 64 = 49152 + 32768) and one replicated (q_down 512 x 128 + q norm 128
// + kv_down 512 x 80 + kv norm 64 = 106688); the output projection 8 x 32 x 512 = 131072 is "proj".
TEST(LayerParamTensors, MlaAttentionIsOneModule) {
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 512;
  m.num_attention_heads = 8;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 1024;
  m.normalization = Normalization::RMSNorm;
  m.add_bias_linear = false;
  m.mla = MlaSpec{128, 64, 32, 16, 32};
  const auto ts = layer_param_tensors(m, 0);
  EXPECT_EQ(modules(ts), "input_norm attention attention proj pre_mlp_norm fc1 fc2");
  EXPECT_DOUBLE_EQ(ts[1].numel, 49152.0 + 32768.0);
  EXPECT_DOUBLE_EQ(ts[2].numel, 106688.0);
  EXPECT_DOUBLE_EQ(ts[3].numel, 131072.0);
  const LayerParams lp = layer_params(m, 0);
  EXPECT_DOUBLE_EQ(sum(ts, true) + sum(ts, false), lp.total());
  EXPECT_DOUBLE_EQ(sum(ts, false), lp.replicated);
  // Without q LoRA the queries come straight from h: 512 x 8 x 48 sharded, no q down-projection or q norm.
  m.mla->q_lora_rank = 0;
  const auto lite = layer_param_tensors(m, 0);
  EXPECT_DOUBLE_EQ(lite[1].numel, 512.0 * 8 * 48 + 32768.0);
  EXPECT_DOUBLE_EQ(sum(lite, true) + sum(lite, false), layer_params(m, 0).total());
}

TEST(LayerParamTensors, MoeLayerIsRejected) {
  ModelSpec m;
  m.num_layers = 2;
  m.hidden_size = 512;
  m.num_attention_heads = 8;
  m.num_query_groups = 8;
  m.ffn_hidden_size = 1024;
  m.moe.num_experts = 4;
  m.moe.expert_ffn_hidden_size = 256;
  EXPECT_THROW(layer_param_tensors(m, 0), Error);
}

}  // namespace
}  // namespace trainsim
