// Communicator construction (NCCL src/graph/connect.cc ncclTopoPostset, src/graph/paths.cc
// ncclTopoComputeP2pChannels) against the search results NCCL 2.30.7's own code gives for 2 nodes ×
// 8 H100, 8 × 400 Gb/s rail-optimised NICs (docs/collectives.md). The per-node search results are written out
// by hand as NCCL reports them, so these tests check the stitching and counting alone.
#include <gtest/gtest.h>

#include <array>
#include <memory>
#include <vector>

#include "collective/nccl/nccl_communicator.hpp"
#include "core/error.hpp"
#include "test_clusters.hpp"
#include "test_node_topologies.hpp"

namespace trainsim {
namespace {

using Chains = std::vector<std::vector<int>>;

std::shared_ptr<const NodeTopology> shared_h100_node() {
  return std::make_shared<const NodeTopology>(testing::generated_h100_node());
}

// NCCL's ring graph: crossNic 2, 8 channels × 48 GB/s; channel pairs enter/leave through NICs {c, c±1}.
SearchGraph h100_ring_graph() {
  SearchGraph g;
  g.pattern = GraphPattern::Ring;
  g.nchannels = 8;
  g.bw_intra = g.bw_inter = 48;
  g.type_intra = PathType::Nvl;
  g.type_inter = PathType::Pix;
  g.cross_nic = 2;
  g.intra =
      Chains{{0, 7, 6, 5, 4, 3, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 0}, {2, 1, 0, 7, 6, 5, 4, 3}, {3, 4, 5, 6, 7, 0, 1, 2},
             {4, 3, 2, 1, 0, 7, 6, 5}, {5, 6, 7, 0, 1, 2, 3, 4}, {6, 5, 4, 3, 2, 1, 0, 7}, {7, 0, 1, 2, 3, 4, 5, 6}};
  g.net_in = {0, 1, 2, 3, 4, 5, 6, 7};
  g.net_out = {1, 0, 3, 2, 5, 4, 7, 6};
  return g;
}

// NCCL's tree graph: pattern TREE (SM90 fallback), chain c, c+1, ..., NIC c in and out.
SearchGraph h100_tree_graph() {
  SearchGraph g;
  g.pattern = GraphPattern::Tree;
  g.nchannels = 8;
  g.bw_intra = g.bw_inter = 48;
  g.type_intra = PathType::Nvl;
  g.type_inter = PathType::Pix;
  for (int c = 0; c < 8; ++c) {
    std::vector<int> chain;
    for (int i = 0; i < 8; ++i) chain.push_back((c + i) % 8);
    g.intra.push_back(chain);
    g.net_in.push_back(c);
    g.net_out.push_back(c);
  }
  return g;
}

// NCCL's NVLS graph: 8 channels, head h = GPU h on NIC h.
SearchGraph h100_nvls_graph() {
  SearchGraph g = h100_tree_graph();
  g.pattern = GraphPattern::Nvls;
  g.bw_intra = 40;
  g.bw_inter = 48;
  return g;
}

NodeGraphs h100_graphs() {
  NodeGraphs g;
  g.ring = h100_ring_graph();
  g.tree = h100_tree_graph();
  g.nvls = h100_nvls_graph();
  return g;
}

NcclCommunicator h100_comm(int nodes, const CommOptions& options = {}) {
  const auto node = shared_h100_node();
  return build_communicator(std::vector<std::shared_ptr<const NodeTopology>>(static_cast<std::size_t>(nodes), node),
                            std::vector<NodeGraphs>(static_cast<std::size_t>(nodes), h100_graphs()), options);
}

std::size_t at(int v) { return static_cast<std::size_t>(v); }

TEST(NcclCommunicator, Section92Geometry) {
  const auto c = h100_comm(2);
  EXPECT_EQ(c.nranks, 16);
  EXPECT_EQ(c.nnodes, 2);
  EXPECT_EQ(c.node_of[9], 1);
  EXPECT_EQ(c.local_of[9], 1);
  EXPECT_EQ(c.node_ranks[1], (std::vector<int>{8, 9, 10, 11, 12, 13, 14, 15}));
  EXPECT_EQ(c.sm, 90);
  EXPECT_EQ(c.node_topology[0].get(), c.node_topology[1].get()) << "identical nodes share one topology";
  EXPECT_EQ(c.path_type(0, 1), PathType::Nvl);
  EXPECT_EQ(c.path_type(0, 8), PathType::Net);
  EXPECT_EQ(c.path_type(3, 3), PathType::Loc);
  EXPECT_THROW((void)c.path_type(0, 16), Error);
}

TEST(NcclCommunicator, Section92ChannelCounts) {
  const auto c = h100_comm(2);
  EXPECT_EQ(c.ring_graph.nchannels, 8);
  EXPECT_EQ(c.tree_graph.nchannels, 8);
  EXPECT_EQ(c.max_tree_pattern, static_cast<int>(GraphPattern::Tree));
  EXPECT_EQ(c.nchannels, 16);  // 8 × 2; 16 < 16 is false, so no SM90 doubling
  EXPECT_EQ(c.nvls_channels, 16);
  EXPECT_EQ(c.nvls_heads, 8);
  EXPECT_EQ(c.p2p_nchannels, 16);
  EXPECT_EQ(c.p2p_channels_per_peer, 4);  // remote peers ceil(48/14) = 4 < NVLink 36; 4·ceil(16/8) ≤ 16
  EXPECT_EQ(c.p2p_group_size, 8);
  ASSERT_EQ(c.rings.size(), 16u);
  ASSERT_EQ(c.trees.size(), 16u);
}

TEST(NcclCommunicator, Section92GlobalRings) {
  const auto c = h100_comm(2);
  const std::vector<std::vector<int>> expected{
      {0, 7, 6, 5, 4, 3, 2, 1, 9, 10, 11, 12, 13, 14, 15, 8}, {0, 8, 15, 14, 13, 12, 11, 10, 9, 1, 2, 3, 4, 5, 6, 7},
      {0, 7, 6, 5, 4, 3, 11, 12, 13, 14, 15, 8, 9, 10, 2, 1}, {0, 1, 2, 10, 9, 8, 15, 14, 13, 12, 11, 3, 4, 5, 6, 7},
      {0, 7, 6, 5, 13, 14, 15, 8, 9, 10, 11, 12, 4, 3, 2, 1}, {0, 1, 2, 3, 4, 12, 11, 10, 9, 8, 15, 14, 13, 5, 6, 7},
      {0, 7, 15, 8, 9, 10, 11, 12, 13, 14, 6, 5, 4, 3, 2, 1}, {0, 1, 2, 3, 4, 5, 6, 14, 13, 12, 11, 10, 9, 8, 15, 7}};
  for (int ch = 0; ch < 16; ++ch) {
    SCOPED_TRACE(ch);
    const RingChannel& r = c.rings[at(ch)];
    EXPECT_EQ(r.order, expected[at(ch % 8)]);
    for (int i = 0; i < 16; ++i) {
      const int a = r.order[at(i)], b = r.order[at((i + 1) % 16)];
      EXPECT_EQ(r.next[at(a)], b);
      EXPECT_EQ(r.prev[at(b)], a);
    }
    EXPECT_EQ(r.send_net, c.rings[at(ch % 8)].send_net) << "channel c+8 copies channel c";
  }
}

TEST(NcclCommunicator, Section92RingNicsAreRailAligned) {
  const auto c = h100_comm(2);
  // ch0: 1 -> 9 on NIC 1, 8 -> 0 on NIC 0; every other rank has no network hop.
  const RingChannel& r0 = c.rings[0];
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(r0.send_net[at(r)], r == 1 ? 1 : r == 8 ? 0 : -1) << r;
    EXPECT_EQ(r0.recv_net[at(r)], r == 9 ? 1 : r == 0 ? 0 : -1) << r;
  }
  // ch1: 0 -> 8 on rail 0, 9 -> 1 on rail 1.
  EXPECT_EQ(c.rings[1].send_net[0], 0);
  EXPECT_EQ(c.rings[1].recv_net[8], 0);
  EXPECT_EQ(c.rings[1].send_net[9], 1);
  EXPECT_EQ(c.rings[1].recv_net[1], 1);
  for (int ch = 0; ch < 16; ++ch) {
    const RingChannel& r = c.rings[at(ch)];
    int hops = 0;
    for (int s = 0; s < 16; ++s) {
      const int t = r.next[at(s)];
      if (c.node_of[at(s)] == c.node_of[at(t)]) {
        EXPECT_EQ(r.send_net[at(s)], -1);
        continue;
      }
      ++hops;
      EXPECT_EQ(r.send_net[at(s)], s % 8) << "channel " << ch << " " << s << "->" << t;
      EXPECT_EQ(r.recv_net[at(t)], t % 8);
      EXPECT_EQ(s % 8, t % 8) << "GPU i talks to GPU 8+i";
      EXPECT_EQ(r.send_proxy[at(s)], s) << "own NIC: no PXN proxy";
    }
    EXPECT_EQ(hops, 2);
  }
}

TEST(NcclCommunicator, Section92Trees) {
  const auto c = h100_comm(2);
  using D = std::array<int, 3>;
  for (int ch = 0; ch < 8; ++ch) {
    SCOPED_TRACE(ch);
    const TreeChannel& t0 = c.trees[at(ch)];      // tree 0: node 0 is the root
    const TreeChannel& t1 = c.trees[at(ch + 8)];  // tree 1: node 1 is the root
    const int next = (ch + 1) % 8;
    EXPECT_EQ(t0.up[at(ch)], -1);
    EXPECT_EQ(t0.down[at(ch)], (D{next, 8 + ch, -1}));
    EXPECT_EQ(t0.up[at(8 + ch)], ch);
    EXPECT_EQ(t0.down[at(8 + ch)], (D{8 + next, -1, -1}));
    EXPECT_EQ(t1.up[at(8 + ch)], -1);
    EXPECT_EQ(t1.down[at(8 + ch)], (D{8 + next, ch, -1}));
    EXPECT_EQ(t1.up[at(ch)], 8 + ch);
    EXPECT_EQ(t1.down[at(ch)], (D{next, -1, -1}));
    // The chains continue c+1 -> ... -> c+7 on both nodes; the chain's end has no child.
    for (int i = 1; i < 8; ++i) {
      const int r = (ch + i) % 8, prev = (ch + i - 1) % 8;
      for (const TreeChannel* t : {&t0, &t1}) {
        EXPECT_EQ(t->up[at(r)], prev);
        EXPECT_EQ(t->up[at(8 + r)], 8 + prev);
        EXPECT_EQ(t->down[at(r)][0], i == 7 ? -1 : (r + 1) % 8);
        EXPECT_EQ(t->net[at(r)], -1);
      }
    }
    EXPECT_EQ(t0.net[at(ch)], ch);
    EXPECT_EQ(t0.net[at(8 + ch)], ch);
    EXPECT_EQ(t1.net[at(ch)], ch);
  }
}

TEST(NcclCommunicator, Section92NvlsHeadsAndNodeTrees) {
  const auto c = h100_comm(2);
  EXPECT_EQ(c.nvls_head_local, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}));
  ASSERT_EQ(c.nvls_head_rank.size(), 8u);
  EXPECT_EQ(c.nvls_head_rank[3], (std::vector<int>{3, 11}));
  EXPECT_EQ(c.node_tree_up[0], (std::vector<int>{-1, 0}));
  EXPECT_EQ(c.node_tree_up[1], (std::vector<int>{1, -1}));
}

