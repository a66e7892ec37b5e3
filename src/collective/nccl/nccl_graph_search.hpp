#pragma once
// NCCL's graph search (ncclTopoCompute, NCCL src/graph/search.cc) on one node: for a pattern
// (ring, trees, NVLS, CollNet direct) find the channels — each an ordered list of local GPUs with an
// entry and exit NIC — and the per-channel bandwidths, with NCCL's speed ladders, bandwidth
// accounting along paths, candidate ordering, crossNic handling, stop rules and channel duplication.
#include <cstdint>
#include <vector>

#include "collective/nccl/nccl_node_topology.hpp"

namespace trainsim {

// NCCL's pattern ids (graph.h).
enum class GraphPattern : std::uint8_t {
  BalancedTree = 1,
  SplitTree = 2,
  Tree = 3,
  Ring = 4,
  Nvls = 5,
  CollNetDirect = 6
};
const char* to_string(GraphPattern p);

struct SearchOptions {
  int cross_nic = 2;        // NCCL_CROSS_NIC: 0 same rail, 1 may cross, 2 try same then alternating pairs
  bool multi_node = false;  // the communicator has ranks on other nodes (system->inter)
  int min_channels = 1;
  int max_channels = 32;
  // A try that found nothing, tried again with the same inputs, takes its known outcome instead of the walk
  // (the result is the same; off only to check that in tests).
  bool replay_fruitless_tries = true;
};

// One search result (struct ncclTopoGraph).
struct SearchGraph {
  GraphPattern pattern = GraphPattern::Ring;
  int nchannels = 0;
  double bw_intra = 0, bw_inter = 0;  // GB/s per channel
  PathType type_intra = PathType::Loc, type_inter = PathType::Loc;
  bool same_channels = false;
  int cross_nic = 0;         // crossNic the solution was found with (0 or 2/1)
  double latency_inter = 0;  // µs, the NICs' latency attribute
  // Search steps (ncclTopoSearchRecGpu calls) NCCL takes for this result, and how many trainsim walked: replayed
  // tries count in the first, not in the second.
  std::int64_t steps = 0, steps_walked = 0;
  // Per channel: local ranks in order (intra[c][0] receives from the network, the last one sends),
  // and the entry / exit NET (index into NodeTopology::nets; -1 without network).
  std::vector<std::vector<int>> intra;
  std::vector<int> net_in, net_out;
};

// Runs the search for one pattern (the topology must have paths computed). Falls back as NCCL does
// (1 channel in PCI order, bw 0.1, SYS) when nothing is found. Deterministic.
SearchGraph search_graph(const NodeTopology& node, GraphPattern pattern, const SearchOptions& options);

// NCCL's init order (init.cc initTransportsRank): ring (1..32 channels), then tree with the ring's channel count
// (BALANCED_TREE, falling back to TREE on SM90), NVLS when supported (max = min(32, #GPUs); single
// node min = max). `nvls` stays empty (nchannels 0) when NVLS is not searched.
struct NodeGraphs {
  SearchGraph ring, tree, nvls;
  // CollNet (SHARP) graphs, searched only with NCCL_COLLNET_ENABLE on multi-node communicators:
  // the chain (TREE pattern, the ring's channel count) and the direct heads (COLLNET_DIRECT, ≤ 8).
  SearchGraph collnet_chain, collnet_direct;
};
NodeGraphs search_node_graphs(const NodeTopology& node, const SearchOptions& options, bool search_nvls,
                              bool search_collnet = false);

}  // namespace trainsim
