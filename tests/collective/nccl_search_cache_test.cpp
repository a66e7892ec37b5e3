// The process-wide memo of graph searches (nccl_search_cache.cpp): the same node and options give the search's
// own answer, and a node that differs in anything the search reads is searched again.
#include <gtest/gtest.h>

#include <cmath>

#include "collective/nccl/nccl_search_cache.hpp"
#include "search_graph_expect.hpp"
#include "test_clusters.hpp"
#include "test_node_topologies.hpp"

namespace trainsim {
namespace {

// The node `base` describes with its NICs at `gbps`, its paths computed.
NodeTopology node_with_nics_at(ClusterSpec base, double gbps) {
  base.nic_gbps = gbps;
  NodeTopology node = generate_node_topology(base);
  compute_paths(node, PathOptions{});
  return node;
}

TEST(NcclSearchCache, GivesTheSearchsOwnAnswer) {
  const NodeTopology node = testing::generated_h100_node();
  SearchOptions options;
  options.multi_node = true;
  const NodeGraphs direct = search_node_graphs(node, options, true);
  for (int i = 0; i < 2; ++i) {  // the first call searches, the second is served from the memo
    const NodeGraphs cached = cached_search_node_graphs(node, options, true, false);
    testing::expect_same_graph(cached.ring, direct.ring);
    testing::expect_same_graph(cached.tree, direct.tree);
    testing::expect_same_graph(cached.nvls, direct.nvls);
  }
}

TEST(NcclSearchCache, ADifferentNodeOrOptionIsSearchedAgain) {
  const NodeTopology node = testing::generated_h100_node();
  SearchOptions options;
  options.multi_node = true;
  const NodeGraphs before = cached_search_node_graphs(node, options, false, false);
  // Halve every NIC's bandwidth: the ring's per-channel bandwidth must follow, not come from the memo.
  NodeTopology slower = node;
  for (TopoVertex& v : slower.vertices)
    if (v.kind == TopoKind::Net) v.net_bw /= 2;
  for (auto& row : slower.paths)
    for (std::size_t to = 0; to < row.size(); ++to)
      if (slower.vertices[to].kind == TopoKind::Net && row[to].bw > 0) row[to].bw /= 2;
  const NodeGraphs slow = cached_search_node_graphs(slower, options, false, false);
  testing::expect_same_graph(slow.ring, search_node_graphs(slower, options, false).ring);
  EXPECT_LT(slow.ring.bw_inter * slow.ring.nchannels, before.ring.bw_inter * before.ring.nchannels);
  // Another option is another search too.
  SearchOptions single = options;
  single.multi_node = false;
  testing::expect_same_graph(cached_search_node_graphs(node, single, false, false).ring,
                             search_node_graphs(node, single, false).ring);
}

// A search inside one node reads no NIC bandwidth, so nodes that differ only in their NICs' speed share one memo
// entry (what lets a sweep of cluster.nic_gbps reuse its intra-node graphs). Checked against the search on each
// real node, on node shapes with NICs behind PCIe switches, on the CPU and beside an NVSwitch.
TEST(NcclSearchCache, ASingleNodeSearchIsTheSameAtEveryNicSpeed) {
  ClusterSpec pcie = testing::h100_cluster(2);
  pcie.scale_up.kind = ScaleUpKind::PCIe;
  for (const ClusterSpec& base : {testing::h100_cluster(2), testing::a100_cluster(2), pcie}) {
    for (const double gbps : {25.0, 100.0, 400.0, 3200.0}) {
      SCOPED_TRACE(std::to_string(base.gpus_per_node) + " GPUs, NICs at " + std::to_string(gbps) + " Gb/s");
      const NodeTopology node = node_with_nics_at(base, gbps);
      SearchOptions single;
      single.multi_node = false;
      const NodeGraphs direct = search_node_graphs(node, single, true);
      const NodeGraphs cached = cached_search_node_graphs(node, single, true, false);
      testing::expect_same_graph(cached.ring, direct.ring);
      testing::expect_same_graph(cached.tree, direct.tree);
      testing::expect_same_graph(cached.nvls, direct.nvls);
    }
  }
}

// A multi-node search reads the NETs' bandwidths only by comparing them with the speeds it tries, so the graphs it
// finds hold while every such comparison comes out the same (NodeGraphSearch::net_moves). Checked on every pair of
// a grid of NIC speeds, the speeds on the search's ladder and a hair either side of them included: wherever one
// search's moves allow another speed, the other speed's own search walks the same steps to the same graphs. And the
// allowance is wide enough to matter: a sweep in steps of 4 Gb/s has many of its speeds covered by another one's
// search (not all: a NIC path's bandwidth truncated to whole GB/s is among the inputs matched exactly).
void expect_same_walk(const SearchGraph& a, const SearchGraph& b) {
  testing::expect_same_graph(a, b);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.steps_walked, b.steps_walked);
  EXPECT_EQ(a.same_channels, b.same_channels);
  EXPECT_EQ(a.cross_nic, b.cross_nic);
}

struct SearchedSpeed {
  double gbps = 0;
  CanonicalSearchInputs inputs;
  NetBandwidthMoves moves;
  NodeGraphs graphs;
};

// What the memo asks of an entry: the same words, and each value moved by what the entry's moves allow.
bool allows(const SearchedSpeed& entry, const CanonicalSearchInputs& query) {
  if (entry.inputs.words != query.words || entry.inputs.values.size() != query.values.size()) return false;
  for (std::size_t i = 0; i < query.values.size(); ++i)
    if (!entry.moves.allow(static_cast<double>(query.values[i]) - static_cast<double>(entry.inputs.values[i])))
      return false;
  return true;
}

TEST(NcclSearchCache, AMultiNodeSearchHoldsForTheNicSpeedsItsMovesAllow) {
  std::vector<double> grid;
  for (double gbps = 272; gbps <= 432; gbps += 4) grid.push_back(gbps);
  for (const double GBps : {12.0, 15.0, 20.0, 24.0, 30.0, 40.0, 48.0})  // ladder speeds, in GB/s
    for (const double hair : {-0.001, 0.0, 0.001}) grid.push_back((GBps + hair) * 8);
  ClusterSpec two_nics = testing::h100_cluster(2);
  two_nics.nics_per_node = 2;
  for (const ClusterSpec& base : {testing::h100_cluster(2), two_nics}) {
    SCOPED_TRACE(std::string(base.gpu.name) + " with " + std::to_string(base.nics_per_node) + " NICs");
    std::vector<SearchedSpeed> searched;
    for (const double gbps : grid) {
      const NodeTopology node = node_with_nics_at(base, gbps);
      SearchOptions options;
      options.multi_node = true;
      NodeGraphSearch search(node, options);
      SearchedSpeed s{gbps, search.canonical_inputs(), {}, search.search(true, false)};
      s.moves = search.net_moves();
      EXPECT_FALSE(s.inputs.values.empty());
      searched.push_back(std::move(s));
    }
    int covered = 0;
    for (const SearchedSpeed& a : searched) {
      bool by_another = false;
      for (const SearchedSpeed& b : searched) {
        if (&a == &b || !allows(b, a.inputs)) continue;
        SCOPED_TRACE(std::to_string(a.gbps) + " Gb/s answered by the search at " + std::to_string(b.gbps));
        expect_same_walk(a.graphs.ring, b.graphs.ring);
        expect_same_walk(a.graphs.tree, b.graphs.tree);
        expect_same_walk(a.graphs.nvls, b.graphs.nvls);
        by_another = true;
      }
      covered += by_another ? 1 : 0;
    }
    EXPECT_GT(covered, static_cast<int>(grid.size()) / 3);
    // At the upper edge of what each search allows (where a sweep's next speeds go): every NIC bandwidth moved by the
    // most its moves allow.
    for (const SearchedSpeed& a : searched) {
      for (const double d : {a.moves.high - 1e-4}) {
        if (!std::isfinite(d) || std::fabs(d) > 8 || !a.moves.allow(d)) continue;
        const NodeTopology node = node_with_nics_at(base, a.gbps + d * 8);
        SearchOptions options;
        options.multi_node = true;
        NodeGraphSearch search(node, options);
        if (!allows(a, search.canonical_inputs())) continue;
        SCOPED_TRACE(std::to_string(a.gbps) + " Gb/s moved by " + std::to_string(d) + " GB/s");
        const NodeGraphs g = search.search(true, false);
        expect_same_walk(g.ring, a.graphs.ring);
        expect_same_walk(g.tree, a.graphs.tree);
        expect_same_walk(g.nvls, a.graphs.nvls);
      }
    }
  }
}

// The memo serves a sweep of NIC speeds from few searches, and each answer is the search's own.
TEST(NcclSearchCache, ANicSpeedSweepGetsEachSpeedsOwnGraphs) {
  for (double gbps = 100; gbps <= 300; gbps += 20) {
    SCOPED_TRACE(std::to_string(gbps) + " Gb/s");
    const NodeTopology node = node_with_nics_at(testing::h100_cluster(2), gbps);
    SearchOptions options;
    options.multi_node = true;
    const NodeGraphs direct = search_node_graphs(node, options, true);
    const NodeGraphs cached = cached_search_node_graphs(node, options, true, false);
    expect_same_walk(cached.ring, direct.ring);
    expect_same_walk(cached.tree, direct.tree);
    expect_same_walk(cached.nvls, direct.nvls);
  }
}

}  // namespace
}  // namespace trainsim