// NCCL_CROSS_NIC=0-style graphs (cross_nic 0): odd nodes keep their own channel order.
TEST(NcclCommunicator, NoChannelSwapWithoutCrossNic2) {
  NodeGraphs g = h100_graphs();
  g.ring.cross_nic = 0;
  const auto node = shared_h100_node();
  const auto c = build_communicator({node, node}, {g, g}, {});
  EXPECT_EQ(c.rings[0].order, (std::vector<int>{0, 7, 6, 5, 4, 3, 2, 1, 8, 15, 14, 13, 12, 11, 10, 9}));
}

// NCCL_CROSS_NIC=0 (NCCL's result): ch c enters and leaves on NIC c, the last GPU (c+1) reaches NIC c by PXN
// through GPU c, whose proxy then drives the NIC (ncclTopoGetIntermediateRank).
TEST(NcclCommunicator, PxnRingExitNamesTheProxyRank) {
  NodeGraphs g = h100_graphs();
  g.ring.cross_nic = 0;
  g.ring.bw_intra = g.ring.bw_inter = 45;
  g.ring.type_inter = PathType::Pxn;
  g.ring.intra.clear();
  for (int ch = 0; ch < 8; ++ch) {
    std::vector<int> chain;
    for (int i = 0; i < 8; ++i) chain.push_back((ch - i + 8) % 8);
    g.ring.intra.push_back(chain);
  }
  g.ring.net_in = g.ring.net_out = {0, 1, 2, 3, 4, 5, 6, 7};
  const auto node = shared_h100_node();
  const auto c = build_communicator({node, node}, {g, g}, {});
  EXPECT_EQ(c.nchannels, 16);         // bwIntra 45 is not > 45: no SM90 doubling
  const RingChannel& r = c.rings[2];  // 2 1 0 7 6 5 4 3 | 10 9 8 15 14 13 12 11
  EXPECT_EQ(r.next[3], 10);
  EXPECT_EQ(r.send_net[3], 2);
  EXPECT_EQ(r.send_proxy[3], 2) << "GPU 3 -> NIC 2 is PXN through GPU 2";
  EXPECT_EQ(r.recv_net[10], 2);
  EXPECT_EQ(r.send_net[11], 2);
  EXPECT_EQ(r.send_proxy[11], 10);
  EXPECT_EQ(r.recv_net[2], 2);
}

