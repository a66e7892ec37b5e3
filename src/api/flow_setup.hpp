#pragma once
// What `simulation.network_model: flow` (or packet) needs for one run (docs/network-model.md): the cluster's
// network graph with the scenario's faults applied, the copies of each communicator that run every
// collective together (workload/group_replicas.hpp), and the flow-level backend over them.
#include <memory>
#include <vector>

#include "collective/collective_model.hpp"
#include "network/flow_backend.hpp"
#include "scenario/scenario.hpp"
#include "topology/network_graph.hpp"
#include "workload/workload.hpp"

namespace trainsim {

struct FlowSetup {
  std::unique_ptr<NetworkGraph> graph;
  std::unique_ptr<FlowBackend> backend;
};

// `with_faults` false builds the fault-free fabric (the baseline the report compares against).
// Throws ScenarioError naming faults[i].<key> for faults the fabric does not have (unknown link
// names) or cannot model.
FlowSetup make_flow_setup(const Scenario& s, const Workload& wl, const CollectiveModel& collectives, bool per_rank,
                          bool with_faults);

// The same for given communicators on `cluster` (the scenario's, or one resized for a collective test):
// `replicas[g]` lists the copies of communicator g that run its calls together, each its global ranks sorted.
// `packet_groups[g]`: whether communicator g's calls are in the packet scope (empty: all are).
FlowSetup make_flow_setup(const Scenario& s, const ClusterSpec& cluster, const CollectiveModel& collectives,
                          std::vector<std::vector<std::vector<int>>> replicas, bool with_faults,
                          std::vector<char> packet_groups = {});

// cluster.network.roce as the packet network's parameters (simulation.network_model: packet).
PacketConfig packet_config(const NetworkSpec::Roce& roce, double nic_gbps, std::uint64_t seed);

}  // namespace trainsim
