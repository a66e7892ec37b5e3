#pragma once
// A process-wide memo of NCCL graph searches. A search is a pure function of what it reads once set up (every
// endpoint pair's path as a list of links, the links' bandwidths, each GPU's rank and NICs, each NET's attributes:
// NodeGraphSearch::canonical_inputs) and of the search options, and its graphs name local ranks and NET indices
// only. The same inputs come back across the groups of one job (the data-parallel copies of an NVL72 rack see
// the same shape on other trays and NICs) and across the scenarios one process simulates (the candidates of
// `trainsim tune`, the points of a sweep). The memo returns the graphs a search found before for the same
// inputs; the answer is the one the search would give. The NICs' speeds are matched
// loosely: a search inside one node does not read them, and a multi-node search holds for every NIC speed that
// gives each comparison it made the same outcome (NodeGraphSearch::net_moves), so a sweep of cluster.nic_gbps
// searches a node once per few GB/s rather than once per point.
#include "collective/nccl/nccl_graph_search.hpp"
#include "collective/nccl/nccl_node_topology.hpp"

namespace trainsim {

// search_node_graphs, memoised. Thread-safe.
NodeGraphs cached_search_node_graphs(const NodeTopology& node, const SearchOptions& options, bool search_nvls,
                                     bool search_collnet);

}  // namespace trainsim
