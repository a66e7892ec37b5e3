// The MoE block in the generated workload (moe_layer.py, token_dispatcher.py; docs/moe.md): token all-to-all
// bytes per rank (issue 5's check: tokens x hidden x top-k x (EP-1)/EP x bytes per element, dispatch and combine),
// expert-TP all-gather / reduce-scatter, the allgather dispatcher, grouped-GEMM shapes under balanced routing,
// shared experts and the router, dense layers where first_dense_layers / layer_freq say, the expert gradient
// buffer reduced over expert-DP, and per-rank programs that agree on every expert communicator.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "model/layer_shapes.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace {

// 32 H100s: tensor 2 x pipeline 2 x data 8 (derived); expert 4 and expert_tensor 2 (default = tensor) leave
// expert-DP 2. 4 layers, the first dense; experts of width 256, top-2 of 8, one shared expert.
// Per rank and micro-batch: T = 1024 tokens, T_l = 512 under SP.
std::string moe_yaml(const std::string& parallel_extra, const std::string& moe_extra, int shared) {
  return R"(
model:
  family: mixtral
  num_layers: 4
  hidden_size: 512
  num_attention_heads: 8
  num_query_groups: 8
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: 1024
  moe: {num_experts: 8, router_topk: 2, expert_ffn_hidden_size: 256, shared_experts: )" +
         std::to_string(shared) + ", first_dense_layers: 1" + moe_extra + R"(}
training:
  global_batch_size: 32
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 2
  pipeline: 2
  expert: 4
  sequence_parallel: true
)" + parallel_extra +
         R"(
cluster:
  gpu: H100-SXM
  num_gpus: 32
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";
}

Scenario moe_scenario(const std::string& parallel_extra = "", const std::string& moe_extra = "", int shared = 1) {
  return parse_scenario(moe_yaml(parallel_extra, moe_extra, shared), "moe.yaml");
}

struct CollOp {
  std::string name;
  CollKind kind;
  std::int64_t bytes;
  const CommGroup* group;
  int layer, micro_batch;
  Phase phase;
};

std::vector<CollOp> collectives(const Workload& wl, const RankProgram& prog) {
  std::vector<CollOp> out;
  for (const Op& op : prog.ops) {
    if (op.type != Op::Type::Collective) continue;
    const CollectiveDesc& c = wl.collectives[op.desc];
    out.push_back({wl.names[op.name], c.kind, c.bytes, &wl.groups[c.group], op.layer, op.micro_batch, op.phase});
  }
  return out;
}

const KernelDesc* kernel_named(const Workload& wl, const RankProgram& prog, const std::string& name, int layer) {
  for (const Op& op : prog.ops)
    if (op.type == Op::Type::Compute && wl.names[op.name] == name && op.layer == layer) return &wl.kernels[op.desc];
  return nullptr;
}

using test::count_named;

// Issue 5's check: each rank's all-to-all sends tokens x hidden x top-k bf16 elements, of which (EP-1)/EP leave
// the rank. CollKind::AllToAll's bytes are one rank's send buffer (collective/flows/nccl_flows.hpp), so the bytes on
// the wire per rank are desc.bytes x (EP-1)/EP. Dispatch and combine, forward and backward.
TEST(MoeWorkload, AllToAllBytesPerRankAreTokensHiddenTopK) {
  const Scenario s = moe_scenario();
  const Workload wl = generate_workload(s);
  const std::int64_t tokens = 1024 / 2;  // T_l = s*b/(c*t): the SP shard entering the MoE block
  const std::int64_t hidden = 512, topk = 2, ep = 4;
  const double bytes_per_element = 2;  // bf16
  const double expected_per_rank = static_cast<double>(tokens * hidden * topk) * (ep - 1) / ep * bytes_per_element;
  std::map<std::string, int> seen;
  for (const auto& c : collectives(wl, wl.ranks[0])) {
    if (c.kind != CollKind::AllToAll) continue;
    ASSERT_EQ(c.group->kind, GroupKind::EP) << c.name;
    ASSERT_EQ(c.group->ranks.size(), static_cast<std::size_t>(ep));
    seen[c.name] += 1;
    if (c.name.find("probs") != std::string::npos) {  // the routing probabilities travel with the tokens (fp32)
      EXPECT_EQ(c.bytes, tokens * topk * 4) << c.name;
      continue;
    }
    EXPECT_DOUBLE_EQ(static_cast<double>(c.bytes) * (ep - 1) / ep, expected_per_rank) << c.name;
  }
  // Stage 0 holds layers 0 (dense) and 1 (MoE); m = 32 / (1 x data 8) = 4 micro-batches.
  const int m = s.micro_batches_per_iteration();
  for (const char* name : {"ep.alltoall.dispatch", "ep.alltoall.combine", "ep.alltoall.combine_bwd",
                           "ep.alltoall.dispatch_bwd", "ep.alltoall.dispatch_probs", "ep.alltoall.dispatch_probs_bwd"})
    EXPECT_EQ(seen[name], m) << name;  // one MoE layer on stage 0, once per micro-batch
}

