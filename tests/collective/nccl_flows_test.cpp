// Flow DAGs of NCCL collectives against what NCCL 2.30.7's code gives for a hand-built 2 × 8 H100
// communicator (rings, trees and NVLS heads exactly as NCCL's search reports them; docs/collectives.md), plus
// conservation checks (per rank bytes = the collective's definition) and PerStep == PerChannel
// totals per (src, dst, link).
#include <gtest/gtest.h>

#include <numeric>

#include <map>
#include <memory>
#include <tuple>

#include "collective/flows/nccl_flows.hpp"
#include "collective/nccl/nccl_node_topology.hpp"
#include "core/error.hpp"
#include "support/byte_sizes.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using test::GiB;
using test::KiB;
using test::MiB;

void set_ring(NcclCommunicator& c, RingChannel& ring, const std::vector<int>& order) {
  const auto n = static_cast<std::size_t>(c.nranks);
  ring.order = order;
  ring.next.assign(n, -1);
  ring.prev.assign(n, -1);
  ring.send_net.assign(n, -1);
  ring.recv_net.assign(n, -1);
  ring.send_proxy.resize(n);
  for (std::size_t r = 0; r < n; ++r) ring.send_proxy[r] = static_cast<int>(r);
  for (std::size_t i = 0; i < n; ++i) {
    const int a = order[i], b = order[(i + 1) % n];
    ring.next[static_cast<std::size_t>(a)] = b;
    ring.prev[static_cast<std::size_t>(b)] = a;
    if (c.node_of[static_cast<std::size_t>(a)] != c.node_of[static_cast<std::size_t>(b)]) {
      ring.send_net[static_cast<std::size_t>(a)] = c.local_of[static_cast<std::size_t>(a)];  // rail-aligned (NCCL)
      ring.recv_net[static_cast<std::size_t>(b)] = c.local_of[static_cast<std::size_t>(b)];
    }
  }
}

void set_layout(NcclCommunicator& c, int nnodes, int ppn) {
  c.nranks = nnodes * ppn;
  c.nnodes = nnodes;
  c.node_ranks.assign(static_cast<std::size_t>(nnodes), {});
  for (int r = 0; r < c.nranks; ++r) {
    c.node_of.push_back(r / ppn);
    c.local_of.push_back(r % ppn);
    c.node_ranks[static_cast<std::size_t>(r / ppn)].push_back(r);
  }
  // NCCL_P2P_SCHEDULE_GROUP_SIZE as build_communicator sets it (ncclP2pSchedule): 8 across nodes, reduced to
  // divide the ranks per node; one node = all its ranks.
  c.p2p_group_size = nnodes > 1 ? std::gcd(8, ppn) : ppn;
  c.sm = 90;
}

// NCCL's result for 2 nodes × 8 H100: 16 channels (ring c and c+8 identical), tree 0 / tree 1, NVLS heads 0..7.
NcclCommunicator h100_2x8() {
  NcclCommunicator c;
  set_layout(c, 2, 8);
  const std::vector<std::vector<int>> rings = {
      {0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8}, {0, 8, 15, 14, 13, 12, 11, 10, 9, 1, 2, 3, 4, 5, 6, 7},
      {0, 7, 6, 5, 4, 3, 11, 12, 13, 14, 15, 8, 9, 10, 2, 1}, {0, 1, 2, 10, 9, 8, 15, 14, 13, 12, 11, 3, 4, 5, 6, 7},
      {0, 7, 6, 5, 13, 14, 15, 8, 9, 10, 11, 12, 4, 3, 2, 1}, {0, 1, 2, 3, 4, 12, 11, 10, 9, 8, 15, 14, 13, 5, 6, 7},
      {0, 7, 15, 8, 9, 10, 11, 12, 13, 14, 6, 5, 4, 3, 2, 1}, {0, 1, 2, 3, 4, 5, 6, 14, 13, 12, 11, 10, 9, 8, 15, 7}};
  c.nchannels = 16;
  c.rings.resize(16);
  c.trees.resize(16);
  for (int ch = 0; ch < 16; ++ch) {
    set_ring(c, c.rings[static_cast<std::size_t>(ch)], rings[static_cast<std::size_t>(ch % 8)]);
    TreeChannel& t = c.trees[static_cast<std::size_t>(ch)];
    t.up.assign(16, -1);
    t.down.assign(16, {-1, -1, -1});
    t.net.assign(16, -1);
    const int head = ch % 8;  // chain head c, chain c, c+1, ..., c+7 on both nodes, NIC c
    for (int node = 0; node < 2; ++node)
      for (int k = 0; k < 8; ++k) {
        const int r = node * 8 + (head + k) % 8;
        if (k > 0) t.up[static_cast<std::size_t>(r)] = node * 8 + (head + k - 1) % 8;
        if (k < 7) t.down[static_cast<std::size_t>(r)][0] = node * 8 + (head + k + 1) % 8;
      }
    const int root = ch < 8 ? head : 8 + head, other = ch < 8 ? 8 + head : head;
    t.down[static_cast<std::size_t>(root)][1] = other;
    t.up[static_cast<std::size_t>(other)] = root;
    t.net[static_cast<std::size_t>(head)] = t.net[static_cast<std::size_t>(8 + head)] = head;
  }
  c.nvls_channels = 16;
  c.nvls_heads = 8;
  for (int h = 0; h < 8; ++h) c.nvls_head_local.push_back(h);
  c.nvls_graph.nchannels = 8;
  for (int h = 0; h < 8; ++h) {
    c.nvls_graph.intra.push_back({h});
    c.nvls_graph.net_in.push_back(h);
    c.nvls_graph.net_out.push_back(h);
  }
  c.node_tree_up[0] = {-1, 0};
  c.node_tree_down[0] = {{1, -1}, {-1, -1}};
  c.node_tree_up[1] = {1, -1};
  c.node_tree_down[1] = {{-1, -1}, {0, -1}};
  c.p2p_nchannels = 16;
  c.p2p_channels_per_peer = 4;
  c.p2p_group_size = 8;
  return c;
}

