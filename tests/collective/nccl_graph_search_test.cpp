// NCCL's graph search (NCCL src/graph/search.cc ncclTopoCompute, ncclTopoDupChannels) against the results
// NCCL 2.30.7's own code computed for the DGX-H100 node; and sanity on other node shapes.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>

#include "collective/nccl/nccl_graph_search.hpp"
#include "core/error.hpp"
#include "search_graph_expect.hpp"
#include "test_clusters.hpp"
#include "test_node_topologies.hpp"

namespace trainsim {
namespace {

NodeTopology with_paths(NodeTopology t) {
  compute_paths(t, {});
  return t;
}

SearchOptions multi(int cross_nic = 2) { return SearchOptions{.cross_nic = cross_nic, .multi_node = true}; }

std::vector<int> rotation(int start, int step, int n = 8) {
  std::vector<int> out;
  for (int i = 0; i < n; ++i) out.push_back(((start + step * i) % n + n) % n);
  return out;
}

// NCCL's ring, crossNic 2: 8 × 48, NVL/PIX; odd channels enter where the previous one left.
TEST(NcclGraphSearch, DgxRingMultiNodeCrossNic2) {
  const SearchGraph g = search_graph(testing::dgx_h100_node(), GraphPattern::Ring, multi(2));
  EXPECT_EQ(g.pattern, GraphPattern::Ring);
  ASSERT_EQ(g.nchannels, 8);  // 8 × 48 < 50 with SM90 and > 4 channels: not duplicated
  EXPECT_DOUBLE_EQ(g.bw_intra, 48.0);
  EXPECT_DOUBLE_EQ(g.bw_inter, 48.0);
  EXPECT_EQ(g.type_intra, PathType::Nvl);
  EXPECT_EQ(g.type_inter, PathType::Pix);
  EXPECT_EQ(g.cross_nic, 2);
  const std::vector<std::vector<int>> chains{
      {0, 7, 6, 5, 4, 3, 2, 1}, {1, 2, 3, 4, 5, 6, 7, 0}, {2, 1, 0, 7, 6, 5, 4, 3}, {3, 4, 5, 6, 7, 0, 1, 2},
      {4, 3, 2, 1, 0, 7, 6, 5}, {5, 6, 7, 0, 1, 2, 3, 4}, {6, 5, 4, 3, 2, 1, 0, 7}, {7, 0, 1, 2, 3, 4, 5, 6}};
  const std::vector<int> in{0, 1, 2, 3, 4, 5, 6, 7}, out{1, 0, 3, 2, 5, 4, 7, 6};
  EXPECT_EQ(g.intra, chains);
  EXPECT_EQ(g.net_in, in);
  EXPECT_EQ(g.net_out, out);
}

// NCCL's comparisons: NCCL_CROSS_NIC=0 -> 8 × 45 leaving over PXN on the entry NIC; =1 -> NET c to c+1.
TEST(NcclGraphSearch, DgxRingMultiNodeOtherCrossNicSettings) {
  const NodeTopology t = testing::dgx_h100_node();
  const SearchGraph g0 = search_graph(t, GraphPattern::Ring, multi(0));
  ASSERT_EQ(g0.nchannels, 8);
  EXPECT_DOUBLE_EQ(g0.bw_intra, 45.0);
  EXPECT_DOUBLE_EQ(g0.bw_inter, 45.0);
  EXPECT_EQ(g0.type_inter, PathType::Pxn);
  EXPECT_EQ(g0.cross_nic, 0);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(g0.intra[static_cast<std::size_t>(c)], rotation(c, -1)) << c;
    EXPECT_EQ(g0.net_in[static_cast<std::size_t>(c)], c);
    EXPECT_EQ(g0.net_out[static_cast<std::size_t>(c)], c);
  }
  const SearchGraph g1 = search_graph(t, GraphPattern::Ring, multi(1));
  ASSERT_EQ(g1.nchannels, 8);
  EXPECT_DOUBLE_EQ(g1.bw_inter, 48.0);
  EXPECT_EQ(g1.type_inter, PathType::Pix);
  EXPECT_EQ(g1.cross_nic, 1);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(g1.net_in[static_cast<std::size_t>(c)], c);
    EXPECT_EQ(g1.net_out[static_cast<std::size_t>(c)], (c + 1) % 8);
  }
}

