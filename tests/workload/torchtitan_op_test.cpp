// torchtitan's per-op selective checkpointing (recompute_modules: [torchtitan_op]): what the block re-runs at the
// start of its backward (the matmuls wk, wo, w3, not attention), what it keeps (the saved ops' outputs), and the
// hardware FLOPs it adds.
#include <gtest/gtest.h>

#include <string>

#include "model/flops.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"
#include "workload/workload.hpp"
#include "core/units.hpp"
#include <map>

namespace trainsim {
namespace {

constexpr std::int64_t kTitanH = 1024, kTitanHeads = 8, kTitanGroups = 2, kTitanFfn = 4096, kTitanSeq = 2048,
                       kTitanMb = 2;

Scenario torchtitan_op_job(int tensor, int layers, const std::string& recompute_modules = "[torchtitan_op]") {
  const std::string yaml = R"(
model:
  family: llama
  num_layers: )" + std::to_string(layers) +
                           R"(
  hidden_size: 1024
  num_attention_heads: 8
  num_query_groups: 2
  ffn_hidden_size: 4096
  vocab_size: 32000
  seq_length: 2048
training:
  global_batch_size: 16
  micro_batch_size: 2
  precision: bf16
  recompute: selective
  recompute_modules: )" + recompute_modules +
                           R"(
parallelism:
  tensor: )" + std::to_string(tensor) +
                           R"(
  sequence_parallel: true
  framework: fsdp
  zero_stage: 3
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
  return parse_scenario(yaml, "tt.yaml");
}

// The recompute-phase ops of layer 0, micro-batch 0, by name, with their kernels.
std::vector<const Op*> layer0_recompute_ops(const Workload& wl) {
  std::vector<const Op*> out;
  for (const Op& op : wl.ranks[0].ops)
    if (op.phase == Phase::Recompute && op.layer == 0 && op.micro_batch == 0) out.push_back(&op);
  return out;
}

TEST(TorchtitanOp, RecomputesTheEvenMatmulsNotAttention) {
  const Workload wl = generate_workload(torchtitan_op_job(2, 2), {});
  const std::int64_t t = 2, tokens = kTitanSeq * kTitanMb, head = kTitanH / kTitanHeads;
  std::map<std::string, const KernelDesc*> gemms;
  bool attention = false;
  for (const Op* op : layer0_recompute_ops(wl)) {
    const std::string name = wl.names[op->name];
    if (name.rfind("core_attn", 0) == 0) attention = true;
    if (wl.kernels[op->desc].kind == KernelKind::Gemm) gemms[name] = &wl.kernels[op->desc];
  }
  EXPECT_FALSE(attention) << "SDPA's output is saved";
  ASSERT_EQ(gemms.size(), 3u) << "wk, wo and w3";
  ASSERT_TRUE(gemms.count("qkv.k") && gemms.count("proj") && gemms.count("fc1.w3"));
  // M x N x K per TP rank: wk T x (g d / t) x h, wo T x h x (a d / t), w3 T x (F / t) x h.
  EXPECT_DOUBLE_EQ(gemms["qkv.k"]->flops, 2.0 * tokens * (kTitanGroups * head / t) * kTitanH);
  EXPECT_DOUBLE_EQ(gemms["proj"]->flops, 2.0 * tokens * kTitanH * (kTitanHeads * head / t));
  EXPECT_DOUBLE_EQ(gemms["fc1.w3"]->flops, 2.0 * tokens * (kTitanFfn / t) * kTitanH);
}

TEST(TorchtitanOp, MegatronSelectiveRecomputesAttentionInstead) {
  const Workload wl = generate_workload(torchtitan_op_job(2, 2, "null"), {});
  bool attention = false, gemm = false;
  for (const Op* op : layer0_recompute_ops(wl)) {
    attention |= wl.names[op->name].rfind("core_attn", 0) == 0;
    gemm |= wl.kernels[op->desc].kind == KernelKind::Gemm;
  }
  EXPECT_TRUE(attention);
  EXPECT_FALSE(gemm);
}

// One layer's activations per token: the block input, wq's, wv's, SDPA's and w1's outputs, w2's output (whole on every
// TP rank, before its reduce-scatter) and, under TP with SP, the two reduce-scatters' outputs.
TEST(TorchtitanOp, KeepsTheSavedOutputsOnly) {
  const double q = kTitanH, kv = kTitanGroups * (kTitanH / kTitanHeads), tokens = kTitanSeq * kTitanMb;
  for (const int t : {1, 2}) {
    SCOPED_TRACE(t);
    const double layer = estimate_memory(torchtitan_op_job(t, 3))[0].activations_gib -
                         estimate_memory(torchtitan_op_job(t, 2))[0].activations_gib;
    const double replicated = 2.0 * kTitanH + (t > 1 ? 4.0 * kTitanH : 0);
    const double sharded = 2 * q + 2 * kv + 2 * q + 2.0 * kTitanFfn;
    const double per_token = replicated / t + sharded / t + 2.0 * kTitanH;
    EXPECT_NEAR(layer, tokens * per_token / kGiB, 1e-9);
  }
}

TEST(TorchtitanOp, AddsTheRecomputedMatmulsToHardwareFlops) {
  const Scenario s = torchtitan_op_job(1, 2);
  const double model = model_flops_per_iteration(s.model, 16, 1);
  const double hw =
      hardware_flops_per_iteration(s.model, 16, 1, RecomputeGranularity::Selective, 0, s.training.recompute_modules);
  const double kv = kTitanGroups * (kTitanH / kTitanHeads);
  EXPECT_NEAR(hw - model, 16.0 * kTitanSeq * 2 * 2.0 * kTitanH * (kv + kTitanH + kTitanFfn), 1.0);
}

}  // namespace
}  // namespace trainsim
