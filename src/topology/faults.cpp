// Fault state on the graph (docs/topologies.md, "Faults"). A down link keeps its id and nominal
// capacity but has capacity 0 and up == false, so per-link vectors keep their meaning; routers see
// version() move and recompute their distances.
#include <cmath>

#include "core/error.hpp"
#include "topology/network_graph.hpp"

namespace trainsim {

void NetworkGraph::set_link_state(LinkId l, bool up, double factor) {
  Link& link = links_[static_cast<std::size_t>(l)];
  link.up = up;
  link.capacity_Bps = up ? link.nominal_capacity_Bps * factor : 0.0;
  ++version_;
}

std::vector<LinkId> NetworkGraph::set_link_down(std::string_view name) {
  const std::vector<LinkId> ids = links_by_name(name);
  for (LinkId l : ids) set_link_state(l, false);
  return ids;
}

std::vector<LinkId> NetworkGraph::set_link_degraded(std::string_view name, double factor) {
  // A degraded link still carries traffic (factor > 0); a dead one is link_down. Faster than
  // built (factor > 1) is not a fault.
  if (!(factor > 0.0 && factor <= 1.0) || !std::isfinite(factor))
    throw Error("link_degraded factor " + std::to_string(factor) + " for '" + std::string(name) +
                "' must be in (0, 1]: the fraction of its capacity left (use link_down for a dead link)");
  const std::vector<LinkId> ids = links_by_name(name);
  for (LinkId l : ids)
    if (links_[static_cast<std::size_t>(l)].up) set_link_state(l, true, factor);
  return ids;
}

std::vector<LinkId> NetworkGraph::set_nic_down(int node, int k) {
  const NodeId n = nic(node, k);
  std::vector<LinkId> ids;
  for (LinkId l : out_links(n)) {
    ids.push_back(l);
    ids.push_back(reverse(l));
  }
  for (LinkId l : ids) set_link_state(l, false);
  return ids;
}

std::vector<LinkId> NetworkGraph::set_node_down(int node) {
  std::vector<LinkId> ids;
  for (int k = 0; k < nics_per_node_; ++k)
    for (LinkId l : set_nic_down(node, k)) ids.push_back(l);
  for (int i = 0; i < gpus_per_node_; ++i) {
    const LinkId l = scale_up_link(node * gpus_per_node_ + i);
    set_link_state(l, false);
    set_link_state(reverse(l), false);
    ids.push_back(l);
    ids.push_back(reverse(l));
  }
  return ids;
}

void NetworkGraph::clear_faults() {
  for (Link& l : links_) {
    l.up = true;
    l.capacity_Bps = l.nominal_capacity_Bps;
  }
  ++version_;
}

}  // namespace trainsim