// One node of 8 NVSwitch-connected GPUs (NVLS single node) with a simple ring.
NcclCommunicator h100_1x8() {
  NcclCommunicator c;
  set_layout(c, 1, 8);
  c.nchannels = 2;
  c.rings.resize(2);
  for (auto& r : c.rings) set_ring(c, r, {0, 1, 2, 3, 4, 5, 6, 7});
  c.nvls_channels = 16;
  c.nvls_heads = 8;
  for (int h = 0; h < 8; ++h) c.nvls_head_local.push_back(h);
  c.p2p_nchannels = 2;
  c.p2p_channels_per_peer = 2;
  return c;
}

// 4 nodes × 1 GPU (PAT), ring 0 1 2 3.
NcclCommunicator one_per_node(int n) {
  NcclCommunicator c;
  set_layout(c, n, 1);
  c.nchannels = 2;
  c.rings.resize(2);
  std::vector<int> order;
  for (int r = 0; r < n; ++r) order.push_back(r);
  for (auto& r : c.rings) set_ring(c, r, order);
  return c;
}

using Key = std::tuple<int, int, int, int, int>;  // src kind, src, dst kind, dst, link
std::map<Key, std::pair<std::int64_t, std::int64_t>> bytes_and_payload_by_edge(const FlowDag& dag) {
  std::map<Key, std::pair<std::int64_t, std::int64_t>> m;
  for (const Flow& f : dag.flows) {
    auto& t = m[{static_cast<int>(f.src.kind), f.src.index, static_cast<int>(f.dst.kind), f.dst.index,
                 static_cast<int>(f.link)}];
    t.first += f.bytes;
    t.second += f.payload;
  }
  return m;
}

// Per (node, NIC) network bytes sent.
std::map<std::pair<int, int>, std::int64_t> nic_egress(const NcclCommunicator& c, const FlowDag& dag) {
  std::map<std::pair<int, int>, std::int64_t> m;
  for (const Flow& f : dag.flows)
    if (f.link == LinkClass::Network) m[{c.node_of[static_cast<std::size_t>(f.src.index)], f.src_net}] += f.bytes;
  return m;
}
std::map<std::pair<int, int>, std::int64_t> nic_ingress(const NcclCommunicator& c, const FlowDag& dag) {
  std::map<std::pair<int, int>, std::int64_t> m;
  for (const Flow& f : dag.flows)
    if (f.link == LinkClass::Network) m[{c.node_of[static_cast<std::size_t>(f.dst.index)], f.dst_net}] += f.bytes;
  return m;
}

