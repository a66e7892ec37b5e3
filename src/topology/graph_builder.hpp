#pragma once
// Assembles a NetworkGraph: the generators add nodes in id order (GPUs, NVSwitches, NICs, then
// switches role by role so that each role is one contiguous id range) and cables as link pairs;
// finish() builds the CSR adjacency.
#include <string>

#include "hardware/cluster_spec.hpp"
#include "topology/network_graph.hpp"

namespace trainsim {

class NetworkGraphBuilder {
 public:
  // Adds the GPUs, scale-up switches, NICs and their scale-up and PCIe links (common to every
  // generator; graph_builder.cpp).
  explicit NetworkGraphBuilder(const ClusterSpec& cluster);

  // Switches of one role, `count` of them, all in `tier`; returns the id of the first. Roles
  // must be added in one go each.
  NodeId add_switches(SwitchRole role, int tier, int count);
  void set_switch_place(NodeId n, int pod, int plane);
  // One cable: from->to gets the even id, to->from the odd one. Latency: link latency, plus the
  // switch latency on a direction that enters a switch.
  LinkId add_cable(NodeId a, NodeId b, LinkKind kind, double capacity_Bps);
  // The same with the cable's own latency instead of cluster.network.link_latency_ns (a SimAI file's delay).
  LinkId add_cable(NodeId a, NodeId b, LinkKind kind, double capacity_Bps, double cable_latency_ns);
  // The node's id in the file the fabric was read from (trainsim topo --json shows it).
  void set_source_id(NodeId n, int id);
  void add_derived(std::string name, double value);

  NodeId nic(int node, int k) const { return graph_.nic(node, k); }
  const ClusterSpec& cluster() const { return cluster_; }
  double port_Bps() const { return port_Bps_; }  // the NIC line rate: the unit of a switch port
  int node_count() const { return graph_.node_count(); }

  NetworkGraph finish() &&;

 private:
  void add_endpoints();
  const ClusterSpec& cluster_;
  NetworkGraph graph_;
  double port_Bps_ = 0;
  int last_role_ = 0;
};

}  // namespace trainsim
