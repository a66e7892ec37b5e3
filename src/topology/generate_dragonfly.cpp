// Dragonfly (Kim et al., ISCA'08; HPE Slingshot on Frontier): routers in groups, every router
// linked to every other of its group (local links), groups linked all-to-all by global links.
// From the radix k: p = floor((k+1)/4) NIC ports per router, a = 2p routers per group, and the
// rest, h = k - p - (a-1), global ports per router (k = 64: p = 16, a = 32, h = 17, Frontier's
// Rosetta switch). cluster.network.pod_size, if given, sets the GPUs per group instead.
// Global cables: m = floor(a*h / (groups-1)) per pair of groups. Group i's global slot for the
// t-th cable to its peer i+r (mod groups) is s = t*(groups-1) + (r-1), on router s / h: the m
// cables of one pair of groups sit on different routers, so minimal routes between two groups
// spread over m router pairs instead of funnelling through one.
#include <algorithm>
#include <utility>
#include <vector>

#include "topology/generators.hpp"
#include "topology/graph_builder.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_dragonfly(const ClusterSpec& c) {
  const NetworkSpec& net = c.network;
  const int radix = net.switch_radix;
  const int per_router = (radix + 1) / 4;
  if (per_router < 1)
    cluster_error("network.switch_radix",
                  "a dragonfly router needs at least 3 ports (NIC, local, global); got " + std::to_string(radix));
  const int nics = c.num_nodes() * c.nics_per_node;
  const int routers_needed = ceil_div(nics, per_router);
  int group = 2 * per_router;
  if (net.pod_size) {
    const int group_nics = *net.pod_size / c.gpus_per_node * c.nics_per_node;
    if (group_nics % per_router != 0)
      cluster_error("network.pod_size", "pod_size " + std::to_string(*net.pod_size) + " GPUs (" +
                                            std::to_string(group_nics) +
                                            " NICs) per dragonfly group is not a whole number of routers of " +
                                            std::to_string(per_router) + " NICs (radix " + std::to_string(radix) + ")");
    group = group_nics / per_router;
  }
  group = std::min(group, routers_needed);
  const int groups = ceil_div(routers_needed, group);
  const int global_ports = radix - per_router - (group - 1);
  if (groups > 1 && global_ports < 1)
    cluster_error(net.pod_size ? "network.pod_size" : "network.switch_radix",
                  "a group of " + std::to_string(group) + " routers takes " + std::to_string(group - 1) +
                      " local ports per router, which with " + std::to_string(per_router) +
                      " NIC ports leaves no global port on radix " + std::to_string(radix));
  const int slots = group * std::max(global_ports, 0);
  if (groups - 1 > slots)
    cluster_error("network.switch_radix", "a dragonfly of radix " + std::to_string(radix) + " (" +
                                              std::to_string(group) + " routers per group) joins at most " +
                                              std::to_string(slots + 1) + " groups; this cluster needs " +
                                              std::to_string(groups));

  NetworkGraphBuilder b(c);
  const NodeId first = b.add_switches(SwitchRole::Router, 0, groups * group);
  for (int r = 0; r < groups * group; ++r) b.set_switch_place(first + r, r / group, 0);
  for (int i = 0; i < nics; ++i)
    b.add_cable(b.nic(i / c.nics_per_node, i % c.nics_per_node), first + i / per_router, LinkKind::Access,
                b.port_Bps());
  for (int g = 0; g < groups; ++g)
    for (int i = 0; i < group; ++i)
      for (int j = i + 1; j < group; ++j)
        b.add_cable(first + g * group + i, first + g * group + j, LinkKind::DragonflyLocal, b.port_Bps());

  if (groups > 1) {
    const int per_pair = slots / (groups - 1);
    std::vector<std::pair<NodeId, NodeId>> cables;
    cables.reserve(static_cast<std::size_t>(groups) * static_cast<std::size_t>(groups - 1) / 2 *
                   static_cast<std::size_t>(per_pair));
    for (int gi = 0; gi < groups; ++gi)
      for (int gj = gi + 1; gj < groups; ++gj) {
        const int r = gj - gi;  // gj is gi's r-th peer, gi is gj's (groups - r)-th
        for (int t = 0; t < per_pair; ++t)
          cables.emplace_back(first + gi * group + (t * (groups - 1) + r - 1) / global_ports,
                              first + gj * group + (t * (groups - 1) + groups - r - 1) / global_ports);
      }
    std::sort(cables.begin(), cables.end());
    for (std::size_t i = 0; i < cables.size();) {
      std::size_t j = i;
      while (j < cables.size() && cables[j] == cables[i]) ++j;
      b.add_cable(cables[i].first, cables[i].second, LinkKind::DragonflyGlobal,
                  static_cast<double>(j - i) * b.port_Bps());
      i = j;
    }
    b.add_derived("global_cables_per_group_pair", per_pair);
  }
  b.add_derived("nic_ports_per_router", per_router);
  b.add_derived("routers_per_group", group);
  b.add_derived("global_ports_per_router", std::max(global_ports, 0));
  b.add_derived("groups", groups);
  return std::move(b).finish();
}

}  // namespace trainsim::topology_detail