// End to end with the graph search (ncclTopoCompute) on the generated DGX-H100-like node: NCCL's own
// results come out.
TEST(NcclCommunicator, SearchedGraphsReproduceSection92) {
  NodeTopology t = generate_node_topology(testing::h100_cluster(2));
  compute_paths(t, PathOptions{});
  SearchOptions so;
  so.multi_node = true;
  const NodeGraphs g = search_node_graphs(t, so, true);
  const auto node = std::make_shared<const NodeTopology>(std::move(t));
  const auto c = build_communicator({node, node}, {g, g}, {});
  const auto expected = h100_comm(2);
  EXPECT_EQ(c.nchannels, 16);
  EXPECT_EQ(c.nvls_channels, 16);
  EXPECT_EQ(c.p2p_nchannels, 16);
  EXPECT_EQ(c.p2p_channels_per_peer, 4);
  for (std::size_t ch = 0; ch < 16; ++ch) {
    EXPECT_EQ(c.rings[ch].order, expected.rings[ch].order) << ch;
    EXPECT_EQ(c.rings[ch].send_net, expected.rings[ch].send_net) << ch;
    EXPECT_EQ(c.trees[ch].up, expected.trees[ch].up) << ch;
    EXPECT_EQ(c.trees[ch].down, expected.trees[ch].down) << ch;
  }
}

