#pragma once
// A cluster whose fabric cannot be built (e.g. 131072 GPUs on 2 tiers of radix-64 switches) must not be priced
// silently: the flow level builds the fabric and refuses it; the analytical model, which prices collectives
// from NCCL's view of a node and its NICs and never builds the fabric, checks it here.
#include <optional>
#include <string>

#include "core/error.hpp"
#include "hardware/cluster_spec.hpp"

namespace trainsim {

// Builds the fabric as the flow level would and discards it (a few tens of milliseconds even for 65536 GPUs):
// the ScenarioError it raises (naming the cluster.network key, file left empty), or nullopt when it builds.
std::optional<ScenarioError> fabric_problem(const ClusterSpec& cluster);

// The same, thrown with `file`.
void check_fabric_buildable(const std::string& file, const ClusterSpec& cluster);

}  // namespace trainsim
