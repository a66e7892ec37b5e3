#pragma once
// What `trainsim topo` prints: switch and link counts per tier, endpoints, bisection bandwidth and
// oversubscription (docs/topologies.md, "Summary").
#include <iosfwd>
#include <string>
#include <vector>

#include "hardware/cluster_spec.hpp"
#include "topology/network_graph.hpp"

namespace trainsim {

struct SwitchTierSummary {
  SwitchRole role = SwitchRole::Leaf;
  int tier = 0;
  int count = 0;
};

struct LinkClassSummary {
  LinkKind kind = LinkKind::Access;
  int links = 0;  // directed links (a cable or trunk is two)
  int down = 0, degraded = 0;
  double min_capacity_Bps = 0, max_capacity_Bps = 0;  // nominal, per direction
  double total_Bps = 0;                               // current, both directions together
};

struct NetworkSummary {
  std::string topology;
  std::string source_file;  // the SimAI topology file the fabric was read from; empty when generated
  int tiers = 0, switch_radix = 0;
  int gpus = 0, nodes = 0, gpus_per_node = 0, nics = 0, nics_per_node = 0, domains = 0, domain_size = 0;
  int hardware_domain_size = 0;  // GPUs the fabric connects, when the job uses fewer of each (0 = all of them)
  double nic_Bps = 0;
  std::vector<SwitchTierSummary> switches;
  std::vector<LinkClassSummary> links;
  // One direction across the narrowest cut that halves the cluster: for trees the smallest of
  // half the NIC, leaf-uplink and (with several pods) spine-uplink capacity; for a dragonfly the
  // global links from the first half of the groups to the second; for ideal half the NICs.
  double bisection_Bps = 0;
  std::string bisection_cut;             // which cut gave it: "nic", "leaf-spine", "spine-core", "global", "local"
  std::vector<double> oversubscription;  // trees: down:up per tier boundary, leaves first
  std::vector<DerivedParameter> derived;
  std::vector<std::string> unused_keys;  // cluster.network keys this topology does not use
};

NetworkSummary summarize(const NetworkGraph& graph, const NetworkSpec& network);
void write_summary(std::ostream& out, const NetworkSummary& summary);

}  // namespace trainsim
