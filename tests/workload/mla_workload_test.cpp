// Multi-head latent attention in the generated workload (Megatron MLASelfAttention with the TE spec): the
// projections' GEMM FLOPs add up to Megatron's MLA FLOP term (training.py::num_floating_point_operations), the fused
// attention runs QK^T over nope+rope dims and PV over v dims, and under sequence parallelism the TP traffic is
// the latents' all-gathers (not the hidden state's), the shared RoPE key's all-gather and the output projection's
// reduce-scatter.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

// h 512, 8 heads, q_lora 128, kv_lora 64, d_nope 32, d_rope 16, d_v 32; s 512, b 1.
Scenario mla_scenario(int tensor, int q_lora = 128) {
  const std::string yaml = R"(
model:
  family: deepseek
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: 512
  mla: {q_lora_rank: )" + std::to_string(q_lora) +
                           R"(, kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 32}
training:
  global_batch_size: 2
  micro_batch_size: 1
parallelism:
  tensor: )" + std::to_string(tensor) +
                           R"(
  pipeline: 1
  sequence_parallel: true
cluster:
  gpu: H100-SXM
  num_gpus: )" + std::to_string(tensor) +
                           R"(
  gpus_per_node: )" + std::to_string(tensor) +
                           R"(
  nics_per_node: 1
  nic_gbps: 400
)";
  return parse_scenario(yaml, "mla.yaml");
}

// Forward GEMM FLOPs of layer 0's attention (down/up projections, output projection) on one rank, and the fused
// attention kernel.
struct AttentionFlops {
  double projections = 0, core = 0;
};

AttentionFlops forward_flops(const Workload& wl, const RankProgram& r) {
  AttentionFlops f;
  for (const Op& op : r.ops) {
    if (op.type != Op::Type::Compute || op.layer != 0 || op.phase != Phase::Forward || op.micro_batch != 0) continue;
    const std::string& n = wl.names[op.name];
    const KernelDesc& k = wl.kernels[op.desc];
    if (k.kind == KernelKind::Gemm && (n.rfind("mla.", 0) == 0 || n == "proj")) f.projections += k.flops;
    if (k.kind == KernelKind::FlashAttnFwd) f.core += k.flops;
  }
  return f;
}

// Megatron's MLA term per token (forward = 1/3 of it), without the "+1" RMSNorm terms it adds to the GEMMs:
//   q_lora*(h + a*(nope+rope)) + kv_lora*(h + a*(nope+v)) + h*rope + a*v*h
//   = 128*(512 + 384) + 64*(512 + 512) + 512*16 + 256*512 = 114688 + 65536 + 8192 + 131072 = 319488 MACs.
// The down-projections run on each rank's own sequence shard and the rest is split over TP, so the rank's
// FLOPs times t is the whole layer's, whatever t is. Core attention: a*(d_qk + d_v)*s^2 forward (causal),
// split over heads.
TEST(MlaWorkload, ProjectionFlopsAddUpToMegatronsTerm) {
  const double tokens = 512, macs = 319488;
  for (int t : {1, 2}) {
    const Workload wl = generate_workload(mla_scenario(t));
    const AttentionFlops f = forward_flops(wl, wl.ranks[0]);
    EXPECT_DOUBLE_EQ(f.projections * t, 2 * tokens * macs) << "tensor " << t;
    EXPECT_DOUBLE_EQ(f.core * t, 8.0 * (48 + 32) * tokens * tokens) << "tensor " << t;
  }
  // No q LoRA (DeepSeek-V2-Lite): q projected straight from h, h*a*(nope+rope) = 512*384 instead of the q term.
  const Workload lite = generate_workload(mla_scenario(1, 0));
  EXPECT_DOUBLE_EQ(forward_flops(lite, lite.ranks[0]).projections,
                   2 * tokens * (512.0 * 384 + 64 * (512 + 512) + 512 * 16 + 256 * 512));
}

// TP 2 with SP, forward of one layer's attention: the q and kv latents and the shared RoPE key are all-gathered
// over the sequence (T x width bf16 each), the output projection reduce-scattered (T x h). The hidden state
// itself is never gathered for attention (the down-projections are TP-duplicated on the local shard).
TEST(MlaWorkload, SequenceParallelGathersTheLatents) {
  const Workload wl = generate_workload(mla_scenario(2));
  std::map<std::string, std::int64_t> fwd;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.type != Op::Type::Collective || op.layer != 0 || op.micro_batch != 0 || op.phase != Phase::Forward) continue;
    fwd[wl.names[op.name]] = wl.collectives[op.desc].bytes;
  }
  const std::int64_t T = 512;
  EXPECT_EQ(fwd["tp.ag.mla_q_latent"], T * 128 * 2);
  EXPECT_EQ(fwd["tp.ag.mla_kv_latent"], T * 64 * 2);
  EXPECT_EQ(fwd["tp.ag.mla_k_rope"], T * 16 * 2);
  EXPECT_EQ(fwd["tp.rs.proj"], T * 512 * 2);
  EXPECT_EQ(fwd.count("tp.ag.qkv_input"), 0u);
  // Backward mirrors the up-projections: re-gather of each latent and a reduce-scatter of its gradient.
  std::map<std::string, int> bwd;
  for (const Op& op : wl.ranks[0].ops)
    if (op.type == Op::Type::Collective && op.layer == 0 && op.micro_batch == 0 && op.phase == Phase::Backward)
      bwd[wl.names[op.name]] += 1;
  for (const char* n : {"tp.ag.mla_q_latent", "tp.rs.mla_q_latent_dgrad", "tp.ag.mla_kv_latent",
                        "tp.rs.mla_kv_latent_dgrad", "tp.rs.mla_k_rope", "tp.ag.proj_dy"})
    EXPECT_EQ(bwd[n], 1) << n;
}

}  // namespace
}  // namespace trainsim
