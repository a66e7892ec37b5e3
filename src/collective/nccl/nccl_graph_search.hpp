#pragma once
// NCCL's graph search (ncclTopoCompute, NCCL src/graph/search.cc) on one node: for a pattern
// (ring, trees, NVLS, CollNet direct) find the channels — each an ordered list of local GPUs with an
// entry and exit NIC — and the per-channel bandwidths, with NCCL's speed ladders, bandwidth
// accounting along paths, candidate ordering, crossNic handling, stop rules and channel duplication.
#include <cstdint>
#include <memory>
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

// Everything a search reads once it is set up, in a form that does not depend on which hosts, NICs or bus ids the
// node has: `words` must be equal, `values` may move as NetBandwidthMoves allows. `values` are what a multi-node
// search reads of the NETs' bandwidths (what is left on a NET link or a NET, and the node's fastest GPU-to-NET path,
// each compared with the speeds it tries); empty inside one node, which reads none of them. Everything else they
// decide is settled before the search starts and is in `words` (the GPU-to-NET paths' bandwidths as NCCL
// truncates them, each GPU's NICs, each NET's local GPUs). Two nodes with the same inputs find the same graphs,
// which name local ranks and NET indices only.
struct CanonicalSearchInputs {
  std::vector<std::uint64_t> words;
  std::vector<float> values;
};

// How far the NET-dependent bandwidths may move, each on its own, with every comparison a search made of them
// coming out the same: by d with low <= d < high. A move of 0 always does.
struct NetBandwidthMoves {
  double low = 0, high = 0;
  bool allow(double d) const { return d == 0 || (d >= low && d < high); }
};

// search_node_graphs in two steps, so that a memo can tell which searches of other nodes would find the same graphs:
// a node whose canonical_inputs() have equal `words` and `values` each moved by a d that net_moves() allows gives
// every comparison the same outcome, so the search walks the same steps and finds the same graphs. The node must
// outlive the object.
class NodeGraphSearch {
 public:
  NodeGraphSearch(const NodeTopology& node, const SearchOptions& options);
  ~NodeGraphSearch();
  NodeGraphSearch(const NodeGraphSearch&) = delete;
  NodeGraphSearch& operator=(const NodeGraphSearch&) = delete;
  CanonicalSearchInputs canonical_inputs() const;
  NodeGraphs search(bool search_nvls, bool search_collnet);
  // After search(): the moves of canonical_inputs().values with which the same graphs are found.
  NetBandwidthMoves net_moves() const;

  struct Impl;  // the searcher, defined where it is implemented

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace trainsim
