#pragma once
// The scenario's network faults (`faults:` link_down, link_degraded, nic_down, node_down) as links of
// the cluster's network graph: one translation for `trainsim topo` and the flow-level run.
#include <cstddef>
#include <vector>

#include "scenario/scenario.hpp"
#include "topology/network_graph.hpp"

namespace trainsim {

struct FaultedLink {
  LinkId link = 0;
  bool up = false;      // false: down
  double factor = 1.0;  // capacity kept when up (link_degraded)
};

// The links fault i touches and their state under it (both directions of a named "a-b" link or of
// a NIC's or node's links); empty for gpu_slow. Unknown names and nodes are ScenarioErrors naming
// faults[i].link / .node / .nic.
std::vector<FaultedLink> network_fault_links(const NetworkGraph& g, const Scenario& s, std::size_t i);

struct AppliedFaults {
  int applied = 0;  // `always` faults now in the graph
  int later = 0;    // faults with an at_s (names checked, not applied)
};
// Applies the `always` network faults to the graph and checks the timed ones.
AppliedFaults apply_always_faults(NetworkGraph& g, const Scenario& s);

}  // namespace trainsim