void expect_valid_dag(const FlowDag& dag) {
  for (std::size_t i = 0; i < dag.flows.size(); ++i) {
    const Flow& f = dag.flows[i];
    ASSERT_LE(f.dep_begin, f.dep_end);
    ASSERT_LE(f.dep_end, dag.dep_index.size());
    for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) ASSERT_LT(dag.dep_index[d], i) << "flow " << i;
    ASSERT_GE(f.bytes, f.payload);
  }
}

FlowDag gen(const NcclCommunicator& c, CollKind k, std::int64_t bytes, NcclAlgorithm a, NcclProtocol p, int channels,
            FlowGranularity g = FlowGranularity::PerChannel, int root = 0) {
  FlowOptions o;
  o.granularity = g;
  return generate_collective_flows(c, k, bytes, CallPlan{a, p, channels}, o, root);
}

void expect_step_matches_channel(const NcclCommunicator& c, CollKind k, std::int64_t bytes, NcclAlgorithm a,
                                 NcclProtocol p, int channels, int root = 0) {
  const FlowDag agg = gen(c, k, bytes, a, p, channels, FlowGranularity::PerChannel, root);
  const FlowDag step = gen(c, k, bytes, a, p, channels, FlowGranularity::PerStep, root);
  expect_valid_dag(agg);
  expect_valid_dag(step);
  EXPECT_GT(step.flows.size(), agg.flows.size());
  EXPECT_EQ(bytes_and_payload_by_edge(agg), bytes_and_payload_by_edge(step));
}

TEST(NcclFlowsRing, AllReduce1GiBMatchesWorkedExample) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = gen(c, CollKind::AllReduce, GiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16);
  expect_valid_dag(dag);
  EXPECT_EQ(dag.channels, 16);
  EXPECT_EQ(dag.flows.size(), 16u * 16u);  // one flow per (channel, hop)
  EXPECT_TRUE(dag.dep_index.empty());
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(dag.bytes_sent_by(r), 1920 * MiB) << r;  // 2·15/16 GiB
    EXPECT_EQ(dag.bytes_received_by(r), 1920 * MiB) << r;
  }
  // Per NIC per direction 2 channels × 2 loops × 30 steps × 2 MiB = 240 MiB, rail-aligned.
  const auto out = nic_egress(c, dag), in = nic_ingress(c, dag);
  EXPECT_EQ(out.size(), 16u);
  for (const auto& [nic, bytes] : out) EXPECT_EQ(bytes, 240 * MiB);
  for (const auto& [nic, bytes] : in) EXPECT_EQ(bytes, 240 * MiB);
  // Per GPU NVLink egress 1,680 MiB.
  std::map<int, std::int64_t> nvl;
  for (const Flow& f : dag.flows)
    if (f.link == LinkClass::NVLink) nvl[f.src.index] += f.bytes;
  for (const auto& [r, b] : nvl) EXPECT_EQ(b, 1680 * MiB) << r;
  // Channel 0's NET hops: 1 -> 9 on rail 1 and 8 -> 0 on rail 0.
  int net_hops = 0;
  for (const Flow& f : dag.flows)
    if (f.channel == 0 && f.link == LinkClass::Network) {
      ++net_hops;
      EXPECT_TRUE((f.src.index == 1 && f.dst.index == 9 && f.src_net == 1 && f.dst_net == 1) ||
                  (f.src.index == 8 && f.dst.index == 0 && f.src_net == 0 && f.dst_net == 0));
    }
  EXPECT_EQ(net_hops, 2);
}

TEST(NcclFlowsRing, AllGather64MiBMatchesWorkedExample) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = gen(c, CollKind::AllGather, 64 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16);
  for (int r = 0; r < 16; ++r) EXPECT_EQ(dag.bytes_sent_by(r), 60 * MiB);  // 15 × 4 MiB
  for (const auto& [nic, bytes] : nic_egress(c, dag)) EXPECT_EQ(bytes, 7 * MiB + 512 * KiB);
  for (const Flow& f : dag.flows) EXPECT_EQ(f.payload, 15 * 256 * KiB);
}

TEST(NcclFlowsRing, ReduceScatterSendsNMinusOneOverNOfTheBuffer) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = gen(c, CollKind::ReduceScatter, 32 * MiB, NcclAlgorithm::Ring, NcclProtocol::LL128, 16);
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(dag.payload_sent_by(r), 30 * MiB);
    EXPECT_GT(dag.bytes_sent_by(r), 30 * MiB);  // LL128 overhead
  }
}

