#include "api/flow_setup.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "topology/generate.hpp"
#include "workload/group_replicas.hpp"

namespace trainsim {

namespace {

std::string fault_key(std::size_t i, const char* field) { return "faults[" + std::to_string(i) + "]." + field; }

// Links a fault touches, with the capacity they keep (0 = down).
std::vector<std::pair<LinkId, double>> fault_links(NetworkGraph& g, const Scenario& s, std::size_t i) {
  const FaultSpec& f = s.faults[i];
  std::vector<LinkId> links;
  try {
    switch (f.kind) {
      case FaultKind::LinkDown: links = g.links_by_name(f.link); break;
      case FaultKind::LinkDegraded: links = g.links_by_name(f.link); break;
      case FaultKind::NicDown:
        for (LinkId l : g.out_links(g.nic(f.node, f.nic))) links.push_back(l), links.push_back(NetworkGraph::reverse(l));
        break;
      case FaultKind::NodeDown:
        throw ScenarioError(s.file, fault_key(i, "kind"),
                            "node_down: a job does not run with a dead node (it restarts without it); model the "
                            "restart cost under training.resilience, or a degraded node with nic_down / gpu_slow");
      case FaultKind::GpuSlow: break;
    }
  } catch (const ScenarioError&) {
    throw;
  } catch (const Error& e) {
    throw ScenarioError(s.file, fault_key(i, f.kind == FaultKind::NicDown ? "nic" : "link"), e.what());
  }
  std::sort(links.begin(), links.end());
  links.erase(std::unique(links.begin(), links.end()), links.end());
  std::vector<std::pair<LinkId, double>> out;
  for (LinkId l : links) {
    const double cap = f.kind == FaultKind::LinkDegraded ? g.link(l).nominal_capacity_Bps * f.factor : 0.0;
    out.emplace_back(l, cap);
  }
  return out;
}

}  // namespace

FlowSetup make_flow_setup(const Scenario& s, const Workload& wl, const CollectiveModel& collectives, bool per_rank,
                          bool with_faults) {
  FlowSetup out;
  try {
    out.graph = std::make_unique<NetworkGraph>(build_network(s.cluster));
  } catch (const ScenarioError& e) {
    throw ScenarioError(s.file, e.key(), e.detail());
  }
  std::vector<ScheduledLinkState> timed;
  if (with_faults) {
    for (std::size_t i = 0; i < s.faults.size(); ++i) {
      const FaultSpec& f = s.faults[i];
      const auto links = fault_links(*out.graph, s, i);
      for (const auto& [l, cap] : links) {
        const bool up = cap > 0;
        const double factor = up ? f.factor : 1.0;
        if (!f.at_s)  // always: the fabric is built without it, routes avoid a dead link
          out.graph->set_link_state(l, up, factor);
        else
          timed.push_back({from_seconds(*f.at_s), l, up, factor});
      }
    }
  }
  const ParallelPlan plan(s.parallelism.tensor, s.parallelism.context, s.parallelism.data, s.parallelism.pipeline);
  std::vector<std::vector<std::vector<int>>> replicas;
  replicas.reserve(wl.groups.size());
  for (const CommGroup& g : wl.groups) replicas.push_back(per_rank ? std::vector<std::vector<int>>{g.ranks} : group_replicas(g.ranks, plan));
  FlowBackendOptions options;
  options.adaptive_routing = s.cluster.network.routing == NetworkSpec::Routing::Adaptive;
  options.seed = s.simulation.seed;
  out.backend = std::make_unique<FlowBackend>(s.cluster, collectives, *out.graph, std::move(replicas), options, std::move(timed));
  return out;
}

std::vector<double> compute_slowdown(const Scenario& s, const Workload& wl) {
  std::vector<double> slow;
  const ParallelPlan plan(s.parallelism.tensor, s.parallelism.context, s.parallelism.data, s.parallelism.pipeline);
  for (const FaultSpec& f : s.faults) {
    if (f.kind != FaultKind::GpuSlow) continue;
    if (slow.empty()) slow.assign(wl.ranks.size(), 1.0);
    const int stage = plan.coord_of(f.rank).pp;
    for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
      const int sim = wl.ranks[r].rank;
      const bool same = sim == f.rank || (wl.ranks[r].represents > 1 && plan.coord_of(sim).pp == stage);
      if (same) slow[r] = std::max(slow[r], 1.0 / f.factor);
    }
  }
  return slow;
}

}  // namespace trainsim