// With expert_tensor > 1 the received tokens are all-gathered over expert-TP before the experts and
// reduce-scattered after them (MoEAlltoAllTokenDispatcher): t_e x T_l x k rows of h, gathered in bf16 and summed in
// the routing probabilities' dtype, fp32 (token_combine: .to(self.probs.dtype); megatron.md §6.2 step 10).
TEST(MoeWorkload, ExpertTensorParallelGathersAndScattersTheRoutedRows) {
  const Workload wl = generate_workload(moe_scenario());
  const std::int64_t rows = 2 * 512 * 2;  // t_e x T_l x k
  int ag = 0, rs = 0;
  for (const auto& c : collectives(wl, wl.ranks[0])) {
    if (c.group->kind != GroupKind::ExpertTP) continue;
    EXPECT_EQ(c.group->ranks, (std::vector<int>{0, 1}));  // ETP stride 1 (the TP ranks when t_e = t)
    const bool combine = c.name == "etp.rs.combine" || c.name == "etp.ag.combine_bwd";
    if (c.name == "etp.ag.dispatch" || c.name == "etp.ag.combine_bwd") {
      EXPECT_EQ(c.kind, CollKind::AllGather);
      EXPECT_EQ(c.bytes, rows * 512 * (combine ? 4 : 2)) << c.name;
      ++ag;
    }
    if (c.name == "etp.rs.combine" || c.name == "etp.rs.dispatch_bwd") {
      EXPECT_EQ(c.kind, CollKind::ReduceScatter);
      EXPECT_EQ(c.bytes, rows * 512 * (combine ? 4 : 2)) << c.name;
      ++rs;
    }
  }
  EXPECT_GT(ag, 0);
  EXPECT_EQ(ag, rs);
  // expert_tensor 1: no expert-TP communicator at all.
  const Workload none = generate_workload(moe_scenario("  expert_tensor: 1\n"));
  for (const auto& g : none.groups) EXPECT_NE(g.kind, GroupKind::ExpertTP);
}

// Balanced routing: R = t_e x T_l x k rows over E/ep local experts; the grouped GEMMs are E_l members of
// (R/E_l, G*F_e/t_e, h) and (R/E_l, h, F_e/t_e), so per-rank expert FLOPs 2*T_l*k*h*(G*F_e + F_e) do not depend on
// t_e (per-rank expert FLOPs are independent of t_e).
TEST(MoeWorkload, GroupedGemmShapesUnderBalancedRouting) {
  for (int te : {1, 2}) {
    const Workload wl = generate_workload(moe_scenario("  expert_tensor: " + std::to_string(te) + "\n"));
    const RankProgram& r = wl.ranks[0];
    const KernelDesc* fc1 = kernel_named(wl, r, "experts.fc1", 1);
    const KernelDesc* fc2 = kernel_named(wl, r, "experts.fc2", 1);
    ASSERT_NE(fc1, nullptr);
    ASSERT_NE(fc2, nullptr);
    const std::int64_t local_experts = 8 / 4, rows = te * 512 * 2;
    EXPECT_EQ(fc1->batch, local_experts);
    EXPECT_EQ(fc1->m, rows / local_experts);
    EXPECT_EQ(fc1->n, 2 * 256 / te);  // SwiGLU: gate and up stacked
    EXPECT_EQ(fc1->k, 512);
    EXPECT_EQ(fc2->m, rows / local_experts);
    EXPECT_EQ(fc2->n, 512);
    EXPECT_EQ(fc2->k, 256 / te);
    EXPECT_DOUBLE_EQ(fc1->flops + fc2->flops, 2.0 * 512 * 2 * 512 * (2 * 256 + 256)) << "t_e " << te;
  }
}