TEST(NcclFlowsRing, BroadcastStartsAtRootAndReduceEndsThere) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag bc = gen(c, CollKind::Broadcast, 8 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16,
                         FlowGranularity::PerChannel, 5);
  EXPECT_EQ(bc.bytes_received_by(5), 0);
  for (int r = 0; r < 16; ++r)
    if (r != 5) { EXPECT_EQ(bc.bytes_received_by(r), 8 * MiB) << r; }
  const FlowDag red =
      gen(c, CollKind::Reduce, 8 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16, FlowGranularity::PerChannel, 5);
  EXPECT_EQ(red.bytes_sent_by(5), 0);
  EXPECT_EQ(red.bytes_received_by(5), 8 * MiB);
  for (int r = 0; r < 16; ++r)
    if (r != 5) { EXPECT_EQ(red.bytes_sent_by(r), 8 * MiB) << r; }
}

TEST(NcclFlowsRing, PerStepMatchesPerChannelIncludingPartialLoops) {
  const NcclCommunicator c = h100_2x8();
  // 3 MiB + 4 KiB over 2 channels: a partial last loop with short and empty chunks.
  expect_step_matches_channel(c, CollKind::AllReduce, 3 * MiB + 4 * KiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 2);
  expect_step_matches_channel(c, CollKind::AllReduce, 200 * KiB + 48, NcclAlgorithm::Ring, NcclProtocol::LL, 2);
  expect_step_matches_channel(c, CollKind::AllGather, 16 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 4);
  expect_step_matches_channel(c, CollKind::ReduceScatter, 16 * MiB, NcclAlgorithm::Ring, NcclProtocol::LL128, 4);
  expect_step_matches_channel(c, CollKind::Broadcast, 3 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 2, 3);
  expect_step_matches_channel(c, CollKind::Reduce, 3 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 2, 3);
}

TEST(NcclFlowsRing, PerStepAllReduceChainsChunksAroundTheRing) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag =
      gen(c, CollKind::AllReduce, 8 * KiB * 16, NcclAlgorithm::Ring, NcclProtocol::Simple, 1, FlowGranularity::PerStep);
  // One loop, 30 steps × 16 hops; every flow after step 0 depends on exactly one earlier flow
  // whose receiver is this flow's sender.
  ASSERT_EQ(dag.flows.size(), 30u * 16u);
  for (const Flow& f : dag.flows) {
    if (f.step == 0) {
      EXPECT_EQ(f.dep_end - f.dep_begin, 0u);
      continue;
    }
    ASSERT_EQ(f.dep_end - f.dep_begin, 1u);
    const Flow& d = dag.flows[dag.dep_index[f.dep_begin]];
    EXPECT_EQ(d.dst, f.src);
    EXPECT_EQ(d.step, f.step - 1);
  }
}

TEST(NcclFlowsTree, AllReduce8KiBLLMatchesWorkedExample) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = gen(c, CollKind::AllReduce, 8 * KiB, NcclAlgorithm::Tree, NcclProtocol::LL, 2);
  expect_valid_dag(dag);
  EXPECT_EQ(dag.channels, 2);
  EXPECT_EQ(dag.flows.size(), 2u * 30u);  // 15 edges up and down per channel
  for (const Flow& f : dag.flows) {
    EXPECT_EQ(f.payload, 4 * KiB);
    EXPECT_EQ(f.bytes, 8 * KiB);
  }
  // Channel 0: network 8 -> 0 (up) and 0 -> 8 (down) on rail 0; channel 1 on rail 1 via 9 <-> 1.
  int net = 0;
  for (const Flow& f : dag.flows)
    if (f.link == LinkClass::Network) {
      ++net;
      const int rail = f.channel;
      EXPECT_EQ(f.src_net, rail);
      EXPECT_EQ(f.dst_net, rail);
      EXPECT_TRUE((f.src.index == 8 + rail && f.dst.index == rail) || (f.src.index == rail && f.dst.index == 8 + rail));
    }
  EXPECT_EQ(net, 4);
  // The root (0 on channel 0, 1 on channel 1) broadcasts only after both children's partial sums
  // arrived: each of its down flows depends on the two up flows into it.
  for (const Flow& f : dag.flows) {
    const bool from_root = (f.channel == 0 && f.src.index == 0) || (f.channel == 1 && f.src.index == 1);
    if (!from_root) continue;
    ASSERT_EQ(f.dep_end - f.dep_begin, 2u);
    for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) EXPECT_EQ(dag.flows[dag.dep_index[d]].dst, f.src);
  }
}

