#pragma once
// Builds the cluster's network graph from its description (cluster.network.topology picks the
// generator; docs/topologies.md describes each one and the parameters it derives).
// Impossible combinations throw ScenarioError naming the cluster.network key (file left empty:
// the caller, who knows the scenario file, may add it).
#include "hardware/cluster_spec.hpp"
#include "topology/network_graph.hpp"

namespace trainsim {

NetworkGraph build_network(const ClusterSpec& cluster);

}  // namespace trainsim