// Router gating GEMM on the rank's T_l rows, shared expert as a TP-split MLP of width shared x F_e (TopKRouter,
// SharedExpertMLP).
TEST(MoeWorkload, RouterAndSharedExperts) {
  const Workload wl = generate_workload(moe_scenario());
  const RankProgram& r = wl.ranks[0];
  const KernelDesc* router = kernel_named(wl, r, "moe.router", 1);
  ASSERT_NE(router, nullptr);
  EXPECT_EQ(router->m, 512);
  EXPECT_EQ(router->n, 8);
  EXPECT_EQ(router->k, 512);
  const KernelDesc* shared = kernel_named(wl, r, "shared_experts.fc1", 1);
  ASSERT_NE(shared, nullptr);
  EXPECT_EQ(shared->m, 1024);  // T: the shared expert's input is all-gathered over TP like a dense fc1
  EXPECT_EQ(shared->n, 2 * 256 / 2);
  // Without shared experts there is none.
  const Workload plain = generate_workload(moe_scenario("", "", 0));
  EXPECT_EQ(count_named(plain, plain.ranks[0], "shared_experts.fc1"), 0);
}

// first_dense_layers 1: layer 0 runs the dense MLP, layer 1 the MoE block; layer_freq 2 would make layer 2 dense.
TEST(MoeWorkload, DenseLayersWhereThePatternSays) {
  const Workload wl = generate_workload(moe_scenario());
  EXPECT_NE(kernel_named(wl, wl.ranks[0], "fc1", 0), nullptr);
  EXPECT_EQ(kernel_named(wl, wl.ranks[0], "experts.fc1", 0), nullptr);
  EXPECT_EQ(kernel_named(wl, wl.ranks[0], "fc1", 1), nullptr);
  EXPECT_NE(kernel_named(wl, wl.ranks[0], "experts.fc1", 1), nullptr);
  const Workload freq = generate_workload(moe_scenario("", ", layer_freq: 2"));  // MoE layers: 2 only (1 is odd)
  const RankProgram& last = freq.ranks[1];                                       // stage 1: layers 2, 3
  EXPECT_NE(kernel_named(freq, last, "experts.fc1", 2), nullptr);
  EXPECT_NE(kernel_named(freq, last, "fc1", 3), nullptr);
  EXPECT_EQ(kernel_named(freq, freq.ranks[0], "experts.fc1", 1), nullptr);
}

