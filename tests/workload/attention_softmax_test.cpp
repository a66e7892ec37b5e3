// Unfused attention's softmax: Megatron-based stacks run the fused scale-mask-softmax CUDA kernel
// (FusedScaleMaskSoftmax.is_kernel_available, megatron/core/fusions/fused_softmax.py) — one memory-bound pass priced
// like other fused pointwise kernels; plain PyTorch (FSDP models), fp32, and key lengths beyond the
// kernel's 16384 take the slow unfused path (KernelKind::Softmax).
#include <gtest/gtest.h>

#include <string>

#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

Scenario softmax_scenario(const std::string& framework, const std::string& precision, int seq) {
  const std::string yaml = R"(
model:
  family: gpt
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  ffn_hidden_size: 2048
  vocab_size: 1024
  seq_length: )" + std::to_string(seq) +
                           R"(
training:
  global_batch_size: 8
  micro_batch_size: 1
  precision: )" + precision +
                           R"(
  flash_attention: false
parallelism:
  tensor: 1
  pipeline: 1
  framework: )" + framework +
                           R"(
  zero_stage: )" + (framework == "fsdp" ? "3" : "0") +
                           R"(
cluster:
  gpu: A100-SXM-80GB
  num_gpus: 8
  gpus_per_node: 8
)";
  return parse_scenario(yaml, "softmax.yaml");
}

// The kernel kind of every "attn.softmax" / "attn.softmax.bwd" op; they must all agree.
KernelKind softmax_kind(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  int found = 0;
  KernelKind kind = KernelKind::Gemm;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.type != Op::Type::Compute) continue;
    const std::string& name = wl.names[op.name];
    if (name != "attn.softmax" && name != "attn.softmax.bwd") continue;
    const KernelKind k = wl.kernels[op.desc].kind;
    if (found++ > 0) { EXPECT_EQ(k, kind) << name; }
    kind = k;
  }
  EXPECT_GT(found, 0);
  return kind;
}

TEST(AttentionSoftmax, MegatronFusesItInHalfPrecision) {
  EXPECT_EQ(softmax_kind(softmax_scenario("megatron", "bf16", 2048)), KernelKind::Elementwise);
  EXPECT_EQ(softmax_kind(softmax_scenario("megatron", "fp16", 2048)), KernelKind::Elementwise);
  EXPECT_EQ(softmax_kind(softmax_scenario("deepspeed", "fp16", 2048)), KernelKind::Elementwise);
}

TEST(AttentionSoftmax, UnfusedOutsideTheKernelsLimits) {
  EXPECT_EQ(softmax_kind(softmax_scenario("fsdp", "bf16", 2048)), KernelKind::Softmax);       // plain PyTorch model
  EXPECT_EQ(softmax_kind(softmax_scenario("megatron", "fp32", 2048)), KernelKind::Softmax);   // kernel needs fp16/bf16
  EXPECT_EQ(softmax_kind(softmax_scenario("megatron", "bf16", 32768)), KernelKind::Softmax);  // key length > 16384
}

}  // namespace
}  // namespace trainsim
