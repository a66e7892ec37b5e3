// torchtitan's per-op selective checkpointing (recompute_modules: [torchtitan_op]): what the block re-runs at the
// start of its backward (the matmuls wk, wo, w3, not attention), what it keeps (the saved ops' outputs), and the
// hardware FLOPs it adds.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/units.hpp"
#include "model/flops.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/torchtitan_job.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"
#include "workload/workload.hpp"

namespace trainsim {
namespace {

using test::kTitanFfn;
using test::kTitanGroups;
using test::kTitanHeads;
using test::kTitanHidden;
using test::kTitanMicroBatch;
using test::kTitanSeq;

Scenario torchtitan_op_job(int tensor, int layers, const std::string& recompute_modules = "[torchtitan_op]") {
  return parse_scenario(test::torchtitan_job_yaml(tensor, layers, recompute_modules), "tt.yaml");
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
  const std::int64_t t = 2, tokens = kTitanSeq * kTitanMicroBatch, head = kTitanHidden / kTitanHeads;
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
  EXPECT_DOUBLE_EQ(gemms["qkv.k"]->flops, 2.0 * tokens * (kTitanGroups * head / t) * kTitanHidden);
  EXPECT_DOUBLE_EQ(gemms["proj"]->flops, 2.0 * tokens * kTitanHidden * (kTitanHeads * head / t));
  EXPECT_DOUBLE_EQ(gemms["fc1.w3"]->flops, 2.0 * tokens * (kTitanFfn / t) * kTitanHidden);
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
  const double q = kTitanHidden, kv = kTitanGroups * (kTitanHidden / kTitanHeads),
               tokens = kTitanSeq * kTitanMicroBatch;
  for (const int t : {1, 2}) {
    SCOPED_TRACE(t);
    const double layer = estimate_memory(torchtitan_op_job(t, 3))[0].activations_gib -
                         estimate_memory(torchtitan_op_job(t, 2))[0].activations_gib;
    const double replicated = 2.0 * kTitanHidden + (t > 1 ? 4.0 * kTitanHidden : 0);
    const double sharded = 2 * q + 2 * kv + 2 * q + 2.0 * kTitanFfn;
    const double per_token = replicated / t + sharded / t + 2.0 * kTitanHidden;
    EXPECT_NEAR(layer, tokens * per_token / kGiB, 1e-9);
  }
}

TEST(TorchtitanOp, AddsTheRecomputedMatmulsToHardwareFlops) {
  const Scenario s = torchtitan_op_job(1, 2);
  const double model = model_flops_per_iteration(s.model, 16, 1);
  const double hw =
      hardware_flops_per_iteration(s.model, 16, 1, RecomputeGranularity::Selective, 0, s.training.recompute_modules);
  const double kv = kTitanGroups * (kTitanHidden / kTitanHeads);
  EXPECT_NEAR(hw - model, 16.0 * kTitanSeq * 2 * 2.0 * kTitanHidden * (kv + kTitanHidden + kTitanFfn), 1.0);
}

}  // namespace
}  // namespace trainsim
