// training.fusion: eager runs a layer's memory-bound work as PyTorch's own ops (layer_ops_eager.cpp): PyTorch's
// layer_norm kernel, RMSNorm / SwiGLU / RoPE as chains of elementwise ops, and layout copies around the fused
// attention kernel. The GEMMs and the attention kernel are the same as with fused kernels.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

Scenario eager_layer_scenario(const std::string& family, const std::string& fusion) {
  const std::string yaml = R"(
model:
  family: )" + family + R"(
  num_layers: 2
  hidden_size: 1024
  num_attention_heads: 8
  ffn_hidden_size: 4096
  vocab_size: 1024
  seq_length: 2048
training:
  global_batch_size: 8
  micro_batch_size: 1
  precision: bf16
  fusion: )" + fusion + R"(
parallelism:
  tensor: 1
  pipeline: 1
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
  return parse_scenario(yaml, "eager.yaml");
}

struct OpTotals {
  double bytes = 0, flops = 0;
  int count = 0;
  KernelKind kind = KernelKind::Gemm;
};

// Per op name: summed HBM bytes and FLOPs, calls and kernel kind, over layer 0 of rank 0.
std::map<std::string, OpTotals> layer_ops(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  std::map<std::string, OpTotals> out;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.type != Op::Type::Compute || op.layer != 0) continue;
    OpTotals& t = out[wl.names[op.name]];
    const KernelDesc& k = wl.kernels[op.desc];
    t.bytes += k.bytes;
    t.flops += k.flops;
    t.kind = k.kind;
    ++t.count;
  }
  return out;
}

TEST(EagerLayer, GemmsAndAttentionAreTheSameKernels) {
  for (const char* family : {"gpt", "llama"}) {
    auto eager = layer_ops(eager_layer_scenario(family, "eager"));
    auto fused = layer_ops(eager_layer_scenario(family, "fused"));
    for (const char* name : {"qkv", "proj", "fc1", "fc2", "fc1.wgrad", "qkv.dgrad", "core_attn.fwd", "core_attn.bwd"}) {
      ASSERT_TRUE(eager.count(name)) << family << " " << name;
      EXPECT_DOUBLE_EQ(eager[name].flops, fused[name].flops) << family << " " << name;
      EXPECT_EQ(eager[name].count, fused[name].count) << family << " " << name;
    }
  }
}

TEST(EagerLayer, LayerNormRunsPyTorchsKernel) {
  auto eager = layer_ops(eager_layer_scenario("gpt", "eager"));
  auto fused = layer_ops(eager_layer_scenario("gpt", "fused"));
  EXPECT_EQ(eager["input_norm"].kind, KernelKind::TorchLayerNorm);
  EXPECT_EQ(fused["input_norm"].kind, KernelKind::LayerNorm);
  // Same forward traffic (read x, write y); the backward adds the weight-gradient kernel's second read.
  EXPECT_DOUBLE_EQ(eager["input_norm"].bytes, fused["input_norm"].bytes);
  EXPECT_DOUBLE_EQ(eager["input_norm.bwd"].bytes, fused["input_norm.bwd"].bytes * 5.0 / 3.0);
  // A lone GeLU is one kernel either way.
  EXPECT_DOUBLE_EQ(eager["gelu"].bytes, fused["gelu"].bytes);
}

TEST(EagerLayer, RmsNormSwigluAndRopeAreChainsOfElementwiseOps) {
  auto eager = layer_ops(eager_layer_scenario("llama", "eager"));
  auto fused = layer_ops(eager_layer_scenario("llama", "fused"));
  const double rows_h = 2048.0 * 1024.0;  // T x h of one micro-batch
  EXPECT_EQ(eager["input_norm"].kind, KernelKind::Elementwise);
  EXPECT_DOUBLE_EQ(eager["input_norm"].bytes, rows_h * (4 * 2 + 28));      // 4 ab + 28 per element
  EXPECT_DOUBLE_EQ(eager["input_norm.bwd"].bytes, rows_h * (8 * 2 + 60));  // 8 ab + 60
  EXPECT_DOUBLE_EQ(eager["swiglu"].bytes, fused["swiglu"].bytes * 5.0 / 3.0);
  EXPECT_DOUBLE_EQ(eager["swiglu.bwd"].bytes, fused["swiglu.bwd"].bytes * 9.0 / 5.0);
  EXPECT_DOUBLE_EQ(eager["rope"].bytes, fused["rope"].bytes * 5.0);
}

TEST(EagerLayer, AttentionLayoutCopiesOnlyWhenEager) {
  auto eager = layer_ops(eager_layer_scenario("llama", "eager"));
  auto fused = layer_ops(eager_layer_scenario("llama", "fused"));
  for (const char* name : {"attn.output_layout", "attn.output_layout.bwd", "attn.qkv_grad_layout"}) {
    EXPECT_EQ(eager[name].count, 1) << name;
    EXPECT_EQ(fused.count(name), 0u) << name;
  }
  // The output [T, a d] read and written once; the q, k, v gradients [T, (a + 2 g) d] likewise.
  EXPECT_DOUBLE_EQ(eager["attn.output_layout"].bytes, 2048.0 * 1024 * 4);
  EXPECT_DOUBLE_EQ(eager["attn.qkv_grad_layout"].bytes, 2048.0 * 3072 * 4);
}

}  // namespace
}  // namespace trainsim
