#pragma once
// A cluster whose fabric cannot be built (e.g. 131072 GPUs on 2 tiers of radix-64 switches) is an error at
// every network model: the flow level builds the fabric and refuses it, and the analytical model, which prices
// collectives from NCCL's view of a node and never builds the fabric, must not answer for it either.
#include <string>

#include "hardware/cluster_spec.hpp"

namespace trainsim {

// Builds the fabric as the flow level would and discards it; its ScenarioError (naming the cluster.network key)
// comes back with `file`. A few tens of milliseconds even for 65536 GPUs.
void check_fabric_buildable(const std::string& file, const ClusterSpec& cluster);

}  // namespace trainsim
