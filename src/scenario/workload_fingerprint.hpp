#pragma once
// What identifies a scenario up to the keys only the network reads: two scenarios with the same fingerprint build the
// same workload, memory model and compute model (PreparedJobCache reuses them across a sweep's points).
#include <string>

#include <yaml-cpp/yaml.h>

namespace trainsim::scenario_detail {

// The scenario tree (overrides applied) written out canonically, mapping keys sorted, without the keys
// network_only_key names. A scalar is compared as written ("1" and "1.0" differ: a missed reuse, never a wrong one).
std::string workload_fingerprint(const YAML::Node& root);

}  // namespace trainsim::scenario_detail
