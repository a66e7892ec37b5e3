// Dragonfly: parameters derived from the radix, local all-to-all, global links between groups.
#include <set>

#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;
using test::count_links;
using test::derived;

// Radix 64: 16 NIC ports, 32 routers per group, 17 global ports per router (Frontier's Rosetta).
TEST(Dragonfly, Radix64DerivesFrontiersShape) {
  const NetworkGraph g = build_network(cluster(2048, NetworkTopology::Dragonfly));
  EXPECT_EQ(derived(g, "nic_ports_per_router"), 16);
  EXPECT_EQ(derived(g, "routers_per_group"), 32);
  EXPECT_EQ(derived(g, "global_ports_per_router"), 17);
  EXPECT_EQ(derived(g, "groups"), 4);  // 2,048 NICs / 16 = 128 routers
  EXPECT_EQ(g.role_count(SwitchRole::Router), 128);
  EXPECT_EQ(derived(g, "global_cables_per_group_pair"), 181);  // floor(32 * 17 / 3)
  // 6 group pairs x 181 cables, each direction.
  EXPECT_DOUBLE_EQ(test::total_capacity(g, LinkKind::DragonflyGlobal), 2 * 6 * 181 * test::kPortBps);
  // The 181 cables from group 0 to group 1 spread over all 32 routers of group 0, so minimal
  // routes between the two groups do not funnel through one router.
  std::set<NodeId> routers;
  for (const Link& l : g.links())
    if (l.kind == LinkKind::DragonflyGlobal && g.node(l.from).pod == 0 && g.node(l.to).pod == 1) routers.insert(l.from);
  EXPECT_EQ(routers.size(), 32u);
}

// Radix 8: 2 NIC ports, 4 routers per group, 3 global ports each (12 per group); 64 NICs need 32
// routers = 8 groups, one global cable per pair of groups: 28 cables.
TEST(Dragonfly, SmallRadixCountsByHand) {
  const NetworkGraph g = build_network(cluster(64, NetworkTopology::Dragonfly, 2, 8));
  EXPECT_EQ(derived(g, "groups"), 8);
  EXPECT_EQ(count_links(g, LinkKind::DragonflyLocal), 2 * 8 * 6);
  EXPECT_EQ(count_links(g, LinkKind::DragonflyGlobal), 2 * 28);
  // No router uses more ports than it has.
  for (int r = 0; r < g.role_count(SwitchRole::Router); ++r) {
    int ports = 0;
    for (LinkId l : g.out_links(g.switch_node(SwitchRole::Router, r)))
      ports += static_cast<int>(g.link(l).capacity_Bps / test::kPortBps + 0.5);
    EXPECT_LE(ports, 8) << "router" << r;
  }
}

TEST(Dragonfly, PodSizeSetsTheGroupAndErrorsNameKeys) {
  ClusterSpec c = cluster(2048, NetworkTopology::Dragonfly);
  c.network.pod_size = 256;  // 256 NICs = 16 routers per group
  EXPECT_EQ(derived(build_network(c), "routers_per_group"), 16);
  c.network.pod_size = 8;  // 8 NICs: half a router
  EXPECT_EQ(test::build_error(c).key, "cluster.network.pod_size");
  // Radix 4: 1 NIC port, 2 routers per group, 2 global ports: at most 5 groups, not 32.
  EXPECT_EQ(test::build_error(cluster(64, NetworkTopology::Dragonfly, 2, 4)).key, "cluster.network.switch_radix");
}

TEST(Ideal, OneCrossbar) {
  const NetworkGraph g = build_network(cluster(64, NetworkTopology::Ideal));
  EXPECT_EQ(g.switch_count(), 1);
  EXPECT_EQ(g.role_count(SwitchRole::Crossbar), 1);
  EXPECT_EQ(count_links(g, LinkKind::Access), 2 * 64);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("xbar>node7.nic7")).capacity_Bps, test::kPortBps);
}

}  // namespace
}  // namespace trainsim
