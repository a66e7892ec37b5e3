#include "topology/graph_builder.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "core/units.hpp"

namespace trainsim {

namespace {

// Counting sort of link ids by an endpoint: offsets[n]..offsets[n+1] hold node n's links in id order.
void build_csr(const std::vector<Link>& links, int nodes, bool by_from, std::vector<std::int32_t>& offsets,
               std::vector<std::int32_t>& list) {
  offsets.assign(static_cast<std::size_t>(nodes) + 1, 0);
  for (const Link& l : links) ++offsets[static_cast<std::size_t>(by_from ? l.from : l.to) + 1];
  for (std::size_t i = 1; i < offsets.size(); ++i) offsets[i] += offsets[i - 1];
  list.assign(links.size(), 0);
  std::vector<std::int32_t> fill(offsets.begin(), offsets.end() - 1);
  for (std::size_t id = 0; id < links.size(); ++id) {
    const auto n = static_cast<std::size_t>(by_from ? links[id].from : links[id].to);
    list[static_cast<std::size_t>(fill[n]++)] = static_cast<std::int32_t>(id);
  }
}

}  // namespace

NetworkGraphBuilder::NetworkGraphBuilder(const ClusterSpec& cluster) : cluster_(cluster) {
  port_Bps_ = gbps_to_bytes_per_s(cluster.nic_gbps);
  graph_.topology_ = to_string(cluster.network.topology);
  add_endpoints();
}

void NetworkGraphBuilder::add_endpoints() {
  const ClusterSpec& c = cluster_;
  NetworkGraph& g = graph_;
  if (c.num_gpus <= 0 || c.gpus_per_node <= 0 || c.nics_per_node <= 0 || c.scale_up.domain_size <= 0 ||
      c.num_gpus % c.gpus_per_node != 0)
    throw ScenarioError("", "cluster.num_gpus",
                        "the cluster needs whole nodes of GPUs, NICs and a scale-up domain size");
  g.gpus_ = c.num_gpus;
  g.gpus_per_node_ = c.gpus_per_node;
  g.nics_per_node_ = c.nics_per_node;
  g.machines_ = c.num_gpus / c.gpus_per_node;
  g.domain_size_ = c.scale_up.domain_size;
  g.domains_ = (c.num_gpus + c.scale_up.domain_size - 1) / c.scale_up.domain_size;  // the last may be partial
  g.nic_Bps_ = port_Bps_;

  const auto total = static_cast<std::size_t>(g.gpus_) + static_cast<std::size_t>(g.domains_) +
                     static_cast<std::size_t>(g.machines_) * static_cast<std::size_t>(g.nics_per_node_);
  g.nodes_.reserve(total);
  for (int r = 0; r < g.gpus_; ++r) g.nodes_.push_back(Node{NodeKind::Gpu, SwitchRole::None, -1, 0, r, -1});
  g.nvswitch_base_ = static_cast<NodeId>(g.nodes_.size());
  for (int d = 0; d < g.domains_; ++d) g.nodes_.push_back(Node{NodeKind::NVSwitch, SwitchRole::None, -1, 0, d, -1});
  g.nic_base_ = static_cast<NodeId>(g.nodes_.size());
  for (int i = 0; i < g.machines_ * g.nics_per_node_; ++i)
    g.nodes_.push_back(Node{NodeKind::Nic, SwitchRole::None, -1, 0, i, -1});
  g.switch_base_ = static_cast<NodeId>(g.nodes_.size());
  std::fill(g.role_base_.begin(), g.role_base_.end(), g.switch_base_);

  // Scale-up: each GPU to its domain's switch, at the per-GPU, per-direction bandwidth.
  const double scale_up_Bps = GBps_to_bytes_per_s(c.scale_up.bandwidth_GBps);
  g.gpu_scale_up_.reserve(static_cast<std::size_t>(g.gpus_));
  for (int r = 0; r < g.gpus_; ++r)
    g.gpu_scale_up_.push_back(add_cable(g.gpu(r), g.nvswitch(r / g.domain_size_), LinkKind::ScaleUp, scale_up_Bps));

  // PCIe: GPU i of a node and NIC k share a PCIe switch when one maps onto the other
  // (NIC k is nearest GPU k*gpus/nics; with more NICs than GPUs, GPU i owns NICs i*nics/gpus..).
  const double pcie_Bps = GBps_to_bytes_per_s(c.network.pcie_GBps);
  for (int r = 0; r < g.gpus_; ++r)
    for (int k : g.local_nics(r)) add_cable(g.gpu(r), g.nic(r / g.gpus_per_node_, k), LinkKind::Pcie, pcie_Bps);
}

NodeId NetworkGraphBuilder::add_switches(SwitchRole role, int tier, int count) {
  const int r = static_cast<int>(role);
  if (r < last_role_ || (r == last_role_ && graph_.role_count_[static_cast<std::size_t>(r)] > 0))
    throw Error("internal: switch roles must be added once each, in order");
  last_role_ = r;
  const auto first = static_cast<NodeId>(graph_.nodes_.size());
  graph_.role_base_[static_cast<std::size_t>(r)] = first;
  // Later roles start after this one (a role never added keeps an empty range at the end).
  for (std::size_t later = static_cast<std::size_t>(r) + 1; later < graph_.role_base_.size(); ++later)
    graph_.role_base_[later] = first + count;
  graph_.role_count_[static_cast<std::size_t>(r)] = count;
  for (int i = 0; i < count; ++i)
    graph_.nodes_.push_back(Node{NodeKind::Switch, role, static_cast<std::int8_t>(tier), 0, i, -1});
  return first;
}

void NetworkGraphBuilder::set_switch_place(NodeId n, int pod, int plane) {
  Node& node = graph_.nodes_[static_cast<std::size_t>(n)];
  node.pod = pod;
  node.plane = static_cast<std::int8_t>(plane);
}

LinkId NetworkGraphBuilder::add_cable(NodeId a, NodeId b, LinkKind kind, double capacity_Bps) {
  return add_cable(a, b, kind, capacity_Bps, cluster_.network.link_latency_ns);
}

LinkId NetworkGraphBuilder::add_cable(NodeId a, NodeId b, LinkKind kind, double capacity_Bps, double cable_latency_ns) {
  const NetworkSpec& net = cluster_.network;
  // Scale-up and PCIe hops are priced by the collective model (docs/topologies.md), not here.
  const bool wire = kind != LinkKind::ScaleUp && kind != LinkKind::Pcie;
  const double base = wire ? cable_latency_ns : 0.0;
  auto latency_into = [&](NodeId to) {
    return base +
           (wire && graph_.nodes_[static_cast<std::size_t>(to)].kind == NodeKind::Switch ? net.switch_latency_ns : 0.0);
  };
  const auto id = static_cast<LinkId>(graph_.links_.size());
  graph_.links_.push_back(Link{a, b, kind, true, capacity_Bps, capacity_Bps, latency_into(b)});
  graph_.links_.push_back(Link{b, a, kind, true, capacity_Bps, capacity_Bps, latency_into(a)});
  return id;
}

void NetworkGraphBuilder::set_source_id(NodeId n, int id) {
  if (graph_.source_ids_.empty()) graph_.source_ids_.assign(graph_.nodes_.size(), -1);
  graph_.source_ids_.resize(graph_.nodes_.size(), -1);
  graph_.source_ids_[static_cast<std::size_t>(n)] = id;
}

void NetworkGraphBuilder::add_derived(std::string name, double value) {
  graph_.derived_.push_back(DerivedParameter{std::move(name), value});
}

NetworkGraph NetworkGraphBuilder::finish() && {
  if (!graph_.source_ids_.empty()) graph_.source_ids_.resize(graph_.nodes_.size(), -1);
  build_csr(graph_.links_, graph_.node_count(), true, graph_.out_offsets_, graph_.out_list_);
  build_csr(graph_.links_, graph_.node_count(), false, graph_.in_offsets_, graph_.in_list_);
  return std::move(graph_);
}

}  // namespace trainsim
