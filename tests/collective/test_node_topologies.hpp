#pragma once
// NCCL node topologies shared by the collective tests: the DGX-H100 node as NCCL_TOPO_FILE describes it, and the
// node generated for the hand-written H100 cluster, each with its paths computed.
#include <string>

#include "collective/nccl/nccl_node_topology.hpp"
#include "test_clusters.hpp"

namespace trainsim::testing {

// data/topologies/dgx-h100.xml in the source tree.
inline std::string dgx_h100_xml() { return std::string(TRAINSIM_SOURCE_DIR) + "/data/topologies/dgx-h100.xml"; }

// The DGX-H100 node read from its NCCL_TOPO_FILE, paths computed with `options`.
inline NodeTopology dgx_h100_node(const PathOptions& options = {}) {
  NodeTopology t = load_nccl_topology_file(dgx_h100_xml(), "nccl.NCCL_TOPO_FILE");
  compute_paths(t, options);
  return t;
}

// The node generate_node_topology makes for h100_cluster (8 GPUs, 8 NICs), paths computed.
inline NodeTopology generated_h100_node() {
  NodeTopology t = generate_node_topology(h100_cluster(2));
  compute_paths(t, PathOptions{});
  return t;
}

}  // namespace trainsim::testing
