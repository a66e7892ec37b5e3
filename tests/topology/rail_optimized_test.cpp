// The rail-optimized generator on cases small enough to count by hand (docs/topologies.md).
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;
using test::count_links;
using test::derived;
using test::kPortBps;

// 2 SUs of 32 DGX nodes (512 GPUs), radix 64, 1:1: a leaf has 32 downlinks (one per node of its
// SU) and 32 uplinks; 16 leaves x 32 uplinks = 512 ports fill 8 spines of 64, so each leaf has
// 4 cables (one trunk) to each of the 8 spines.
TEST(RailOptimized, TwoScalableUnitsOnRadix64) {
  const NetworkGraph g = build_network(cluster(512, NetworkTopology::RailOptimized));
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 16);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 8);
  EXPECT_EQ(g.role_count(SwitchRole::Core), 0);
  EXPECT_EQ(count_links(g, LinkKind::ScaleUp), 2 * 512);
  EXPECT_EQ(count_links(g, LinkKind::Pcie), 2 * 512);    // one NIC per GPU
  EXPECT_EQ(count_links(g, LinkKind::Access), 2 * 512);  // one cable per NIC
  EXPECT_EQ(count_links(g, LinkKind::LeafSpine), 2 * 16 * 8);
  EXPECT_EQ(derived(g, "nodes_per_scalable_unit"), 32);
  EXPECT_EQ(derived(g, "leaf_spine_cables_per_trunk"), 4);
  const LinkId up = g.link_by_name("leaf0>spine0");
  EXPECT_DOUBLE_EQ(g.link(up).capacity_Bps, 4 * kPortBps);
  // NIC k of node n sits on rail leaf k of its SU: node 33 is in SU 1.
  EXPECT_TRUE(g.link_between(g.nic(0, 3), g.switch_node(SwitchRole::Leaf, 3)));
  EXPECT_TRUE(g.link_between(g.nic(33, 3), g.switch_node(SwitchRole::Leaf, 8 + 3)));
  EXPECT_FALSE(g.link_between(g.nic(33, 3), g.switch_node(SwitchRole::Leaf, 3)));
}

// 2:1 at the leaves with the SU held at 32 nodes (pod_size = 256 GPUs): 16 uplink ports per leaf,
// so a leaf's uplink capacity is half of the 1:1 fabric's (800 instead of 1,600 GB/s).
TEST(RailOptimized, TwoToOneHalvesLeafUplinkCapacity) {
  ClusterSpec c = cluster(512, NetworkTopology::RailOptimized);
  const NetworkGraph full = build_network(c);
  c.network.oversubscription = {2.0};
  c.network.pod_size = 256;
  const NetworkGraph half = build_network(c);
  auto leaf_up = [](const NetworkGraph& g) {
    double total = 0;
    for (LinkId l : g.out_links(g.switch_node(SwitchRole::Leaf, 0)))
      if (g.link(l).kind == LinkKind::LeafSpine) total += g.link(l).capacity_Bps;
    return total;
  };
  EXPECT_DOUBLE_EQ(leaf_up(full), 32 * kPortBps);
  EXPECT_DOUBLE_EQ(leaf_up(half), 16 * kPortBps);
  EXPECT_EQ(half.role_count(SwitchRole::Leaf), 16);
  EXPECT_EQ(half.role_count(SwitchRole::Spine), 4);  // 16 leaves x 16 uplinks = 256 ports
  // Without pod_size the leaf takes as many nodes as 2:1 allows: 42 down + 21 up <= 64 ports.
  c.network.pod_size.reset();
  EXPECT_EQ(derived(build_network(c), "nodes_per_scalable_unit"), 42);
}

// Radix 16, 4 GPUs and 4 NICs per node: SUs of 8 nodes (4 rail leaves each), a spine serves 8
// leaves, so a pod is 2 SUs; 8 SUs make 4 pods. Spines per pod: 8 (one cable from each leaf);
// each spine has 8 uplinks and the 4 pods fill 2 cores per group (4 pods x 4 cables = 16 ports).
TEST(RailOptimized, ThreeTiersSmallRadix) {
  const NetworkGraph g = build_network(cluster(256, NetworkTopology::RailOptimized, 3, 16, 4, 4));
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 32);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 32);
  EXPECT_EQ(g.role_count(SwitchRole::Core), 16);
  EXPECT_EQ(derived(g, "pods"), 4);
  EXPECT_EQ(derived(g, "spines_per_pod"), 8);
  EXPECT_EQ(derived(g, "cores_per_group"), 2);
  EXPECT_EQ(count_links(g, LinkKind::LeafSpine), 2 * 32 * 8);
  EXPECT_EQ(count_links(g, LinkKind::SpineCore), 2 * 32 * 2);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("spine0>core0")).capacity_Bps, 4 * kPortBps);
  // Spine j of every pod meets core group j (cores 2j, 2j+1): spine 9 is pod 1's spine 1.
  EXPECT_TRUE(g.link_between(g.switch_node(SwitchRole::Spine, 9), g.switch_node(SwitchRole::Core, 2)));
  EXPECT_FALSE(g.link_between(g.switch_node(SwitchRole::Spine, 9), g.switch_node(SwitchRole::Core, 0)));
}