// NCCL, single node: 6 × 60 found, then duplicated to 12 × 30 (bwIntra 60 >= 50).
TEST(NcclGraphSearch, DgxRingSingleNodeIsDuplicated) {
  const SearchGraph g = search_graph(testing::dgx_h100_node(), GraphPattern::Ring, SearchOptions{.multi_node = false});
  ASSERT_EQ(g.nchannels, 12);
  EXPECT_DOUBLE_EQ(g.bw_intra, 30.0);
  EXPECT_EQ(g.type_intra, PathType::Nvl);
  for (int c = 0; c < 6; ++c) EXPECT_EQ(g.intra[static_cast<std::size_t>(c + 6)], g.intra[static_cast<std::size_t>(c)]);
  for (int c = 0; c < 12; ++c) EXPECT_EQ(g.net_in[static_cast<std::size_t>(c)], -1);
}

// NCCL's tree: BALANCED_TREE does not reach 8 × 48, SM90 falls back to TREE: chain c, c+1, ..., NIC c.
TEST(NcclGraphSearch, DgxTreeMultiNodeFallsBackToTree) {
  const NodeGraphs graphs = search_node_graphs(testing::dgx_h100_node(), multi(2), true);
  const SearchGraph& t = graphs.tree;
  EXPECT_EQ(t.pattern, GraphPattern::Tree);
  ASSERT_EQ(t.nchannels, 8);
  EXPECT_DOUBLE_EQ(t.bw_intra, 48.0);
  EXPECT_DOUBLE_EQ(t.bw_inter, 48.0);
  for (int c = 0; c < 8; ++c) {
    EXPECT_EQ(t.intra[static_cast<std::size_t>(c)], rotation(c, 1)) << c;
    EXPECT_EQ(t.net_in[static_cast<std::size_t>(c)], c);
    EXPECT_EQ(t.net_out[static_cast<std::size_t>(c)], c);
  }
  // The ring of the same call is NCCL's ring above.
  EXPECT_EQ(graphs.ring.nchannels, 8);
  EXPECT_EQ(graphs.ring.net_out[0], 1);
}

// NCCL's NVLS: one head per GPU, head h on NIC h; bwIntra 40, bwInter 48 (pass 2 raises bwInter).
TEST(NcclGraphSearch, DgxNvlsMultiNode) {
  const SearchGraph n = search_node_graphs(testing::dgx_h100_node(), multi(2), true).nvls;
  EXPECT_EQ(n.pattern, GraphPattern::Nvls);
  ASSERT_EQ(n.nchannels, 8);
  EXPECT_DOUBLE_EQ(n.bw_intra, 40.0);
  EXPECT_DOUBLE_EQ(n.bw_inter, 48.0);
  for (int h = 0; h < 8; ++h) {
    EXPECT_EQ(n.intra[static_cast<std::size_t>(h)], std::vector<int>{h});
    EXPECT_EQ(n.net_in[static_cast<std::size_t>(h)], h);
    EXPECT_EQ(n.net_out[static_cast<std::size_t>(h)], h);
  }
  EXPECT_EQ(search_node_graphs(testing::dgx_h100_node(), multi(2), false).nvls.nchannels, 0);
}

TEST(NcclGraphSearch, GeneratedH100NodeSearchesLikeTheXml) {
  const NodeTopology x = testing::dgx_h100_node();
  const NodeTopology g = with_paths(generate_node_topology(testing::h100_cluster(2)));
  for (bool multi_node : {true, false}) {
    const SearchOptions o{.cross_nic = 2, .multi_node = multi_node};
    const NodeGraphs a = search_node_graphs(x, o, true), b = search_node_graphs(g, o, true);
    testing::expect_same_graph(a.ring, b.ring);
    testing::expect_same_graph(a.tree, b.tree);
    testing::expect_same_graph(a.nvls, b.nvls);
  }
}

// Every channel of a non-NVLS graph visits each local GPU once; NETs are real devices.
void expect_sane(const NodeTopology& t, const SearchGraph& g, bool multi_node) {
  ASSERT_GE(g.nchannels, 1);
  EXPECT_LE(g.nchannels, 64);
  EXPECT_GT(g.bw_intra, 0);
  ASSERT_EQ(g.intra.size(), static_cast<std::size_t>(g.nchannels));
  std::vector<int> all(t.gpus.size());
  std::iota(all.begin(), all.end(), 0);
  for (int c = 0; c < g.nchannels; ++c) {
    std::vector<int> chain = g.intra[static_cast<std::size_t>(c)];
    std::sort(chain.begin(), chain.end());
    EXPECT_EQ(chain, all) << "channel " << c;
    const int in = g.net_in[static_cast<std::size_t>(c)], out = g.net_out[static_cast<std::size_t>(c)];
    if (multi_node && !t.nets.empty()) {
      EXPECT_GE(in, 0);
      EXPECT_LT(in, static_cast<int>(t.nets.size()));
      EXPECT_GE(out, 0);
      EXPECT_LT(out, static_cast<int>(t.nets.size()));
    } else if (!multi_node) {
      EXPECT_EQ(in, -1);
      EXPECT_EQ(out, -1);
    }
  }
}

