#include "topology/simai_export.hpp"

#include <cmath>

#include "core/error.hpp"

namespace trainsim {

std::string simai_gpu_type(const std::string& gpu_name) {
  std::string type = gpu_name.substr(0, gpu_name.find('-'));
  for (char& c : type)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') c = '_';  // one field of the header line
  return type.empty() ? "NONE" : type;
}

SimaiTopology simai_topology_of(const NetworkGraph& g, const ClusterSpec& c, const std::string& path) {
  const int gpus = g.gpu_count(), per_server = g.gpus_per_node();
  if (g.nics_per_node() != per_server)
    throw ScenarioError("", "cluster.nics_per_node",
                        "a SimAI topology makes every GPU its own NIC; " + std::to_string(g.nics_per_node()) +
                            " NICs per node for " + std::to_string(per_server) + " GPUs cannot be written");
  if (g.domain_size() != per_server)
    throw ScenarioError("", "cluster.scale_up.domain_size",
                        "a SimAI topology has the NVSwitches of one server per scale-up domain; domains of " +
                            std::to_string(g.domain_size()) + " GPUs on nodes of " + std::to_string(per_server) +
                            " cannot be written");
  SimaiTopology t;
  t.path = path;
  t.gpus_per_server = per_server;
  t.gpu_type = simai_gpu_type(c.gpu.name);
  const int servers = g.domain_count(), switches = g.switch_count();
  t.node_count = gpus + servers + switches;
  for (int d = 0; d < servers; ++d) t.nvswitch_ids.push_back(gpus + d);
  for (int s = 0; s < switches; ++s) t.switch_ids.push_back(gpus + servers + s);

  auto file_id = [&](NodeId n) {
    const Node& node = g.node(n);
    switch (node.kind) {
      case NodeKind::Gpu: return node.index;
      case NodeKind::NVSwitch: return gpus + node.index;
      case NodeKind::Nic: return node.index;  // NIC k of node n (index n*nics + k) is GPU n*gpus_per_node + k
      case NodeKind::Switch: break;
    }
    return gpus + servers + (n - g.first_switch());
  };
  for (LinkId l = 0; l < g.link_count(); l += 2) {
    const Link& link = g.link(l);
    if (link.kind == LinkKind::Pcie) continue;
    if (link.kind == LinkKind::DragonflyLocal || link.kind == LinkKind::DragonflyGlobal)
      throw ScenarioError("", "cluster.network.topology",
                          "a dragonfly's router-to-router links join switches of one tier; trainsim reads SimAI "
                          "topologies as trees, so it does not write them");
    SimaiLink out;
    out.src = file_id(link.from);
    out.dst = file_id(link.to);
    out.rate_bps = std::llround(link.nominal_capacity_Bps * 8);
    // The cable's own latency: the switch's forwarding latency is the reading scenario's switch_latency_ns.
    const double cable_ns = link.kind == LinkKind::ScaleUp
                                ? 0.0
                                : link.latency_ns - (g.is_switch(link.to) ? c.network.switch_latency_ns : 0.0);
    out.delay_ps = std::llround(cable_ns * 1e3);
    t.links.push_back(out);
  }
  return t;
}

}  // namespace trainsim
