#include "topology/clos_fabric.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/units.hpp"
#include "topology/generators.hpp"

namespace trainsim::topology_detail {

namespace {

// Ports needed for `down` downlinks at ratio `taper`; the tolerance keeps 32 / (32/7) from
// rounding up to 8.0000001 -> 9.
int up_ports_for(double down, double taper) { return std::max(1, static_cast<int>(std::ceil(down / taper - 1e-9))); }

std::string num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// The fewest cores/spines s that split `up` uplinks evenly (s divides up) while each of them
// takes at most `limit` cables from the `below` switches: below * up / s <= limit. 0 if none.
int fewest_even_split(int below, int up, int limit) {
  for (int s = 1; s <= up; ++s)
    if (up % s == 0 && static_cast<long long>(below) * (up / s) <= limit) return s;
  return 0;
}

}  // namespace

std::vector<double> effective_taper(const NetworkSpec& network) {
  const int tiers = network.tiers;
  std::vector<double> o = network.oversubscription;
  if (o.empty()) o.push_back(1.0);
  o.resize(static_cast<std::size_t>(std::max(tiers, 1)), 1.0);
  if (tiers <= 1) {
    for (double v : o)
      if (v != 1.0)
        cluster_error("network.oversubscription", "a 1-tier network has no uplinks to oversubscribe; got " + num(v) +
                                                      " (set it to 1 or add tiers)");
    return {};
  }
  std::vector<double> taper(o.begin(), o.begin() + (tiers - 1));
  taper.back() *= o[static_cast<std::size_t>(tiers - 1)];
  return taper;
}

int down_port_limit(int radix, double taper) {
  for (int d = radix - 1; d > 0; --d)
    if (d + up_ports_for(d, taper) <= radix) return d;
  return 0;
}

ClosPlan plan_clos(const ClusterSpec& cluster, const ClosShape& shape) {
  const NetworkSpec& net = cluster.network;
  const int radix = net.switch_radix;
  const int leaves = shape.leaves_per_plane;
  const std::string per_plane = shape.planes > 1 ? " per plane" : "";
  ClosPlan plan;
  plan.tiers = net.tiers;
  if (net.tiers < 1 || net.tiers > 3)
    cluster_error("network.tiers", "expected 1, 2 or 3 tiers, got " + std::to_string(net.tiers));
  plan.taper = effective_taper(net);
  plan.leaves_per_pod = leaves;
  if (net.tiers == 1) {
    if (leaves != 1)
      cluster_error("network.tiers", "with 1 tier every NIC must hang off one switch, but this cluster needs " +
                                         std::to_string(leaves) + " leaves" + per_plane + " (" + shape.group_name +
                                         "s of " + std::to_string(shape.nodes_per_group) + " nodes); use tiers: 2");
    return plan;
  }

  const double leaf_up_Bps = shape.leaf_down_ports * gbps_to_bytes_per_s(cluster.nic_gbps) / plan.taper[0];
  plan.leaf_up_ports = up_ports_for(shape.leaf_down_ports, plan.taper[0]);
  if (static_cast<int>(std::ceil(shape.leaf_down_ports)) + plan.leaf_up_ports > radix)
    cluster_error("network.switch_radix", "a leaf with " + num(shape.leaf_down_ports) + " downlinks at " +
                                              num(plan.taper[0]) + ":1 needs " + std::to_string(plan.leaf_up_ports) +
                                              " uplinks, more than its " + std::to_string(radix) + " ports allow");

  if (net.tiers == 2) {
    plan.spines_per_pod = fewest_even_split(leaves, plan.leaf_up_ports, radix);
    if (plan.spines_per_pod == 0)
      cluster_error("network.tiers",
                    "2 tiers of radix-" + std::to_string(radix) + " switches connect at most " + std::to_string(radix) +
                        " leaves" + per_plane + " (one cable from every leaf to every spine); this cluster needs " +
                        std::to_string(leaves) + " (" + std::to_string(leaves / shape.leaves_per_group) + " " +
                        shape.group_name + "s of " + std::to_string(shape.nodes_per_group) +
                        " nodes): set cluster.network.tiers: 3 or a larger switch_radix");
    plan.spine_down_ports = leaves * (plan.leaf_up_ports / plan.spines_per_pod);
    plan.leaf_trunk_Bps = leaf_up_Bps / plan.spines_per_pod;
    return plan;
  }

  // Three tiers: pods of whole groups under their own spines, cores joining the pods.
  const double spine_taper = plan.taper[1];
  const int groups = leaves / shape.leaves_per_group;
  int groups_per_pod = 0;
  if (net.pod_size) {
    const int nodes_per_pod = *net.pod_size / cluster.gpus_per_node;
    if (nodes_per_pod % shape.nodes_per_group != 0)
      cluster_error("network.pod_size", "pod_size " + std::to_string(*net.pod_size) + " GPUs (" +
                                            std::to_string(nodes_per_pod) + " nodes) is not a whole number of " +
                                            shape.group_name + "s of " + std::to_string(shape.nodes_per_group) +
                                            " nodes");
    groups_per_pod = nodes_per_pod / shape.nodes_per_group;
  } else {
    // The biggest pod: every leaf one cable to every spine, spines full at their ratio.
    groups_per_pod = down_port_limit(radix, spine_taper) / shape.leaves_per_group;
    if (groups_per_pod == 0)
      cluster_error("network.switch_radix", "a radix-" + std::to_string(radix) + " spine at " + num(spine_taper) +
                                                ":1 has fewer downlinks than the " +
                                                std::to_string(shape.leaves_per_group) + " leaves of one " +
                                                shape.group_name);
  }
  groups_per_pod = std::min(groups_per_pod, groups);
  plan.leaves_per_pod = groups_per_pod * shape.leaves_per_group;
  plan.pods = ceil_div(groups, groups_per_pod);
  const std::string pod_key = net.pod_size ? "network.pod_size" : "network.switch_radix";
  for (int s = 1; s <= plan.leaf_up_ports && plan.spines_per_pod == 0; ++s) {
    if (plan.leaf_up_ports % s != 0) continue;
    const int down = plan.leaves_per_pod * (plan.leaf_up_ports / s);
    if (down + up_ports_for(down, spine_taper) <= radix) plan.spines_per_pod = s;
  }
  if (plan.spines_per_pod == 0)
    cluster_error(pod_key, "a pod of " + std::to_string(plan.leaves_per_pod) + " leaves" + per_plane +
                               " needs spines with at least " +
                               std::to_string(plan.leaves_per_pod + up_ports_for(plan.leaves_per_pod, spine_taper)) +
                               " ports at " + num(spine_taper) + ":1; the radix is " + std::to_string(radix) +
                               " (set a smaller cluster.network.pod_size or a larger switch_radix)");
  plan.leaf_trunk_Bps = leaf_up_Bps / plan.spines_per_pod;
  plan.spine_down_ports = plan.leaves_per_pod * (plan.leaf_up_ports / plan.spines_per_pod);
  plan.spine_up_ports = up_ports_for(plan.spine_down_ports, spine_taper);
  plan.cores_per_group = fewest_even_split(plan.pods, plan.spine_up_ports, radix);
  if (plan.cores_per_group == 0)
    cluster_error(pod_key,
                  "3 tiers of radix-" + std::to_string(radix) + " switches connect at most " + std::to_string(radix) +
                      " pods (one cable from every spine to every core of its group); this cluster needs " +
                      std::to_string(plan.pods) + " pods of " +
                      std::to_string(groups_per_pod * shape.nodes_per_group * cluster.gpus_per_node) +
                      " GPUs: set a larger switch_radix, a larger pod_size, or more oversubscription at the spines");
  plan.spine_trunk_Bps = plan.leaves_per_pod * plan.leaf_trunk_Bps / spine_taper / plan.cores_per_group;
  return plan;
}

void add_upper_tiers(NetworkGraphBuilder& b, NodeId first_leaf, const ClosShape& shape, const ClosPlan& plan) {
  const int planes = shape.planes, leaves = shape.leaves_per_plane;
  for (int p = 0; p < planes; ++p)
    for (int i = 0; i < leaves; ++i) b.set_switch_place(first_leaf + p * leaves + i, i / plan.leaves_per_pod, p);
  b.add_derived("leaves", planes * leaves);
  if (plan.tiers == 1) return;

  const int spines_per_pod = plan.spines_per_pod, pods = plan.pods;
  const NodeId first_spine = b.add_switches(SwitchRole::Spine, 1, planes * pods * spines_per_pod);
  auto spine = [&](int p, int pod, int j) { return first_spine + (p * pods + pod) * spines_per_pod + j; };
  for (int p = 0; p < planes; ++p)
    for (int pod = 0; pod < pods; ++pod)
      for (int j = 0; j < spines_per_pod; ++j) b.set_switch_place(spine(p, pod, j), pod, p);
  for (int p = 0; p < planes; ++p)
    for (int i = 0; i < leaves; ++i)
      for (int j = 0; j < spines_per_pod; ++j)
        b.add_cable(first_leaf + p * leaves + i, spine(p, i / plan.leaves_per_pod, j), LinkKind::LeafSpine,
                    plan.leaf_trunk_Bps);
  b.add_derived("leaf_up_ports", plan.leaf_up_ports);
  b.add_derived("leaf_spine_cables_per_trunk", plan.leaf_up_ports / spines_per_pod);
  b.add_derived("spines_per_pod", spines_per_pod);
  b.add_derived("spine_down_ports", plan.spine_down_ports);
  if (plan.tiers == 2) return;

  b.add_derived("leaves_per_pod", plan.leaves_per_pod);
  b.add_derived("pods", pods);
  b.add_derived("spine_up_ports", plan.spine_up_ports);
  const int cores_per_group = plan.cores_per_group;
  const NodeId first_core = b.add_switches(SwitchRole::Core, 2, planes * spines_per_pod * cores_per_group);
  // Core group j joins spine j of every pod (the classic k-ary fat-tree wiring).
  for (int p = 0; p < planes; ++p)
    for (int j = 0; j < spines_per_pod; ++j)
      for (int c = 0; c < cores_per_group; ++c)
        b.set_switch_place(first_core + (p * spines_per_pod + j) * cores_per_group + c, -1, p);
  for (int p = 0; p < planes; ++p)
    for (int pod = 0; pod < pods; ++pod)
      for (int j = 0; j < spines_per_pod; ++j)
        for (int c = 0; c < cores_per_group; ++c)
          b.add_cable(spine(p, pod, j), first_core + (p * spines_per_pod + j) * cores_per_group + c,
                      LinkKind::SpineCore, plan.spine_trunk_Bps);
  b.add_derived("cores_per_group", cores_per_group);
  b.add_derived("spine_core_cables_per_trunk", plan.spine_up_ports / cores_per_group);
}

}  // namespace trainsim::topology_detail
