// Context parallelism as PyTorch's context_parallel runs it under framework fsdp (torchtitan; layer_ops_cp.cpp):
// per layer and micro-batch, one all-gather of K and V expanded to every query head in forward and another in
// backward, c attention tiles each way (the same tiles as the zig-zag ring), an fp32 merge per forward step and
// c fp32 dK/dV hops in backward. Under torch.compile each transfer is waited for where it is issued, so none hides
// behind a tile; eager PyTorch hides all but the last hop. Memory holds the gathered K/V and the fp32 buffers.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "trainsim/trainsim.hpp"
#include "core/units.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"

namespace trainsim {
namespace {

// h 512, 8 heads of 64, 2 query groups; s 1024 over `context` ranks on one node; FSDP (PyTorch).
Scenario torch_cp_scenario(int context, const std::string& fusion = "fused", const std::string& framework = "fsdp",
                           int seq = 1024) {
  const std::string yaml = R"(
model:
  family: llama
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  num_query_groups: 2
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: )" + std::to_string(seq) +
                           R"(
training:
  global_batch_size: 1
  micro_batch_size: 1
  recompute: none
  fusion: )" + fusion + R"(
parallelism:
  tensor: 1
  pipeline: 1
  context: )" + std::to_string(context) +
                           R"(
  framework: )" + framework +
                           R"(
  zero_stage: 3
cluster:
  gpu: H100-SXM
  num_gpus: )" + std::to_string(context) +
                           R"(
  gpus_per_node: )" + std::to_string(context) +
                           R"(
)";
  return parse_scenario(yaml, "cp.yaml");
}

struct LayerCp {
  std::vector<std::int64_t> fwd_gathers, bwd_gathers, bwd_hops, send_recvs_fwd;
  int fwd_tiles = 0, bwd_tiles = 0, merges = 0;
};

LayerCp layer0(const Workload& wl) {
  LayerCp r;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.layer != 0 || op.micro_batch != 0) continue;
    const bool fwd = op.phase == Phase::Forward;
    const std::string& name = wl.names[op.name];
    if (op.type == Op::Type::Collective && op.stream == Stream::CpComm) {
      const CollectiveDesc& c = wl.collectives[op.desc];
      EXPECT_EQ(wl.groups[c.group].kind, GroupKind::CP);
      if (c.kind == CollKind::AllGather) (fwd ? r.fwd_gathers : r.bwd_gathers).push_back(c.bytes);
      if (c.kind == CollKind::SendRecv) (fwd ? r.send_recvs_fwd : r.bwd_hops).push_back(c.bytes);
    }
    if (op.type != Op::Type::Compute) continue;
    const KernelDesc& k = wl.kernels[op.desc];
    if (k.kind == KernelKind::FlashAttnFwd) ++r.fwd_tiles;
    if (k.kind == KernelKind::FlashAttnBwd) ++r.bwd_tiles;
    if (name == "core_attn.cp_merge") ++r.merges;
  }
  return r;
}

}  // namespace

// K and V of the local chunks expanded to the 8 query heads: 2 x (1024/c) x 8 x 64 elements of 2 bytes, gathered
// from c ranks; dK/dV in fp32: 2 x (1024/c) x 8 x 64 x 4 bytes per hop, c hops.
TEST(TorchRingAttention, GathersExpandedKvAndSendsFp32GradientsEveryStep) {
  for (int c : {2, 4}) {
    const std::int64_t kv = 2LL * (1024 / c) * 8 * 64 * 2;
    const LayerCp r = layer0(generate_workload(torch_cp_scenario(c)));
    EXPECT_EQ(r.fwd_gathers, std::vector<std::int64_t>{c * kv}) << "context " << c;
    EXPECT_EQ(r.bwd_gathers, std::vector<std::int64_t>{c * kv}) << "context " << c;
    EXPECT_TRUE(r.send_recvs_fwd.empty());
    EXPECT_EQ(r.bwd_hops, std::vector<std::int64_t>(static_cast<std::size_t>(c), 2 * kv)) << "context " << c;
    EXPECT_EQ(r.fwd_tiles, c);
    EXPECT_EQ(r.bwd_tiles, c);
    EXPECT_EQ(r.merges, c);
  }
  // Megatron keeps Transformer Engine's ring: point-to-point KV of the query groups, no all-gather.
  const LayerCp te = layer0(generate_workload(torch_cp_scenario(4, "fused", "megatron")));
  EXPECT_TRUE(te.fwd_gathers.empty());
  EXPECT_EQ(te.send_recvs_fwd.size(), 3u);
}

// Compiled, every transfer is exposed; eager, the gather hides behind the causal tile and each hop behind the next
// tile, so less of the context-parallel communication shows (one node, NVLink; 64K tokens, so that the tiles are
// long enough to hide a transfer and the host's launches keep ahead).
TEST(TorchRingAttention, CompiledRingWaitsForEachTransferWhereItIsIssued) {
  const RunResult compiled = run_scenario(torch_cp_scenario(4, "fused", "fsdp", 65536)).result;
  const RunResult eager = run_scenario(torch_cp_scenario(4, "eager", "fsdp", 65536)).result;
  EXPECT_GT(compiled.breakdown.exposed_cp, 0);
  EXPECT_GT(compiled.breakdown.exposed_cp, 2 * eager.breakdown.exposed_cp);
}

// Memory: the gathered K/V (c x the local expanded block, bf16), fp32 dQ and dK/dV, and the fp32 dK/dV send and
// receive buffers: for c = 4, q = 256 x 8 x 64 elements, kv = 2q: 4 x 2q x 2 + 4 x 3q + 8 x 2q bytes. Against the
// same job under Megatron, whose loss also keeps 2 B more per logit (fp32 softmax against FSDP's bf16 logits):
// 256 tokens x 1024 vocabulary x 2 B less.
TEST(TorchRingAttention, MemoryHoldsTheGatheredKvAndTheFp32Buffers) {
  const double q = 256.0 * 8 * 64;
  const double expected = 4 * 2 * q * 2 + 4 * 3 * q + 8 * 2 * q - 256.0 * 1024 * 2;
  const double fsdp = estimate_memory(torch_cp_scenario(4)).front().activations_gib;
  Scenario without = torch_cp_scenario(4);
  without.parallelism.framework = Framework::Megatron;  // Transformer Engine's ring keeps no such buffers
  without.parallelism.zero_stage = 1;
  EXPECT_GT(fsdp, 0);
  EXPECT_NEAR(fsdp * kGiB - estimate_memory(without).front().activations_gib * kGiB, expected, 1);
}

}  // namespace trainsim
