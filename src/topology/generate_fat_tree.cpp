// Fat-tree / spine-leaf that is not rail-optimized (DCN+ style): all NICs of a node go to one ToR,
// or with cluster.network.dual_tor every NIC's two ports (half its rate each) go to the two ToRs
// of a pair. Spines and cores as in every Clos (clos_fabric.hpp).
#include <cmath>

#include "topology/clos_fabric.hpp"
#include "topology/generators.hpp"
#include "topology/leaf_groups.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_fat_tree(const ClusterSpec& c) {
  const NetworkSpec& net = c.network;
  const bool dual = net.dual_tor;
  const int nics = c.nics_per_node, nodes = c.num_nodes();
  // Each host takes all its NICs' ports on its ToR (dual: half-rate ports, so half as many ports).
  const double host_ports = dual ? nics / 2.0 : nics;
  const int down = net.tiers <= 1 ? net.switch_radix : down_port_limit(net.switch_radix, effective_taper(net)[0]);
  const int max_hosts = static_cast<int>(std::floor(down / host_ports + 1e-9));
  const std::string group = dual ? "ToR pair" : "ToR";
  const int hosts = hosts_per_leaf_group(
      c, max_hosts, group, std::to_string(nics) + (dual ? " half-rate ports" : " NIC ports") + " per host");
  const int tors = ceil_div(nodes, hosts);
  const int per_group = dual ? 2 : 1;

  ClosShape shape;
  shape.leaves_per_plane = tors * per_group;
  shape.leaves_per_group = per_group;
  shape.nodes_per_group = hosts;
  shape.leaf_down_ports = hosts * host_ports;
  shape.group_name = group;
  const ClosPlan plan = plan_clos(c, shape);

  NetworkGraphBuilder b(c);
  const NodeId first_leaf = b.add_switches(SwitchRole::Leaf, 0, shape.leaves_per_plane);
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < nics; ++k)
      for (int port = 0; port < per_group; ++port)
        b.add_cable(b.nic(n, k), first_leaf + (n / hosts) * per_group + port, LinkKind::Access,
                    b.port_Bps() / per_group);
  b.add_derived("hosts_per_tor", hosts);
  add_upper_tiers(b, first_leaf, shape, plan);
  return std::move(b).finish();
}

}  // namespace trainsim::topology_detail