void expect_sane_all(const NodeTopology& t) {
  for (bool multi_node : {true, false}) {
    const NodeGraphs g = search_node_graphs(t, SearchOptions{.cross_nic = 2, .multi_node = multi_node}, true);
    expect_sane(t, g.ring, multi_node);
    expect_sane(t, g.tree, multi_node);
    // Ring and tree end up with the same channel count unless the tree had to fall back.
    EXPECT_TRUE(g.tree.nchannels == g.ring.nchannels || g.tree.nchannels == 1);
  }
}

TEST(NcclGraphSearch, A100Node) {
  const NodeTopology t = with_paths(generate_node_topology(testing::a100_cluster(2)));
  expect_sane_all(t);
  const NodeGraphs g = search_node_graphs(t, multi(2), true);
  EXPECT_DOUBLE_EQ(g.ring.bw_inter, 24.0);  // Gen4 x16 caps the 200G NIC's 25 GB/s
  EXPECT_EQ(g.ring.nchannels, 8);
  EXPECT_EQ(g.nvls.nchannels, 0);  // NVLS needs SM90+
  const SearchGraph s = search_graph(t, GraphPattern::Ring, SearchOptions{.multi_node = false});
  EXPECT_EQ(s.nchannels, 12);  // 6 × 40 on 240 GB/s, duplicated
  EXPECT_DOUBLE_EQ(s.bw_intra, 20.0);
}

TEST(NcclGraphSearch, H100WithOneNicPerTwoGpus) {
  ClusterSpec c = testing::h100_cluster(2);
  c.nics_per_node = 4;
  const NodeTopology t = with_paths(generate_node_topology(c));
  expect_sane_all(t);
  const NodeGraphs g = search_node_graphs(t, multi(2), true);
  EXPECT_GE(g.ring.nchannels * g.ring.bw_inter, 4 * 24.0);
  // NVLS heads are the NICs' local GPUs.
  ASSERT_EQ(g.nvls.nchannels, 4);
  for (int h = 0; h < 4; ++h) EXPECT_EQ(g.nvls.intra[static_cast<std::size_t>(h)], std::vector<int>{2 * h});
}

// A communicator with one GPU on this node: the ring enters and leaves on that GPU's own NIC.
TEST(NcclGraphSearch, OneGpuOfTheNode) {
  const NodeTopology t = with_paths(restrict_to_gpus(testing::dgx_h100_node(), {3}));
  const SearchGraph g = search_graph(t, GraphPattern::Ring, multi(2));
  ASSERT_GE(g.nchannels, 1);
  for (int c = 0; c < g.nchannels; ++c) {
    EXPECT_EQ(g.intra[static_cast<std::size_t>(c)], std::vector<int>{0});
    EXPECT_EQ(g.net_in[static_cast<std::size_t>(c)], 3);
    EXPECT_EQ(g.net_out[static_cast<std::size_t>(c)], 3);
  }
  EXPECT_DOUBLE_EQ(g.nchannels * g.bw_inter, 48.0);  // the GPU's PCIe Gen5 link
  expect_sane_all(t);
}

TEST(NcclGraphSearch, TwoGpusOfTheNode) {
  const NodeTopology t = with_paths(restrict_to_gpus(testing::dgx_h100_node(), {0, 1}));
  expect_sane_all(t);
  const SearchGraph g = search_graph(t, GraphPattern::Ring, multi(2));
  for (int c = 0; c < g.nchannels; ++c) {
    EXPECT_TRUE(g.net_in[static_cast<std::size_t>(c)] == 0 || g.net_in[static_cast<std::size_t>(c)] == 1);
  }
  EXPECT_DOUBLE_EQ(g.nchannels * g.bw_inter, 96.0);  // both GPUs' NICs, 48 each
}

