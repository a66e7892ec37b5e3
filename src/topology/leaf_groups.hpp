#pragma once
// How many hosts share one group of leaves (an SU's rail leaves, a ToR, a ToR pair, an HPN
// segment), and the NIC/GPU ratio that rail-based fabrics need.
#include <string>

#include "hardware/cluster_spec.hpp"

namespace trainsim::topology_detail {

// Rails pair NIC k with GPU k*gpus/nics: one must divide the other.
void check_rails(const ClusterSpec& c, const std::string& topology);

// Hosts per leaf group: at most `max_hosts` (what the leaves' downlinks allow), at most the
// cluster, and what cluster.network.pod_size asks (with 2 tiers it is the group itself; with 3 a
// pod must hold whole groups). `need` says what a host takes, for the error message.
int hosts_per_leaf_group(const ClusterSpec& c, int max_hosts, const std::string& group_name, const std::string& need);

}  // namespace trainsim::topology_detail