TEST(NcclFlowsTree, ConservationPerRank) {
  const NcclCommunicator c = h100_2x8();
  const std::int64_t S = 32 * MiB;
  const FlowDag dag = gen(c, CollKind::AllReduce, S, NcclAlgorithm::Tree, NcclProtocol::Simple, 16);
  // Per channel part P = S/16: a rank sends P up (unless root) plus P per child down, and receives
  // P per child up plus P down (unless root). Summed over the 16 trees: sent = received.
  std::int64_t total = 0;
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(dag.bytes_sent_by(r), dag.bytes_received_by(r)) << r;
    total += dag.bytes_sent_by(r);
  }
  EXPECT_EQ(total, 16 * 2 * 15 * (S / 16));  // 15 edges × 2 directions per channel
}

TEST(NcclFlowsTree, PerStepMatchesPerChannel) {
  const NcclCommunicator c = h100_2x8();
  expect_step_matches_channel(c, CollKind::AllReduce, 5 * MiB + 512, NcclAlgorithm::Tree, NcclProtocol::Simple, 4);
  expect_step_matches_channel(c, CollKind::AllReduce, 1 * MiB, NcclAlgorithm::Tree, NcclProtocol::LL128, 16);
}

TEST(NcclFlowsNvls, NvlsTree1GiBPerNicIs128MiB) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = gen(c, CollKind::AllReduce, GiB, NcclAlgorithm::NVLSTree, NcclProtocol::Simple, 16);
  expect_valid_dag(dag);
  const auto out = nic_egress(c, dag), in = nic_ingress(c, dag);
  EXPECT_EQ(out.size(), 16u);
  for (const auto& [nic, bytes] : out) EXPECT_EQ(bytes, 128 * MiB);
  for (const auto& [nic, bytes] : in) EXPECT_EQ(bytes, 128 * MiB);
  // Head h talks to head h of the other node over NIC h.
  for (const Flow& f : dag.flows)
    if (f.link == LinkClass::Network) {
      EXPECT_EQ(f.src.index % 8, f.dst.index % 8);
      EXPECT_EQ(f.src_net, f.src.index % 8);
    }
  // Every GPU pushes its whole 1 GiB into the switch and receives the whole result from it.
  std::map<int, std::int64_t> to_switch, from_switch;
  for (const Flow& f : dag.flows) {
    if (f.link != LinkClass::NVLinkSharp) continue;
    if (f.dst.kind == FlowEndpoint::Kind::NvSwitch)
      to_switch[f.src.index] += f.bytes;
    else
      from_switch[f.dst.index] += f.bytes;
  }
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(to_switch[r], GiB + GiB / 8) << r;    // scatter S + multicast store of its block S/8
    EXPECT_EQ(from_switch[r], GiB + GiB / 8) << r;  // reduced block S/8 + replicated result S
  }
}

TEST(NcclFlowsNvls, SingleNodeAllReduceAndGather) {
  const NcclCommunicator c = h100_1x8();
  const std::int64_t S = 64 * MiB;
  const FlowDag ar = gen(c, CollKind::AllReduce, S, NcclAlgorithm::NVLS, NcclProtocol::Simple, 16);
  for (const Flow& f : ar.flows) {
    EXPECT_EQ(f.link, LinkClass::NVLinkSharp);
    EXPECT_TRUE(f.src.kind == FlowEndpoint::Kind::NvSwitch || f.dst.kind == FlowEndpoint::Kind::NvSwitch);
  }
  for (int r = 0; r < 8; ++r) EXPECT_EQ(ar.bytes_sent_by(r), S + S / 8);
  const FlowDag ag = gen(c, CollKind::AllGather, S, NcclAlgorithm::NVLS, NcclProtocol::Simple, 16);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(ag.bytes_sent_by(r), S / 8);  // its own block, once, into the multicast object
    EXPECT_EQ(ag.bytes_received_by(r), S);  // every block, replicated by the switch
  }
  expect_step_matches_channel(c, CollKind::AllReduce, 5 * MiB + 4096, NcclAlgorithm::NVLS, NcclProtocol::Simple, 4);
  expect_step_matches_channel(c, CollKind::ReduceScatter, 8 * MiB, NcclAlgorithm::NVLS, NcclProtocol::Simple, 4);
}

