#pragma once
// The generators behind build_network (one file each) and what they share.
#include <string>

#include "hardware/cluster_spec.hpp"
#include "topology/network_graph.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_rail_optimized(const ClusterSpec& c);  // generate_rail_optimized.cpp
NetworkGraph generate_fat_tree(const ClusterSpec& c);        // generate_fat_tree.cpp
NetworkGraph generate_hpn(const ClusterSpec& c);             // generate_hpn.cpp
NetworkGraph generate_dragonfly(const ClusterSpec& c);       // generate_dragonfly.cpp
NetworkGraph generate_ideal(const ClusterSpec& c);           // generate_ideal.cpp
NetworkGraph generate_simai_file(const ClusterSpec& c);      // generate_simai_file.cpp

// A ScenarioError for key cluster.<key> ("network.switch_radix", "nics_per_node").
[[noreturn]] void cluster_error(const std::string& key, const std::string& message);

inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace trainsim::topology_detail