// One GPU per node: chains of one GPU, so the double binary tree over nodes is the tree over ranks,
// and the p2p group size falls to gcd(8, 1) = 1.
TEST(NcclCommunicator, OneGpuPerNode) {
  NodeTopology t = restrict_to_gpus(generate_node_topology(testing::h100_cluster(4)), {0});
  compute_paths(t, PathOptions{});
  const auto node = std::make_shared<const NodeTopology>(std::move(t));
  NodeGraphs g;
  g.ring.nchannels = 2;
  g.ring.bw_intra = g.ring.bw_inter = 48;
  g.ring.intra = Chains{{0}, {0}};
  g.ring.net_in = g.ring.net_out = {0, 0};
  g.tree = g.ring;
  g.tree.pattern = GraphPattern::Tree;
  const auto c = build_communicator({node, node, node, node}, {g, g, g, g}, {});
  EXPECT_EQ(c.nranks, 4);
  EXPECT_EQ(c.nchannels, 8);  // 2 × 2, then × 2 (SM90, 48 > 45, 4 < 16)
  EXPECT_EQ(c.p2p_group_size, 1);
  EXPECT_EQ(c.rings[0].order, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(c.rings[0].send_net, (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(c.trees[0].up, (std::vector<int>{-1, 2, 0, 2}));
  EXPECT_EQ(c.trees[0].down[0], (std::array<int, 3>{2, -1, -1}));
  EXPECT_EQ(c.trees[0].down[2], (std::array<int, 3>{1, 3, -1}));
  EXPECT_EQ(c.trees[2].up, (std::vector<int>{1, 3, 1, -1}));  // tree 1 (mirror)
  EXPECT_EQ(c.trees[2].down[1], (std::array<int, 3>{2, 0, -1}));
}

// The SM90 multi-node rule (ncclTopoPostset): 4 search channels with bwIntra 48 > 45 -> 8 -> 16 channels,
// channels 8..15 copying 0..7 (tree 0 on 0..3 and 8..11, tree 1 on 4..7 and 12..15).
TEST(NcclCommunicator, Sm90DoublingBelowSixteenChannels) {
  NodeGraphs g = h100_graphs();
  g.ring.nchannels = 4;  // the min over ring and tree channels is what counts
  const auto node = shared_h100_node();
  const auto c = build_communicator({node, node}, {g, g}, {});
  EXPECT_EQ(c.ring_graph.nchannels, 4);
  EXPECT_EQ(c.tree_graph.nchannels, 4);
  EXPECT_EQ(c.nchannels, 16);
  EXPECT_EQ(c.channel_copy_of, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(c.rings[13].order, c.rings[1].order);
  EXPECT_EQ(c.trees[4].up[8], -1) << "channel 4 is tree 1 of search channel 0";
  EXPECT_EQ(c.trees[4].up[0], 8);
  EXPECT_EQ(c.trees[8].up[0], -1) << "channel 8 copies channel 0 (tree 0)";
  // With bwIntra at 45 the rule does not fire.
  g.ring.bw_intra = 45;
  const auto d = build_communicator({node, node}, {g, g}, {});
  EXPECT_EQ(d.nchannels, 8);
}

TEST(NcclCommunicator, MaxThenMinChannels) {
  CommOptions o;
  o.max_channels = 4;
  o.min_channels = 10;
  const auto c = h100_comm(2, o);
  EXPECT_EQ(c.nchannels, 10);
  EXPECT_EQ(c.channel_copy_of, (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3, 0, 1}));
  EXPECT_EQ(c.rings[5].order, c.rings[1].order);
  EXPECT_EQ(c.p2p_nchannels, 16);  // pow2Up(10)
  CommOptions m;
  m.min_channels = 40;
  EXPECT_EQ(h100_comm(2, m).nchannels, 40);
  CommOptions big;
  big.max_channels = 500;  // clamped to MAXCHANNELS
  EXPECT_EQ(h100_comm(2, big).nchannels, 16);
}

TEST(NcclCommunicator, CollNetAddsHalfTheChannels) {
  NodeGraphs g = h100_graphs();
  g.tree.bw_inter = 24;  // chain bwIntra > bwInter
  CommOptions o;
  o.collnet = true;
  const auto node = shared_h100_node();
  const auto c = build_communicator({node, node}, {g, g}, o);
  EXPECT_EQ(c.nchannels, 24);
  EXPECT_EQ(c.channel_copy_of[20], 4);
}

TEST(NcclCommunicator, P2pAndNvlsOptions) {
  CommOptions o;
  o.nchannels_per_net_peer = 2;
  o.nvls_channels = 12;
  const auto c = h100_comm(2, o);
  EXPECT_EQ(c.p2p_channels_per_peer, 2);
  EXPECT_EQ(c.nvls_channels, 12);
  // Many peers shrink the per-peer count: 4 nodes (32 ranks): 4·ceil(32/8) = 16 ≤ 16 keeps 4;
  // 8 nodes (64 ranks): 4·8 > 16 -> 2·8 = 16 keeps 2; 16 nodes: 2·16 > 16 -> 1.
  EXPECT_EQ(h100_comm(4).p2p_channels_per_peer, 4);
  EXPECT_EQ(h100_comm(8).p2p_channels_per_peer, 2);
  EXPECT_EQ(h100_comm(16).p2p_channels_per_peer, 1);
}

TEST(NcclCommunicator, NoNvlsWithoutNvlsGraph) {
  NodeGraphs g = h100_graphs();
  g.nvls = SearchGraph{};
  const auto node = shared_h100_node();
  const auto c = build_communicator({node, node}, {g, g}, {});
  EXPECT_EQ(c.nvls_channels, 0);
  EXPECT_EQ(c.nvls_heads, 0);
  EXPECT_TRUE(c.nvls_head_local.empty());
}

// One node: rings close on themselves, no network, tree 0 and 1 are the bare chains (NCCL's result: single
// node ring 12 × 30 GB/s -> 24 channels).
TEST(NcclCommunicator, SingleNode) {
  NodeGraphs g = h100_graphs();
  g.ring.nchannels = 12;
  g.ring.bw_intra = g.ring.bw_inter = 30;
  g.ring.intra.clear();
  for (int ch = 0; ch < 12; ++ch)
    g.ring.intra.push_back(ch % 2 == 0 ? std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7}
                                       : std::vector<int>{0, 7, 6, 5, 4, 3, 2, 1});
  g.ring.net_in.assign(12, -1);
  g.ring.net_out.assign(12, -1);
  g.tree.nchannels = 12;
  for (int ch = 8; ch < 12; ++ch) g.tree.intra.push_back(g.tree.intra[at(ch - 8)]);
  const auto c = build_communicator({shared_h100_node()}, {g}, {});
  EXPECT_EQ(c.nchannels, 24);
  EXPECT_EQ(c.p2p_nchannels, 32);
  EXPECT_EQ(c.p2p_channels_per_peer, 32);  // NVLink peers 36 -> pow2Up 64 -> min(p2pnChannels)
  EXPECT_EQ(c.nvls_channels, 16);
  EXPECT_EQ(c.rings[1].order, (std::vector<int>{0, 7, 6, 5, 4, 3, 2, 1}));
  EXPECT_EQ(c.rings[0].next[7], 0);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(c.rings[0].send_net[at(r)], -1);
  EXPECT_EQ(c.trees[0].up[0], -1);
  EXPECT_EQ(c.trees[0].down[0], (std::array<int, 3>{1, -1, -1}));
  EXPECT_EQ(c.trees[12].up[0], -1);
}

TEST(NcclCommunicator, RejectsInconsistentInput) {
  const auto node = shared_h100_node();
  EXPECT_THROW(build_communicator({}, {}, {}), Error);
  EXPECT_THROW(build_communicator({node, node}, {h100_graphs()}, {}), Error);
  NodeGraphs bad = h100_graphs();
  bad.ring.intra[3] = {0, 1, 2, 3, 4, 5, 6, 6};
  EXPECT_THROW(build_communicator({node, node}, {h100_graphs(), bad}, {}), Error);
  NodeGraphs no_net = h100_graphs();
  no_net.ring.net_out[0] = -1;
  EXPECT_THROW(build_communicator({node, node}, {h100_graphs(), no_net}, {}), Error);
  CommOptions o;
  o.p2p_schedule_group_size = 0;
  EXPECT_THROW(h100_comm(2, o), ScenarioError);
}

// 1,024 nodes × 8 GPUs: one shared topology, every ring hop rail-aligned (odd nodes swap channel
// pairs, and 1,024 is even so the wrap-around is aligned too).
TEST(NcclCommunicator, ThousandNodesScale) {
  const auto c = h100_comm(1024);
  EXPECT_EQ(c.nranks, 8192);
  EXPECT_EQ(c.nchannels, 16);
  EXPECT_EQ(c.p2p_channels_per_peer, 1);
  for (int ch : {0, 5, 15}) {
    const RingChannel& r = c.rings[at(ch)];
    ASSERT_EQ(r.order.size(), 8192u);
    int hops = 0;
    for (int s = 0; s < c.nranks; ++s) {
      const int t = r.next[at(s)];
      if (r.send_net[at(s)] < 0) continue;
      ++hops;
      EXPECT_NE(c.node_of[at(s)], c.node_of[at(t)]);
      EXPECT_EQ(r.send_net[at(s)], r.recv_net[at(t)]);
      EXPECT_EQ(c.local_of[at(s)], c.local_of[at(t)]);
    }
    EXPECT_EQ(hops, 1024);
  }
  // Tree 0 over nodes: node 512's head (rank 8·512 + c) hangs under node 0's head.
  EXPECT_EQ(c.trees[3].up[at(8 * 512 + 3)], 3);
  const auto send = c.p2p_send_peer(8191);
  EXPECT_EQ(send.size(), 8192u);
}

}  // namespace
}  // namespace trainsim
