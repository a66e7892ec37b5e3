// Context parallelism as Transformer Engine's ring attention (context_parallel.py, AttnFuncWithCPAndKVP2P):
// per layer and micro-batch, c attention tiles with c-1 KV transfers to the CP ring neighbour in the
// forward and c transfers (KV, KV+dKV, ..., dKV) in the backward; the tiles add up to 1/c of the
// whole causal attention. tests/api/ring_attention_exposure_test.cpp times the overlap.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

// h 512, 8 heads of 64, 2 query groups; s 1024 over `context` ranks on one node.
Scenario context_parallel_scenario(int context, int layers = 2, int gbs = 1) {
  const std::string yaml = R"(
model:
  family: llama
  num_layers: )" + std::to_string(layers) +
                           R"(
  hidden_size: 512
  num_attention_heads: 8
  num_query_groups: 2
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: 1024
training:
  global_batch_size: )" + std::to_string(gbs) +
                           R"(
  micro_batch_size: 1
  recompute: none
parallelism:
  tensor: 1
  pipeline: 1
  context: )" + std::to_string(context) +
                           R"(
  overlap_grad_reduce: false
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
  std::vector<std::int64_t> fwd_bytes, bwd_bytes;  // CP transfers in issue order
  double fwd_attn_flops = 0, bwd_attn_flops = 0;
  int fwd_tiles = 0, bwd_tiles = 0;
};

LayerCp layer0(const Workload& wl) {
  LayerCp r;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.layer != 0 || op.micro_batch != 0) continue;
    const bool fwd = op.phase == Phase::Forward;
    if (op.type == Op::Type::Collective && op.stream == Stream::CpComm) {
      const CollectiveDesc& c = wl.collectives[op.desc];
      EXPECT_EQ(c.kind, CollKind::SendRecv);
      EXPECT_EQ(wl.groups[c.group].kind, GroupKind::CP);
      (fwd ? r.fwd_bytes : r.bwd_bytes).push_back(c.bytes);
    }
    if (op.type != Op::Type::Compute) continue;
    const KernelDesc& k = wl.kernels[op.desc];
    if (k.kind == KernelKind::FlashAttnFwd) r.fwd_attn_flops += k.flops, ++r.fwd_tiles;
    if (k.kind == KernelKind::FlashAttnBwd) r.bwd_attn_flops += k.flops, ++r.bwd_tiles;
  }
  return r;
}

// K and V of the local chunks: 2 x (s/c) x b x g x d elements of 2 bytes = 4 * (1024/c) * 2 * 64 bytes.
TEST(RingAttention, TransfersPerLayerFollowTransformerEngine) {
  for (int c : {2, 4}) {
    const std::int64_t kv = 4LL * (1024 / c) * 2 * 64;
    const LayerCp r = layer0(generate_workload(context_parallel_scenario(c)));
    EXPECT_EQ(r.fwd_bytes, std::vector<std::int64_t>(static_cast<std::size_t>(c - 1), kv)) << "context " << c;
    std::vector<std::int64_t> bwd(static_cast<std::size_t>(c), 2 * kv);
    bwd.front() = kv;  // KV only
    bwd.back() = kv;   // dKV only
    EXPECT_EQ(r.bwd_bytes, bwd) << "context " << c;
    EXPECT_EQ(r.fwd_tiles, c);
    EXPECT_EQ(r.bwd_tiles, c);
  }
}

TEST(RingAttention, TilesAddUpToTheRanksShareOfCausalAttention) {
  const LayerCp whole = layer0(generate_workload(context_parallel_scenario(1)));
  ASSERT_EQ(whole.fwd_tiles, 1);
  for (int c : {2, 4}) {
    const LayerCp r = layer0(generate_workload(context_parallel_scenario(c)));
    EXPECT_DOUBLE_EQ(r.fwd_attn_flops * c, whole.fwd_attn_flops) << "context " << c;
    EXPECT_DOUBLE_EQ(r.bwd_attn_flops * c, whole.bwd_attn_flops) << "context " << c;
  }
}

}  // namespace
}  // namespace trainsim
