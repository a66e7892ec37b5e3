// parallelism.moe_dispatcher: flex (DeepEP). The copies of a token on the network and over NVLink under balanced,
// group-limited routing (token_exchange.cpp), checked against the closed form for DeepSeek-V3 and against routing
// drawn at random; and the workload's four exchanges per MoE layer and micro-batch, with their bytes and SMs.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "collective/deepep_buffers.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/deepep_job.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"
#include "workload/token_exchange.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace {

// DeepSeek-V3 on EP 64 over 8-GPU nodes: 256 experts, top-8, 8 groups of 32 (one node each), 4 chosen.
const ExpertRouting kDeepSeekV3{256, 8, 8, 4};

// k experts uniformly among n without replacement, none of `inside` drawn.
double none_of(int n, int inside, int k) {
  double p = 1;
  for (int i = 0; i < k; ++i) p *= static_cast<double>(n - inside - i) / (n - i);
  return p;
}

TEST(DeepEpExchange, DeepSeekV3NodeLimitedRoutingHalvesTheNetworkCopies) {
  // A node is one group: chosen with probability 4/8, and then holds none of the 8 experts drawn among the 4 x 32
  // with probability C(96, 8) / C(128, 8).
  const double node_hit = 0.5 * (1 - none_of(128, 32, 8));
  EXPECT_NEAR(1 - no_expert_among(kDeepSeekV3, 64, 32), node_hit, 1e-12);
  const TokenExchange x = deepep_exchange(kDeepSeekV3, 64, 8);
  EXPECT_NEAR(x.remote_copies, 8 * node_hit * 7 / 8, 1e-5);  // ~3.17 of the all-to-all's 7
  // A GPU holds 4 experts of its node's 32.
  const double gpu_hit = 0.5 * (1 - none_of(128, 4, 8));
  EXPECT_NEAR(ranks_per_token(kDeepSeekV3, 64), 64 * gpu_hit, 1e-9);
  EXPECT_NEAR(x.nvlink_copies, 64 * gpu_hit * 7 / 8, 1e-4);
  // Without the groups a token reaches more nodes.
  const TokenExchange free = deepep_exchange(ExpertRouting{256, 8, 0, 0}, 64, 8);
  EXPECT_NEAR(free.remote_copies, 8 * (1 - none_of(256, 32, 8)) * 7 / 8, 1e-5);
  EXPECT_GT(free.remote_copies, 1.4f * x.remote_copies);
}

// One expert per rank and no groups: a token goes to exactly top-k ranks.
TEST(DeepEpExchange, OneExpertPerRankReachesTopKRanks) {
  EXPECT_NEAR(ranks_per_token(ExpertRouting{16, 4, 0, 0}, 16), 4.0, 1e-12);
  // Inside one node nothing leaves it.
  const TokenExchange x = deepep_exchange(ExpertRouting{16, 4, 0, 0}, 8, 8);
  EXPECT_EQ(x.remote_copies, 0.0f);
  EXPECT_GT(x.nvlink_copies, 0.0f);
}

// The expectations against routing drawn at random: groups chosen uniformly, then top-k uniformly among their
// experts; groups that do not line up with nodes (6 groups of 16 over 4 nodes of 24) exercise the general case.
TEST(DeepEpExchange, MatchesRandomlyDrawnRouting) {
  struct Case {
    ExpertRouting r;
    int ep, per_node;
  };
  for (const Case& c : {Case{kDeepSeekV3, 64, 8}, Case{{96, 6, 6, 3}, 32, 8}, Case{{64, 4, 0, 0}, 16, 8}}) {
    std::mt19937_64 rng(12345);
    const int per_rank = c.r.experts / c.ep;
    const int groups = std::max(1, c.r.groups), chosen = c.r.groups > 1 ? c.r.group_topk : 1;
    const int size = c.r.experts / groups;
    double nodes = 0, ranks = 0;
    const int tokens = 200000;
    std::vector<int> order(static_cast<std::size_t>(groups));
    for (int t = 0; t < tokens; ++t) {
      std::iota(order.begin(), order.end(), 0);
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<int> candidates;
      for (int g = 0; g < chosen; ++g)
        for (int e = 0; e < size; ++e) candidates.push_back(order[static_cast<std::size_t>(g)] * size + e);
      std::shuffle(candidates.begin(), candidates.end(), rng);
      std::set<int> hit_nodes, hit_ranks;
      for (int k = 0; k < c.r.topk; ++k) {
        const int rank = candidates[static_cast<std::size_t>(k)] / per_rank;
        hit_ranks.insert(rank);
        hit_nodes.insert(rank / c.per_node);
      }
      nodes += static_cast<double>(hit_nodes.size());
      ranks += static_cast<double>(hit_ranks.size());
    }
    const int n = c.ep / c.per_node;
    const TokenExchange x = deepep_exchange(c.r, c.ep, c.per_node);
    EXPECT_NEAR(x.remote_copies, nodes / tokens * (n - 1) / n, 0.01 * x.remote_copies) << c.ep;
    EXPECT_NEAR(ranks_per_token(c.r, c.ep), ranks / tokens, 0.01 * ranks / tokens) << c.ep;
  }
}