TEST(NcclFlowsNvls, NvlsTreePerStepMatchesPerChannel) {
  const NcclCommunicator c = h100_2x8();
  expect_step_matches_channel(c, CollKind::AllReduce, 3 * MiB + 16 * KiB, NcclAlgorithm::NVLSTree, NcclProtocol::Simple,
                              2);
}

TEST(NcclFlowsPat, AllGatherOneRankPerNode) {
  const NcclCommunicator c = one_per_node(5);
  const std::int64_t S = 5 * MiB;
  const FlowDag dag = gen(c, CollKind::AllGather, S, NcclAlgorithm::PAT, NcclProtocol::Simple, 2);
  expect_valid_dag(dag);
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(dag.bytes_sent_by(r), 4 * MiB);  // (n-1)/n · S
    EXPECT_EQ(dag.bytes_received_by(r), 4 * MiB);
  }
  for (const Flow& f : dag.flows) EXPECT_EQ(f.link, LinkClass::Network);
  expect_step_matches_channel(c, CollKind::AllGather, S, NcclAlgorithm::PAT, NcclProtocol::Simple, 2);
  expect_step_matches_channel(c, CollKind::ReduceScatter, 10 * MiB, NcclAlgorithm::PAT, NcclProtocol::Simple, 2);
}

TEST(NcclFlowsP2p, AllToAll1MiBPerPeerMatchesWorkedExample) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = gen(c, CollKind::AllToAll, 16 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16);
  expect_valid_dag(dag);
  EXPECT_EQ(dag.algorithm, NcclAlgorithm::P2P);
  EXPECT_EQ(dag.flows.size(), 16u * 15u * 4u);  // 4 parts of 256 KiB per peer
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(dag.bytes_sent_by(r), 15 * MiB);
    EXPECT_EQ(dag.bytes_received_by(r), 15 * MiB);
  }
  for (const Flow& f : dag.flows) {
    EXPECT_EQ(f.payload, 256 * KiB);
    const bool remote = f.src.index / 8 != f.dst.index / 8;
    // Rounds 0-7 (own node) on p2p channels {0..3}, rounds 8-15 (other node) on {8..11}.
    if (remote) {
      EXPECT_GE(f.channel, 8);
      EXPECT_LE(f.channel, 11);
      EXPECT_EQ(f.link, LinkClass::Network);
      // PXN: relayed through the source node's GPU with the peer's local index, leaves on its NIC.
      const int twin = (f.src.index / 8) * 8 + f.dst.index % 8;
      EXPECT_EQ(f.relay, twin == f.src.index ? -1 : twin);
      EXPECT_EQ(f.src_net, f.dst.index % 8);
      EXPECT_EQ(f.dst_net, f.dst.index % 8);
    } else {
      EXPECT_LE(f.channel, 3);
      EXPECT_EQ(f.link, LinkClass::NVLink);
      EXPECT_EQ(f.bytes, f.payload);  // 1 MiB per peer > 16 KiB per channel: Simple
    }
  }
  // PerStep: 128 KiB network chunks -> 2 flows per part.
  const FlowDag steps =
      gen(c, CollKind::AllToAll, 16 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16, FlowGranularity::PerStep);
  EXPECT_EQ(bytes_and_payload_by_edge(steps), bytes_and_payload_by_edge(dag));
}

TEST(NcclFlowsP2p, SmallIntraNodeSendUsesLL) {
  const NcclCommunicator c = h100_2x8();
  const FlowDag dag = generate_send_flows(c, 2, 3, 8 * KiB, FlowOptions{});
  ASSERT_EQ(dag.flows.size(), 1u);
  EXPECT_EQ(dag.flows[0].payload, 8 * KiB);
  EXPECT_EQ(dag.flows[0].bytes, 16 * KiB);  // LL: 2× on the wire
  const FlowDag remote = generate_send_flows(c, 2, 10, 8 * KiB, FlowOptions{});
  ASSERT_EQ(remote.flows.size(), 1u);
  EXPECT_EQ(remote.flows[0].bytes, 8 * KiB);  // network connections have no LL buffers
  EXPECT_EQ(remote.flows[0].relay, -1);       // 2 and 10 share local index 2: no relay needed
  EXPECT_EQ(remote.flows[0].src_net, 2);
  FlowOptions no_pxn;
  no_pxn.p2p_pxn_level = 0;
  const FlowDag direct = generate_send_flows(c, 2, 13, 4 * MiB, no_pxn);
  for (const Flow& f : direct.flows) {
    EXPECT_EQ(f.relay, -1);
    EXPECT_EQ(f.src_net, 2);
  }
  const FlowDag pxn = generate_send_flows(c, 2, 13, 4 * MiB, FlowOptions{});
  for (const Flow& f : pxn.flows) {
    EXPECT_EQ(f.relay, 5);
    EXPECT_EQ(f.src_net, 5);
  }
}