// Llama 3's [1, 1, 7] (spec example): full bisection in a pod, 1:7 between pods. With pods of 2
// SUs the spine has 8 downlinks and ceil(8/7) = 2 uplinks carrying 8/7 ports' worth.
TEST(RailOptimized, SevenToOneBetweenPods) {
  ClusterSpec c = cluster(256, NetworkTopology::RailOptimized, 3, 16, 4, 4);
  c.network.oversubscription = {1, 1, 7};
  c.network.pod_size = 64;
  const NetworkGraph g = build_network(c);
  EXPECT_EQ(derived(g, "pods"), 4);
  EXPECT_EQ(derived(g, "spine_up_ports"), 2);
  double down = 0, up = 0;
  for (LinkId l : g.out_links(g.switch_node(SwitchRole::Spine, 0)))
    (g.link(l).kind == LinkKind::SpineCore ? up : down) += g.link(l).capacity_Bps;
  EXPECT_NEAR(down / up, 7.0, 1e-12);
  // The same fabric from [1, 7]: the top tier's value narrows the links into it.
  c.network.oversubscription = {1, 7};
  EXPECT_DOUBLE_EQ(test::total_capacity(build_network(c), LinkKind::SpineCore),
                   test::total_capacity(g, LinkKind::SpineCore));
}

// Llama 3 405B example: 16,384 GPUs, radix 64, [1, 1, 7]: SUs of 32 nodes, spines with 56
// downlinks hold 7 SUs, so 64 SUs need 10 pods of 32 spines; each spine's 8 uplinks go to 2 cores.
TEST(RailOptimized, Llama3ScaleFabric) {
  ClusterSpec c = cluster(16384, NetworkTopology::RailOptimized, 3);
  c.network.oversubscription = {1, 1, 7};
  const NetworkGraph g = build_network(c);
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 512);
  EXPECT_EQ(derived(g, "leaves_per_pod"), 56);
  EXPECT_EQ(derived(g, "pods"), 10);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 320);
  EXPECT_EQ(g.role_count(SwitchRole::Core), 64);
  EXPECT_EQ(g.nic_count(), 16384);
}

TEST(RailOptimized, ImpossibleFabricsNameTheKey) {
  // 9 SUs x 8 rails = 72 leaves, more than a radix-64 spine can reach.
  auto e = test::build_error(cluster(2304, NetworkTopology::RailOptimized, 2));
  ASSERT_TRUE(e.thrown);
  EXPECT_EQ(e.key, "cluster.network.tiers");
  EXPECT_NE(e.what.find("at most 64 leaves"), std::string::npos) << e.what;
  EXPECT_NE(e.what.find("needs 72"), std::string::npos) << e.what;

  e = test::build_error(cluster(64, NetworkTopology::RailOptimized, 1));
  EXPECT_EQ(e.key, "cluster.network.tiers");
  EXPECT_NE(e.what.find("rails"), std::string::npos) << e.what;

  e = test::build_error(cluster(64, NetworkTopology::RailOptimized, 2, 64, 8, 3));
  EXPECT_EQ(e.key, "cluster.nics_per_node");

  // 3 tiers of radix 16 join at most 16 pods of 64 GPUs = 1,024 GPUs.
  e = test::build_error(cluster(2048, NetworkTopology::RailOptimized, 3, 16, 4, 4));
  EXPECT_EQ(e.key, "cluster.network.switch_radix");
  EXPECT_NE(e.what.find("at most 16 pods"), std::string::npos) << e.what;

  ClusterSpec c = cluster(512, NetworkTopology::RailOptimized, 2);
  c.network.pod_size = 512;  // 64 nodes under one set of rail leaves: 64 downlinks > 32
  e = test::build_error(c);
  EXPECT_EQ(e.key, "cluster.network.pod_size");

  c = cluster(512, NetworkTopology::RailOptimized, 3);
  c.network.pod_size = 384;  // 48 nodes: not a whole number of 32-node SUs
  e = test::build_error(c);
  EXPECT_EQ(e.key, "cluster.network.pod_size");
  EXPECT_NE(e.what.find("whole number of scalable units"), std::string::npos) << e.what;

  c = cluster(512, NetworkTopology::RailOptimized, 4);
  EXPECT_EQ(test::build_error(c).key, "cluster.network.tiers");
}

TEST(RailOptimized, SmallClustersShrinkTheFabric) {
  // Two nodes: SUs of 2, one leaf per rail with 2 uplinks, one spine.
  const NetworkGraph g = build_network(cluster(16, NetworkTopology::RailOptimized));
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 8);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 1);
  // A partial last SU keeps its full set of rail leaves: 280 nodes = 8 SUs + 24 nodes.
  const NetworkGraph partial = build_network(cluster(2240, NetworkTopology::RailOptimized, 3));
  EXPECT_EQ(partial.role_count(SwitchRole::Leaf), 9 * 8);
}

}  // namespace
}  // namespace trainsim