// Communicators that use only some GPUs of a generated DGX-H100 node (multi-node, NCCL_CROSS_NIC=2),
// e.g. the data-parallel group of a TP=2 job (local GPUs {0,2,4,6}). NCCL's topology holds only the
// communicator's GPUs but every NIC (ncclTopoTrimSystem), so each kept GPU has its own PIX NIC at 48 GB/s (Gen5 x16)
// and reaches the other kept GPUs' NICs by PXN at 48; NICs whose GPU is gone are PHB/SYS.
// Derivation from ncclTopoCompute (search.cc):
//  Ring: at 48 with crossNic 0 the ring must leave on its entry NIC; only the entry GPU reaches it by
//   PIX, so PIX..P2C fail; at PXN the last GPU sends through the first GPU's NIC: one channel per NIC
//   (a 400G NIC's 50 GB/s holds one 48 channel), i.e. k channels × 48 for k kept GPUs. crossNic 2
//   (tried next) finds the same k × 48 at PIX, but ncclTopoCompareGraphs only replaces a graph on
//   strictly more nChannels×bwIntra (the hop tie-break needs the same crossNic), and lower speeds
//   give no more in total. So the PXN, crossNic 0 graph stays; ncclTopoDupChannels doubles it
//   (bwIntra 48 >= 25, k <= 4 channels): 2k × 24.
//  Tree: searched with min = max = the ring's 2k channels. Nothing fits above 24 (each NIC and GPU
//   PCIe link holds one 48 channel, two at 24), so pass 1 walks every relaxation down the speed
//   ladder (millions of steps: NCCL's global timeout only stops once something was found) to 24,
//   where TREE (the SM90 fallback of BALANCED_TREE) enters and leaves each channel on one GPU's own
//   NIC over PIX: 2k × 24. Pass 2 then raises bwIntra to 48 (< 2 × bwInter).
struct SubsetExpectation {
  std::vector<int> gpus;  // local GPUs (dev) of the communicator on this node
  int channels;           // after duplication
};

void expect_subset_graphs(const SubsetExpectation& e) {
  const NodeTopology t = with_paths(restrict_to_gpus(generate_node_topology(testing::h100_cluster(2)), e.gpus));
  const NodeGraphs g = search_node_graphs(t, multi(2), true);
  const int k = static_cast<int>(e.gpus.size());
  SCOPED_TRACE(::testing::Message() << k << " GPUs");
  ASSERT_EQ(g.ring.nchannels, e.channels);
  EXPECT_DOUBLE_EQ(g.ring.bw_intra, 24.0);
  EXPECT_DOUBLE_EQ(g.ring.bw_inter, 24.0);
  EXPECT_EQ(g.ring.type_intra, k == 1 ? PathType::Loc : PathType::Nvl);
  for (int c = 0; c < g.ring.nchannels; ++c) {
    const auto i = static_cast<std::size_t>(c);
    // Channel c enters at the NIC of the c-th kept GPU (mod k) and, crossNic 0, leaves there too.
    const int first = g.ring.intra[i].front();
    EXPECT_EQ(first, c % k);
    EXPECT_EQ(g.ring.net_in[i], e.gpus[static_cast<std::size_t>(first)]);
    EXPECT_EQ(g.ring.net_out[i], g.ring.net_in[i]);
  }
  expect_sane(t, g.ring, true);

  EXPECT_EQ(g.tree.pattern, GraphPattern::Tree);
  ASSERT_EQ(g.tree.nchannels, e.channels);
  EXPECT_DOUBLE_EQ(g.tree.bw_inter, 24.0);
  EXPECT_DOUBLE_EQ(g.tree.bw_intra, 48.0);
  EXPECT_EQ(g.tree.type_inter, PathType::Pix);
  for (int c = 0; c < g.tree.nchannels; ++c) {
    const auto i = static_cast<std::size_t>(c);
    const int head = g.tree.intra[i].front();
    EXPECT_EQ(g.tree.net_in[i], e.gpus[static_cast<std::size_t>(head)]);  // the head GPU's own NIC
    EXPECT_EQ(g.tree.net_out[i], g.tree.net_in[i]);
  }
  expect_sane(t, g.tree, true);
}

