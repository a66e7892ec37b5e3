// Fat-tree / spine-leaf that is not rail-optimized: single ToR and dual ToR (DCN+ style).
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;
using test::count_links;
using test::kPortBps;

// Radix 64 at 1:1: 32 downlinks take 4 hosts of 8 NICs; 16 hosts need 4 ToRs, whose 4 x 32
// uplinks fill 2 spines (16 cables from each ToR to each spine).
TEST(FatTree, SingleTorPutsANodesNicsOnOneSwitch) {
  const NetworkGraph g = build_network(cluster(128, NetworkTopology::FatTree));
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 4);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 2);
  EXPECT_EQ(test::derived(g, "hosts_per_tor"), 4);
  EXPECT_EQ(count_links(g, LinkKind::Access), 2 * 128);
  EXPECT_EQ(count_links(g, LinkKind::LeafSpine), 2 * 4 * 2);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("leaf3>spine1")).capacity_Bps, 16 * kPortBps);
  for (int k = 0; k < 8; ++k) EXPECT_TRUE(g.link_between(g.nic(5, k), g.switch_node(SwitchRole::Leaf, 1)));
}

// Dual ToR: each NIC's two 25 GB/s ports go to the two ToRs of a pair; a host takes 8 half-rate
// ports (4 ports' worth) per ToR, so a pair serves 8 hosts: 16 hosts, 2 pairs, 4 ToRs.
TEST(FatTree, DualTorSplitsEachNicOverAPair) {
  ClusterSpec c = cluster(128, NetworkTopology::FatTree);
  c.network.dual_tor = true;
  const NetworkGraph g = build_network(c);
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 4);
  EXPECT_EQ(test::derived(g, "hosts_per_tor"), 8);
  EXPECT_EQ(count_links(g, LinkKind::Access), 2 * 2 * 128);
  const LinkId a = g.link_by_name("node9.nic2>leaf2"), b = g.link_by_name("node9.nic2>leaf3");
  EXPECT_DOUBLE_EQ(g.link(a).capacity_Bps, kPortBps / 2);
  EXPECT_DOUBLE_EQ(g.link(b).capacity_Bps, kPortBps / 2);
}

TEST(FatTree, OneTierIsOneSwitch) {
  const NetworkGraph g = build_network(cluster(64, NetworkTopology::FatTree, 1));
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 1);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 0);
  // 9 hosts of 8 NICs do not fit 64 ports.
  const auto e = test::build_error(cluster(72, NetworkTopology::FatTree, 1));
  EXPECT_EQ(e.key, "cluster.network.tiers");
  ClusterSpec c = cluster(64, NetworkTopology::FatTree, 1);
  c.network.oversubscription = {2};
  EXPECT_EQ(test::build_error(c).key, "cluster.network.oversubscription");
}

TEST(FatTree, RadixTooSmallForOneHost) {
  // A radix-8 ToR at 1:1 has 4 downlinks: fewer than one host's 8 NICs.
  const auto e = test::build_error(cluster(64, NetworkTopology::FatTree, 2, 8));
  EXPECT_EQ(e.key, "cluster.network.switch_radix");
  EXPECT_NE(e.what.find("too few downlinks for one host"), std::string::npos) << e.what;
}

}  // namespace
}  // namespace trainsim
