// Alibaba HPN (SIGCOMM'24): rail-optimized segments where each NIC has two ports at half its rate,
// port 0 to a plane-0 ToR and port 1 to a plane-1 ToR of its rail (dual-ToR); above the ToRs two
// planes of aggregation (and core) that never interconnect, so a flow stays in the plane of the
// port it leaves by. A ToR serves twice as many hosts as a single-ported rail leaf, hence large
// segments: radix 128 at 1:1 gives the paper's 128 hosts (1,024 GPUs) per segment.
#include "topology/clos_fabric.hpp"
#include "topology/generators.hpp"
#include "topology/leaf_groups.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_hpn(const ClusterSpec& c) {
  const NetworkSpec& net = c.network;
  check_rails(c, "hpn");
  if (net.tiers < 2)
    cluster_error("network.tiers", "hpn needs 2 or 3 tiers: its dual planes are the aggregation tier above the ToRs");
  const int rails = c.nics_per_node, nodes = c.num_nodes();
  // One half-rate port per host on each ToR: two hosts per downlink port.
  const int max_hosts = 2 * down_port_limit(net.switch_radix, effective_taper(net)[0]);
  const int hosts = hosts_per_leaf_group(c, max_hosts, "segment", "one half-rate port per host on each ToR");
  const int segments = ceil_div(nodes, hosts);

  ClosShape shape;
  shape.planes = 2;
  shape.leaves_per_plane = segments * rails;
  shape.leaves_per_group = rails;
  shape.nodes_per_group = hosts;
  shape.leaf_down_ports = hosts / 2.0;
  shape.group_name = "segment";
  const ClosPlan plan = plan_clos(c, shape);

  NetworkGraphBuilder b(c);
  const NodeId first_leaf = b.add_switches(SwitchRole::Leaf, 0, 2 * shape.leaves_per_plane);
  for (int n = 0; n < nodes; ++n)
    for (int k = 0; k < rails; ++k)
      for (int plane = 0; plane < 2; ++plane)
        b.add_cable(b.nic(n, k), first_leaf + plane * shape.leaves_per_plane + (n / hosts) * rails + k,
                    LinkKind::Access, b.port_Bps() / 2);
  b.add_derived("rails", rails);
  b.add_derived("hosts_per_segment", hosts);
  b.add_derived("segments", segments);
  add_upper_tiers(b, first_leaf, shape, plan);
  return std::move(b).finish();
}

}  // namespace trainsim::topology_detail