// Nodes with two NICs per GPU (16 on 8 GPUs: GPU g's local NICs are 2g and 2g + 1): a network send's parts, one per
// p2p channel, leave on the channel's NIC of the GPU that puts them on the network (ncclTopoGetLocalNet per channel)
// and arrive on the receiver's, so both NICs carry half; one NIC per GPU keeps every part on it (above).
TEST(NcclFlowsP2p, PartsSpreadOverTheLocalNicsOfTheirChannels) {
  NcclCommunicator c = h100_2x8();
  ClusterSpec two_nics = testing::h100_cluster(2);
  two_nics.nics_per_node = 16;
  auto node = std::make_shared<NodeTopology>(generate_node_topology(two_nics));
  compute_paths(*node, {});
  c.node_topology = {node, node};
  const FlowDag pxn = generate_send_flows(c, 2, 13, 4 * MiB, FlowOptions{});
  ASSERT_EQ(pxn.flows.size(), 4u);  // 4 parts on 4 p2p channels
  std::map<int, std::int64_t> out, in;
  for (const Flow& f : pxn.flows) {
    EXPECT_EQ(f.relay, 5);
    out[f.src_net] += f.payload;
    in[f.dst_net] += f.payload;
  }
  EXPECT_EQ(out, (std::map<int, std::int64_t>{{10, 2 * MiB}, {11, 2 * MiB}}));  // relay GPU 5's two NICs
  EXPECT_EQ(in, (std::map<int, std::int64_t>{{10, 2 * MiB}, {11, 2 * MiB}}));   // GPU 13 is local 5 too
  const FlowDag a2a = gen(c, CollKind::AllToAll, 16 * MiB, NcclAlgorithm::Ring, NcclProtocol::Simple, 16);
  const auto egress = nic_egress(c, a2a);
  EXPECT_EQ(egress.size(), 32u);  // every NIC of both nodes sends
  for (const auto& [nic, bytes] : egress) EXPECT_EQ(bytes, 4 * MiB) << nic.first << "/" << nic.second;
}

TEST(NcclFlowsErrors, AlgorithmsTheCommunicatorCannotRunThrow) {
  NcclCommunicator c = h100_2x8();
  EXPECT_THROW(gen(c, CollKind::AllGather, MiB, NcclAlgorithm::PAT, NcclProtocol::Simple, 2), Error);  // ppn 8
  EXPECT_THROW(gen(c, CollKind::AllGather, MiB, NcclAlgorithm::Tree, NcclProtocol::Simple, 2), Error);
  EXPECT_THROW(gen(c, CollKind::AllReduce, MiB, NcclAlgorithm::NVLS, NcclProtocol::Simple, 2), Error);  // multi-node
  EXPECT_THROW(gen(c, CollKind::AllReduce, MiB, NcclAlgorithm::NVLSTree, NcclProtocol::LL, 2), Error);
  EXPECT_THROW(gen(c, CollKind::AllReduce, MiB, NcclAlgorithm::CollNetDirect, NcclProtocol::Simple, 2), Error);
  EXPECT_THROW(gen(c, CollKind::AllReduce, -1, NcclAlgorithm::Ring, NcclProtocol::Simple, 2), InternalError);
  c.nvls_heads = 0;
  c.nvls_head_local.clear();
  EXPECT_THROW(gen(c, CollKind::AllReduce, MiB, NcclAlgorithm::NVLSTree, NcclProtocol::Simple, 16), Error);
  NcclCommunicator one = h100_1x8();
  EXPECT_THROW(gen(one, CollKind::AllReduce, MiB, NcclAlgorithm::NVLSTree, NcclProtocol::Simple, 16), Error);
  EXPECT_THROW(generate_send_flows(one, 0, 9, MiB, FlowOptions{}), InternalError);  // rank 9 of 8
  EXPECT_TRUE(gen(one, CollKind::AllReduce, 0, NcclAlgorithm::Ring, NcclProtocol::Simple, 2).flows.empty());
}

}  // namespace
}  // namespace trainsim
