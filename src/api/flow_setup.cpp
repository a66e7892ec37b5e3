#include "api/flow_setup.hpp"

#include <algorithm>
#include <string>

#include "api/network_faults.hpp"
#include "core/error.hpp"
#include "topology/generate.hpp"
#include "workload/group_replicas.hpp"

namespace trainsim {

namespace {

std::string fault_key(std::size_t i, const char* field) { return "faults[" + std::to_string(i) + "]." + field; }

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
      if (f.kind == FaultKind::NodeDown)
        throw ScenarioError(s.file, fault_key(i, "kind"),
                            "node_down: a job does not run with a dead node (it restarts without it); model the "
                            "restart cost under training.resilience, or a degraded node with nic_down / gpu_slow");
      for (const FaultedLink& l : network_fault_links(*out.graph, s, i)) {
        if (!f.at_s)  // always: the fabric is built without it, routes avoid a dead link
          out.graph->set_link_state(l.link, l.up, l.factor);
        else
          timed.push_back({from_seconds(*f.at_s), l.link, l.up, l.factor});
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
