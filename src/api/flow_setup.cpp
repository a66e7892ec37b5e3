#include "api/flow_setup.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "api/network_faults.hpp"
#include "core/error.hpp"
#include "network/packet/switch_buffer.hpp"
#include "topology/generate.hpp"
#include "workload/generator.hpp"
#include "workload/group_replicas.hpp"

namespace trainsim {

namespace {

std::string fault_key(std::size_t i, const char* field) { return "faults[" + std::to_string(i) + "]." + field; }

}  // namespace

// cluster.network.roce as the packet network's parameters; the rest keep packet_config.hpp's defaults.
PacketConfig packet_config(const NetworkSpec::Roce& r, double nic_gbps, std::uint64_t seed) {
  PacketConfig c;
  c.mtu_payload_bytes = r.mtu_bytes;
  c.port_buffer_bytes = static_cast<std::int64_t>(r.port_buffer_mb * 1e6);
  c.seed = seed;
  using Cc = NetworkSpec::Roce::CongestionControl;
  c.congestion_control = r.congestion_control == Cc::Dcqcn    ? CongestionControl::Dcqcn
                         : r.congestion_control == Cc::Timely ? CongestionControl::Timely
                                                              : CongestionControl::None;
  c.ecn.enabled = r.congestion_control == Cc::Dcqcn;  // marks matter only to a sender that reacts to them
  c.ecn.kmin_bytes = static_cast<std::int64_t>(r.ecn_kmin_kb * 1e3);
  c.ecn.kmax_bytes = static_cast<std::int64_t>(r.ecn_kmax_kb * 1e3);
  c.ecn.pmax = r.ecn_pmax;
  c.pfc.enabled = r.lossless;
  c.pfc.xoff_bytes = static_cast<std::int64_t>(r.pfc_xoff_kb * 1e3);
  c.pfc.xon_bytes = static_cast<std::int64_t>(r.pfc_xon_kb * 1e3);
  c.switch_buffer.size_bytes = static_cast<std::int64_t>(r.switch_buffer_mb * 1e6);
  c.switch_buffer.alpha = r.buffer_alpha;
  c.switch_buffer.headroom_bytes = r.pfc_headroom_kb ? static_cast<std::int64_t>(*r.pfc_headroom_kb * 1e3) : -1;
  c.dcqcn.additive_increase_Bps = r.dcqcn_ai_mbps.value_or(nic_gbps) * 1e6 / 8;     // auto: 0.1% of the line rate
  c.dcqcn.hyper_increase_Bps = r.dcqcn_hai_mbps.value_or(10 * nic_gbps) * 1e6 / 8;  // auto: 1%
  c.timely.additive_increase_Bps = r.timely_ai_mbps.value_or(nic_gbps) * 1e6 / 8;   // auto: 0.1% of the line rate
  c.timely.t_low = from_microseconds(r.timely_tlow_us);
  c.timely.t_high = from_microseconds(r.timely_thigh_us);
  return c;
}

FlowSetup make_flow_setup(const Scenario& s, const ClusterSpec& cluster, const CollectiveModel& collectives,
                          std::vector<std::vector<std::vector<int>>> replicas, bool with_faults,
                          std::vector<char> packet_groups) {
  FlowSetup out;
  try {
    out.graph = std::make_unique<NetworkGraph>(build_network(cluster));
  } catch (const ScenarioError& e) { throw ScenarioError(s.file, e.key(), e.detail()); }
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
  FlowBackendOptions options;
  options.adaptive_routing = cluster.network.routing == NetworkSpec::Routing::Adaptive;
  options.seed = s.simulation.seed;
  if (s.simulation.network_model == NetworkModel::Packet) {
    options.packet = packet_config(cluster.network.roce, cluster.nic_gbps, s.simulation.seed);
    if (s.simulation.packet_host_links == SimulationSpec::HostLinks::Delay)
      options.packet->host_links = HostLinkModel::Delay;
    // Spraying and adaptive routing spread each flow's packets over the equal-cost paths the ECMP hash finds for 16
    // keys (the distinct ones among them), the way a switch's per-packet hash or queue-driven choice would.
    if (cluster.network.routing != NetworkSpec::Routing::Ecmp) {
      options.packet->multipath =
          cluster.network.routing == NetworkSpec::Routing::Spray ? Multipath::Spray : Multipath::Adaptive;
      options.packet_routes = 16;
    }
    options.packet_groups = std::move(packet_groups);
    options.packet_min_bytes = s.simulation.packet_scope_min_bytes;
  }
  try {
    out.backend =
        std::make_unique<FlowBackend>(cluster, collectives, *out.graph, std::move(replicas), options, std::move(timed));
  } catch (const NoSharedPoolError& e) {
    throw ScenarioError(s.file, "cluster.network.roce.switch_buffer_mb",
                        fmt::format("{:g} MB leaves no shared buffer at switch {}: its ports' PFC headroom takes "
                                    "{:.3g} MB; give more, or a smaller pfc_headroom_kb",
                                    static_cast<double>(e.size_bytes()) / 1e6, out.graph->node_name(e.switch_id()),
                                    static_cast<double>(e.headroom_bytes()) / 1e6));
  }
  return out;
}

FlowSetup make_flow_setup(const Scenario& s, const Workload& wl, const CollectiveModel& collectives, bool per_rank,
                          bool with_faults) {
  const ParallelPlan plan = parallel_plan_of(s);
  std::vector<std::vector<std::vector<int>>> replicas;
  replicas.reserve(wl.groups.size());
  for (const CommGroup& g : wl.groups)
    replicas.push_back(per_rank ? std::vector<std::vector<int>>{g.ranks} : group_replicas(g.kind, g.ranks, plan));
  // simulation.packet_scope.groups: which communicators' calls move as packets (empty: all of them).
  std::vector<char> packet_groups;
  if (!s.simulation.packet_scope_groups.empty()) {
    const auto& scope = s.simulation.packet_scope_groups;
    for (const CommGroup& g : wl.groups)
      packet_groups.push_back(std::find(scope.begin(), scope.end(), to_string(g.kind)) != scope.end() ? 1 : 0);
  }
  return make_flow_setup(s, s.cluster, collectives, std::move(replicas), with_faults, std::move(packet_groups));
}

}  // namespace trainsim
