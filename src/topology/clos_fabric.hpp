#pragma once
// The tiers above the leaves, shared by the tree generators (rail-optimized, fat-tree, hpn): how
// many spines per pod, how many pods, how many cores, and the capacity of each leaf-spine and
// spine-core cable, from the radix and the oversubscription (docs/topologies.md, "Clos tiers").
//
// Ports are counted at the NIC line rate (cluster.nic_gbps). Parallel cables between the same two
// switches are one link of their summed capacity (a trunk).
#include <string>
#include <vector>

#include "hardware/cluster_spec.hpp"
#include "topology/graph_builder.hpp"

namespace trainsim::topology_detail {

// What the generator decided about the leaves.
struct ClosShape {
  int planes = 1;  // hpn: 2 independent planes above the ToRs
  int leaves_per_plane = 0;
  int leaves_per_group = 1;    // leaves that must share a pod: one SU's rail leaves, a ToR pair
  int nodes_per_group = 1;     // hosts under one such group
  double leaf_down_ports = 0;  // downlink capacity a leaf is built for, in ports
  std::string group_name;      // "scalable unit", "ToR", ... for messages
};

struct ClosPlan {
  int tiers = 2;
  std::vector<double> taper;  // effective down:up ratio per boundary: leaf->spine, spine->core
  int leaf_up_ports = 0;
  int leaves_per_pod = 0, pods = 1, spines_per_pod = 0;  // per plane
  int spine_down_ports = 0, spine_up_ports = 0, cores_per_group = 0;
  double leaf_trunk_Bps = 0;   // one leaf to one spine of its pod
  double spine_trunk_Bps = 0;  // spine j of a pod to one core of group j
};

// The oversubscription list as ratios per tier boundary (tiers - 1 values): values below the top
// tier are the down:up ratio of that tier's switches; the top tier has no uplinks, so its value
// narrows the links into it and multiplies the ratio just below (spec: [1, 1, 7] on 3 tiers =
// full bisection in a pod, 1:7 between pods).
std::vector<double> effective_taper(const NetworkSpec& network);

// The most downlinks D a switch of `radix` ports can have at down:up ratio `taper`:
// D + ceil(D / taper) <= radix.
int down_port_limit(int radix, double taper);

ClosPlan plan_clos(const ClusterSpec& cluster, const ClosShape& shape);

// Adds spines (and cores for 3 tiers) and their cables above leaves first_leaf .. (planes x
// leaves_per_plane, plane-major); records the derived parameters.
void add_upper_tiers(NetworkGraphBuilder& b, NodeId first_leaf, const ClosShape& shape, const ClosPlan& plan);

}  // namespace trainsim::topology_detail