// The allgather dispatcher (MoEAllGatherTokenDispatcher): routing map, probabilities and tokens all-gathered over
// etp x ep (n = t_e*e ranks see n*T_l tokens), a reduce-scatter of [n*T_l, h] back; no all-to-all.
TEST(MoeWorkload, AllGatherDispatcher) {
  const Workload wl = generate_workload(moe_scenario("  moe_dispatcher: allgather\n"));
  const std::int64_t n = 2 * 4, tokens = 512;
  std::map<std::string, std::int64_t> bytes;
  for (const auto& c : collectives(wl, wl.ranks[0])) {
    EXPECT_NE(c.kind, CollKind::AllToAll) << c.name;
    if (c.group->kind != GroupKind::ExpertTPxEP) continue;
    EXPECT_EQ(c.group->ranks, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
    bytes[c.name] = c.bytes;
  }
  EXPECT_EQ(bytes["etp_ep.ag.tokens"], n * tokens * 512 * 2);
  EXPECT_EQ(bytes["etp_ep.ag.routing_map"], n * tokens * 8);
  EXPECT_EQ(bytes["etp_ep.ag.probs"], n * tokens * 8 * 4);
  EXPECT_EQ(bytes["etp_ep.rs.combine"], n * tokens * 512 * 4);  // summed in the probabilities' dtype
  EXPECT_EQ(bytes["etp_ep.ag.combine_bwd"], n * tokens * 512 * 4);
  EXPECT_EQ(bytes["etp_ep.rs.tokens_bwd"], n * tokens * 512 * 2);
}

// Dense and expert gradients live in separate DDP buffers (param_and_grad_buffer.py): the dense one
// reduce-scattered over dp x cp, the expert one over expert-DP (D_e = 32 / (2 * 4 * 2) = 2), each carrying its
// parameters x 4 B (fp32 grads); the distributed optimizer all-gathers both.
TEST(MoeWorkload, ExpertGradientsReduceOverExpertDataParallel) {
  const Scenario s = moe_scenario();
  const Workload wl = generate_workload(s);
  for (std::size_t stage = 0; stage < 2; ++stage) {
    double dense = 0, expert = 0, dense_ag = 0, expert_ag = 0;
    for (const auto& c : collectives(wl, wl.ranks[stage])) {
      if (c.name == "dp.grad_reduce_scatter") {
        EXPECT_EQ(c.group->kind, GroupKind::DP);
        dense += static_cast<double>(c.bytes);
      } else if (c.name == "edp.grad_reduce_scatter") {
        EXPECT_EQ(c.group->kind, GroupKind::ExpertDP);
        EXPECT_EQ(c.group->ranks.size(), 2u);
        expert += static_cast<double>(c.bytes);
      } else if (c.name == "dp.param_allgather") {
        dense_ag += static_cast<double>(c.bytes);
      } else if (c.name == "edp.param_allgather") {
        expert_ag += static_cast<double>(c.bytes);
      }
    }
    // Expert parameters on a rank: the MoE layers of the stage, E*(3*h*F_e) / (ep * t_e).
    const double per_layer = 8.0 * 3 * 512 * 256 / (4 * 2);
    const int moe_layers = stage == 0 ? 1 : 2;
    EXPECT_NEAR(expert, moe_layers * per_layer * 4, 1.0) << "stage " << stage;
    EXPECT_NEAR(expert_ag, moe_layers * per_layer * 2, 1.0) << "stage " << stage;
    EXPECT_GT(dense, 0);
    EXPECT_NEAR(dense_ag * 2, dense, 8.0);
  }
  // The expert-DP group of rank 0 in the expert view: etp 0, ep 0, edp 0..1 -> stride t_e * e = 8.
  bool found = false;
  for (const auto& g : wl.groups)
    if (g.kind == GroupKind::ExpertDP && g.ranks.front() == 0) {
      EXPECT_EQ(g.ranks, (std::vector<int>{0, 8}));
      found = true;
    }
  EXPECT_TRUE(found);
}

// --per-rank: every member of every expert communicator issues the same collectives in the same order (the
// engine matches the n-th call on a group across its members and rejects a mismatch).
TEST(MoeWorkload, PerRankProgramsAgreeOnEveryExpertGroup) {
  const Scenario s = moe_scenario();
  WorkloadOptions o;
  o.per_rank = true;
  const Workload wl = generate_workload(s, o);
  ASSERT_EQ(wl.ranks.size(), 32u);
  std::map<std::uint32_t, std::vector<std::pair<CollKind, std::int64_t>>> first_member_calls;
  std::map<std::uint32_t, std::map<int, std::vector<std::pair<CollKind, std::int64_t>>>> calls;
  for (const RankProgram& r : wl.ranks)
    for (const Op& op : r.ops) {
      if (op.type != Op::Type::Collective) continue;
      const CollectiveDesc& c = wl.collectives[op.desc];
      if (!is_expert_group(wl.groups[c.group].kind)) continue;
      calls[c.group][r.rank].emplace_back(c.kind, c.bytes);
    }
  ASSERT_FALSE(calls.empty());
  for (const auto& [group, by_rank] : calls) {
    const CommGroup& g = wl.groups[group];
    ASSERT_EQ(by_rank.size(), g.ranks.size()) << to_string(g.kind);
    for (const auto& [rank, seq] : by_rank) EXPECT_EQ(seq, by_rank.begin()->second) << "rank " << rank;
    EXPECT_EQ(g.simulated_members, static_cast<int>(g.ranks.size()));
  }
}

// The default mode simulates one rank per stage; each expert group then has that one simulated member.
TEST(MoeWorkload, OneSimulatedRankPerStage) {
  const Workload wl = generate_workload(moe_scenario());
  ASSERT_EQ(wl.ranks.size(), 2u);
  for (const auto& g : wl.groups)
    if (is_expert_group(g.kind)) { EXPECT_EQ(g.simulated_members, 1) << to_string(g.kind); }
}

}  // namespace
}  // namespace trainsim