TEST(NcclGraphSearch, SubsetEveryOtherGpu) {
  expect_subset_graphs({{0, 2, 4, 6}, 8});  // 4 × 48 PXN -> 8 × 24; tree 8 × 48/24 PIX
  const NodeTopology t = with_paths(restrict_to_gpus(generate_node_topology(testing::h100_cluster(2)), {0, 2, 4, 6}));
  const SearchGraph ring = search_graph(t, GraphPattern::Ring, multi(2));
  EXPECT_EQ(ring.type_inter, PathType::Pxn);
  EXPECT_EQ(ring.cross_nic, 0);
}

TEST(NcclGraphSearch, SubsetTwoGpusOnDifferentSockets) {
  expect_subset_graphs({{0, 4}, 4});  // 2 × 48 PXN -> 4 × 24; tree 4 × 48/24 PIX on NICs 0 and 4
}

TEST(NcclGraphSearch, SubsetFirstHalfOfTheNode) {
  expect_subset_graphs({{0, 1, 2, 3}, 8});  // NICs 0..3 only; NICs 4..7 are SYS from every kept GPU
}

// One GPU: the ring is NET 3 -> GPU -> NET 3 at 48 (its PCIe Gen5 link), 1 channel = maxChannels for
// that speed; duplicated to 2 × 24. Tree (TREE for one GPU) gets the same 2 channels, bwIntra 48.
TEST(NcclGraphSearch, SubsetSingleGpu) {
  const NodeTopology t = with_paths(restrict_to_gpus(generate_node_topology(testing::h100_cluster(2)), {3}));
  const NodeGraphs g = search_node_graphs(t, multi(2), true);
  ASSERT_EQ(g.ring.nchannels, 2);
  EXPECT_DOUBLE_EQ(g.ring.bw_inter, 24.0);
  EXPECT_EQ(g.ring.type_inter, PathType::Pix);
  EXPECT_EQ(g.ring.net_in, (std::vector<int>{3, 3}));
  EXPECT_EQ(g.ring.net_out, (std::vector<int>{3, 3}));
  ASSERT_EQ(g.tree.nchannels, 2);
  EXPECT_EQ(g.tree.pattern, GraphPattern::Tree);
  EXPECT_DOUBLE_EQ(g.tree.bw_inter, 24.0);
  EXPECT_EQ(g.tree.net_in, (std::vector<int>{3, 3}));
}

TEST(NcclGraphSearch, PcieOnlyNode) {
  ClusterSpec c = testing::h100_cluster(2);
  c.scale_up.kind = ScaleUpKind::PCIe;
  const NodeTopology t = with_paths(generate_node_topology(c));
  expect_sane_all(t);
  const SearchGraph g = search_graph(t, GraphPattern::Ring, SearchOptions{.multi_node = false});
  EXPECT_LE(g.bw_intra * g.nchannels, 48.0);  // bounded by one PCIe Gen5 link
  EXPECT_GE(g.type_intra, PathType::Phb);
  EXPECT_EQ(search_node_graphs(t, multi(2), true).nvls.nchannels, 0);
}

TEST(NcclGraphSearch, B200Node) {
  ClusterSpec c = testing::h100_cluster(2);
  c.gpu = testing::b200_gpu();
  c.scale_up.bandwidth_GBps = 900;
  const NodeTopology t = with_paths(generate_node_topology(c));
  expect_sane_all(t);
  const NodeGraphs g = search_node_graphs(t, multi(2), true);
  EXPECT_EQ(g.ring.nchannels, 8);
  EXPECT_DOUBLE_EQ(g.ring.bw_inter, 48.0);
  EXPECT_EQ(g.nvls.nchannels, 8);
  // Single node: SM100 ladder from 90; 721.8 GB/s of NVLink fits 8 × 90, halved by duplication.
  const SearchGraph s = search_graph(t, GraphPattern::Ring, SearchOptions{.multi_node = false});
  EXPECT_GE(s.nchannels * s.bw_intra, 700.0);
}

// A 72-GPU NVLink domain searched as one node (MNNVL): must terminate fast with a sane result.
TEST(NcclGraphSearch, Nvl72DomainTerminates) {
  ClusterSpec c = testing::h100_cluster(1);
  c.gpu = testing::b200_gpu();
  c.scale_up = {ScaleUpKind::NVSwitch, 900, 72};
  c.gpus_per_node = 72;
  c.num_gpus = 144;
  c.nics_per_node = 72;
  c.nic_gbps = 800;
  const NodeTopology t = with_paths(generate_node_topology(c));
  ASSERT_EQ(t.gpus.size(), 72u);
  const NodeGraphs g = search_node_graphs(t, multi(2), true);
  expect_sane(t, g.ring, true);
  expect_sane(t, g.tree, true);
  EXPECT_GE(g.ring.nchannels * g.ring.bw_inter, 48.0);
  EXPECT_EQ(g.nvls.nchannels, 32);  // NCCL_MAX_NVLS_ARITY heads
}

