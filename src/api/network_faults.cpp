#include "api/network_faults.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace trainsim {

namespace {

void add_both(std::vector<LinkId>& out, LinkId l) {
  out.push_back(l);
  out.push_back(NetworkGraph::reverse(l));
}

}  // namespace

std::vector<FaultedLink> network_fault_links(const NetworkGraph& g, const Scenario& s, std::size_t i) {
  const FaultSpec& f = s.faults[i];
  const std::string at = "faults[" + std::to_string(i) + "].";
  std::vector<LinkId> links;
  try {
    switch (f.kind) {
      case FaultKind::LinkDown:
      case FaultKind::LinkDegraded: links = g.links_by_name(f.link); break;
      case FaultKind::NicDown:
        // The node first, so that a node the fabric lacks is reported on faults[i].node, not on .nic.
        if (f.node < 0 || f.node >= g.node_machine_count())
          throw ScenarioError(s.file, at + "node",
                              "node " + std::to_string(f.node) + " does not exist; there are " +
                                  std::to_string(g.node_machine_count()) + " (0.." +
                                  std::to_string(g.node_machine_count() - 1) + ")");
        for (LinkId l : g.out_links(g.nic(f.node, f.nic))) add_both(links, l);
        break;
      case FaultKind::NodeDown:
        for (int k = 0; k < g.nics_per_node(); ++k)
          for (LinkId l : g.out_links(g.nic(f.node, k))) add_both(links, l);
        for (int r = f.node * g.gpus_per_node(); r < (f.node + 1) * g.gpus_per_node(); ++r)
          add_both(links, g.scale_up_link(r));
        break;
      case FaultKind::GpuSlow: return {};
    }
  } catch (const ScenarioError&) { throw; } catch (const Error& e) {
    const bool named = f.kind == FaultKind::LinkDown || f.kind == FaultKind::LinkDegraded;
    throw ScenarioError(s.file, at + (named ? "link" : f.kind == FaultKind::NicDown ? "nic" : "node"), e.what());
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  std::vector<FaultedLink> out;
  out.reserve(links.size());
  const bool degraded = f.kind == FaultKind::LinkDegraded;
  for (LinkId l : links) out.push_back({l, degraded, degraded ? f.factor : 1.0});
  return out;
}

AppliedFaults apply_always_faults(NetworkGraph& g, const Scenario& s) {
  AppliedFaults out;
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    if (s.faults[i].kind == FaultKind::GpuSlow) continue;
    const auto links = network_fault_links(g, s, i);
    if (s.faults[i].at_s) {
      ++out.later;
      continue;
    }
    for (const FaultedLink& l : links) g.set_link_state(l.link, l.up, l.factor);
    ++out.applied;
  }
  return out;
}

}  // namespace trainsim