// 16 H100 (two nodes), pipeline 2 x data 8, 16 experts over expert 8 (expert_tensor 1): each MoE layer and
// micro-batch runs DeepEP's dispatch and combine, and their backwards, as token exchanges on 20 SMs.
Scenario flex_scenario(const std::string& dispatcher) {
  test::DeepEpJob j;
  j.dispatcher = dispatcher;
  j.pipeline = 2;
  j.expert = 8;
  j.layers = 4;
  j.hidden = 512;
  j.seq = 1024;
  j.nic_gbps = 400;
  return parse_scenario(test::deepep_job_yaml(j), "flex.yaml");
}

TEST(DeepEpExchange, TheWorkloadExchangesEachTokenOnceWithItsExpertIndicesAndWeights) {
  const Scenario s = flex_scenario("flex");
  const Workload wl = generate_workload(s);
  const RankProgram& rank = wl.ranks[0];
  const double tokens = 1024, hidden = 512;
  const TokenExchange expected = deepep_exchange(ExpertRouting{16, 4, 4, 2}, 8, 8);
  int exchanges = 0;
  for (const Op& op : rank.ops) {
    if (op.type != Op::Type::Collective) continue;
    const CollectiveDesc& c = wl.collectives[op.desc];
    const std::string& name = wl.names[op.name];
    if (name.rfind("ep.", 0) != 0) continue;
    ++exchanges;
    EXPECT_TRUE(c.exchange == expected) << name;
    EXPECT_EQ(c.sms, 20) << name;
    EXPECT_EQ(wl.groups[c.group].kind, GroupKind::EP);
    const double per_token = name == "ep.deepep.dispatch"       ? hidden * 2 + 4 * (8 + 4)
                             : name == "ep.deepep.dispatch_bwd" ? hidden * 2 + 4 * 4
                                                                : hidden * 2;
    EXPECT_EQ(c.bytes, static_cast<std::int64_t>(tokens * per_token)) << name;
  }
  // Stage 0 holds two MoE layers; 32 / data 8 = 4 micro-batches; four exchanges each.
  EXPECT_EQ(exchanges, 2 * s.micro_batches_per_iteration() * 4);
  for (const char* name :
       {"ep.deepep.dispatch", "ep.deepep.combine", "ep.deepep.combine_bwd", "ep.deepep.dispatch_bwd"})
    EXPECT_EQ(test::count_named(wl, rank, name), 2 * s.micro_batches_per_iteration()) << name;
  // DeepEP's buffers (deepep_buffers.hpp) are in the memory model's "other", once per GPU.
  const double other_flex = estimate_memory(s).front().other_gib;
  const double other_a2a = estimate_memory(flex_scenario("alltoall")).front().other_gib;
  EXPECT_NEAR((other_flex - other_a2a) * kGiB, deepep_buffer_bytes(512 * 2, 8, kDeepEpSms), 1.0);
  // The all-to-all dispatcher has none of them, and no exchange on any call.
  const Workload a2a = generate_workload(flex_scenario("alltoall"));
  EXPECT_EQ(test::count_named(a2a, a2a.ranks[0], "ep.deepep.dispatch"), 0);
  for (const CollectiveDesc& c : a2a.collectives) EXPECT_FALSE(c.exchange.on());
}

}  // namespace
}  // namespace trainsim
