// Rail-optimized fat-tree (NVIDIA DGX SuperPOD): nodes are grouped into scalable units (SUs); every
// SU has one leaf per rail and NIC k of every node in the SU goes to rail-leaf k, so traffic
// between same-rail NICs of one SU turns around at its leaf. Spines join all leaves (2 tiers) or
// the leaves of a pod (3 tiers, cores join the pods).
#include <algorithm>

#include "topology/clos_fabric.hpp"
#include "topology/generators.hpp"
#include "topology/leaf_groups.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_rail_optimized(const ClusterSpec& c) {
  const NetworkSpec& net = c.network;
  check_rails(c, "rail-optimized");
  if (net.tiers < 2)
    cluster_error("network.tiers",
                  "rail-optimized needs 2 or 3 tiers: with one, NICs on different rails "
                  "(NIC k and NIC j != k) could not reach each other");
  const std::vector<double> taper = effective_taper(net);
  const int rails = c.nics_per_node, nodes = c.num_nodes();
  // A rail leaf has one downlink per node of its SU.
  const int max_su_nodes = down_port_limit(net.switch_radix, taper[0]);
  const int su_nodes =
      hosts_per_leaf_group(c, max_su_nodes, "scalable unit", "one downlink per node on each rail leaf");
  const int sus = ceil_div(nodes, su_nodes);

  ClosShape shape;
  shape.leaves_per_plane = sus * rails;
  shape.leaves_per_group = rails;
  shape.nodes_per_group = su_nodes;
  shape.leaf_down_ports = su_nodes;
  shape.group_name = "scalable unit";
  const ClosPlan plan = plan_clos(c, shape);

  NetworkGraphBuilder b(c);
  const NodeId first_leaf = b.add_switches(SwitchRole::Leaf, 0, shape.leaves_per_plane);
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < rails; ++k)
      b.add_cable(b.nic(n, k), first_leaf + (n / su_nodes) * rails + k, LinkKind::Access, b.port_Bps());
  b.add_derived("rails", rails);
  b.add_derived("nodes_per_scalable_unit", su_nodes);
  b.add_derived("scalable_units", sus);
  add_upper_tiers(b, first_leaf, shape, plan);
  return std::move(b).finish();
}

}  // namespace trainsim::topology_detail
