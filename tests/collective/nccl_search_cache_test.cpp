// The process-wide memo of graph searches (nccl_search_cache.cpp): the same node and options give the search's
// own answer, and a node that differs in anything the search reads is searched again.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_search_cache.hpp"
#include "search_graph_expect.hpp"
#include "test_clusters.hpp"
#include "test_node_topologies.hpp"

namespace trainsim {
namespace {

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
      ClusterSpec c = base;
      c.nic_gbps = gbps;
      NodeTopology node = generate_node_topology(c);
      compute_paths(node, PathOptions{});
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

}  // namespace
}  // namespace trainsim