// Replaying a fruitless try (one that found nothing, tried again with inputs that allow the same paths) gives the
// result and the step count of walking it again, on every node shape, and saves most of the walk where NCCL's
// relaxation ladder repeats itself: a few GPUs of a multi-host NVLink domain with all its NICs.
TEST(NcclGraphSearch, ReplayedFruitlessTriesChangeNothing) {
  ClusterSpec pcie = testing::h100_cluster(2);
  pcie.scale_up.kind = ScaleUpKind::PCIe;
  ClusterSpec domain = testing::h100_cluster(1);
  domain.gpu = testing::b200_gpu();
  domain.scale_up = {ScaleUpKind::NVSwitch, 900, 24};
  domain.gpus_per_node = 24;
  domain.num_gpus = 96;
  domain.nics_per_node = 24;
  domain.nic_gbps = 400;
  const std::vector<std::pair<std::string, NodeTopology>> nodes{
      {"DGX H100", testing::dgx_h100_node()},
      {"H100 GPUs 0,2,4,6",
       with_paths(restrict_to_gpus(generate_node_topology(testing::h100_cluster(2)), {0, 2, 4, 6}))},
      {"A100", with_paths(generate_node_topology(testing::a100_cluster(2)))},
      {"PCIe only", with_paths(generate_node_topology(pcie))},
      {"3 GPUs of a 24-GPU domain", with_paths(restrict_to_gpus(generate_node_topology(domain), {0, 8, 16}))},
  };
  std::int64_t walked = 0, steps = 0;
  for (const auto& [name, node] : nodes) {
    for (const bool multi_node : {false, true}) {
      SCOPED_TRACE(name + (multi_node ? ", multi-node" : ", single node"));
      SearchOptions replay{.multi_node = multi_node};
      SearchOptions walk = replay;
      walk.replay_fruitless_tries = false;
      const NodeGraphs a = search_node_graphs(node, replay, true, multi_node);
      const NodeGraphs b = search_node_graphs(node, walk, true, multi_node);
      for (const auto& [x, y] : {std::pair{&a.ring, &b.ring},
                                 {&a.tree, &b.tree},
                                 {&a.nvls, &b.nvls},
                                 {&a.collnet_chain, &b.collnet_chain},
                                 {&a.collnet_direct, &b.collnet_direct}}) {
        testing::expect_same_graph(*x, *y);
        EXPECT_EQ(x->steps, y->steps);
        EXPECT_EQ(y->steps_walked, y->steps);
        EXPECT_LE(x->steps_walked, x->steps);
        if (name.starts_with("3 GPUs") && multi_node) {
          walked += x->steps_walked;
          steps += x->steps;
        }
      }
    }
  }
  EXPECT_GT(steps, 100000);
  EXPECT_LT(walked * 5, steps);
}

TEST(NcclGraphSearch, NodeWithoutNicsFallsBackForMultiNode) {
  ClusterSpec c = testing::h100_cluster(2);
  c.nics_per_node = 0;
  const NodeTopology t = with_paths(generate_node_topology(c));
  const SearchGraph g = search_graph(t, GraphPattern::Ring, multi(2));
  ASSERT_EQ(g.nchannels, 1);  // NCCL's fallback: PCI order, 0.1 GB/s, no NET
  EXPECT_DOUBLE_EQ(g.bw_intra, 0.1);
  EXPECT_EQ(g.type_inter, PathType::Dis);
  EXPECT_EQ(g.net_in[0], -1);
}

TEST(NcclGraphSearch, DeterministicAndNeedsPaths) {
  const NodeTopology t = testing::dgx_h100_node();
  testing::expect_same_graph(search_graph(t, GraphPattern::Ring, multi(2)),
                             search_graph(t, GraphPattern::Ring, multi(2)));
  const NodeTopology raw = load_nccl_topology_file(testing::dgx_h100_xml(), "k");
  EXPECT_THROW(search_graph(raw, GraphPattern::Ring, multi(2)), InternalError);  // a bug: paths come first
  EXPECT_STREQ(to_string(GraphPattern::BalancedTree), "BALANCED_TREE");
}

}  // namespace
}  // namespace trainsim
