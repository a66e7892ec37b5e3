// Routing: shortest paths through switches, ECMP by a seeded hash, adaptive least-loaded paths,
// and rerouting around faults.
#include <set>

#include "topology/router.hpp"
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;

// Radix 8, 2 GPUs and 2 NICs (rails) per node: SUs of 4 nodes with 2 rail leaves each; 8 leaves
// (4 SUs, 16 nodes) with 4 uplinks each fill 4 spines, one cable from every leaf to every spine.
ClusterSpec small_rail_fabric() { return cluster(32, NetworkTopology::RailOptimized, 2, 8, 2, 2); }

// The path is a chain from src to dst over up links, and as long as the router says.
void expect_valid_path(const NetworkGraph& g, Router& r, NicAddress src, NicAddress dst,
                       const std::vector<LinkId>& path) {
  ASSERT_FALSE(path.empty());
  EXPECT_EQ(g.link(path.front()).from, g.nic(src.node, src.nic));
  EXPECT_EQ(g.link(path.back()).to, g.nic(dst.node, dst.nic));
  for (std::size_t i = 0; i < path.size(); ++i) {
    EXPECT_TRUE(g.link(path[i]).up);
    if (i > 0) {
      EXPECT_EQ(g.link(path[i - 1]).to, g.link(path[i]).from);
      EXPECT_TRUE(g.is_switch(g.link(path[i]).from));  // only switches are transit
    }
  }
  EXPECT_EQ(static_cast<int>(path.size()), r.hop_count(src, dst));
}

TEST(Router, EveryNicReachesEveryOtherNic) {
  for (NetworkTopology t : {NetworkTopology::RailOptimized, NetworkTopology::FatTree, NetworkTopology::HPN,
                            NetworkTopology::Dragonfly, NetworkTopology::Ideal}) {
    ClusterSpec c = small_rail_fabric();
    c.network.topology = t;
    const NetworkGraph g = build_network(c);
    Router r(g, 1);
    for (int a = 0; a < g.nic_count(); ++a)
      for (int b = 0; b < g.nic_count(); ++b) {
        const NicAddress src{a / 2, a % 2}, dst{b / 2, b % 2};
        const auto path = r.ecmp_path(src, dst, static_cast<std::uint64_t>(a * 1000 + b));
        if (a == b) {
          EXPECT_TRUE(path.empty());
          continue;
        }
        expect_valid_path(g, r, src, dst, path);
      }
  }
}

// Same-rail NICs of one SU meet at their rail leaf; other pairs cross a spine.
TEST(Router, RailAlignedTrafficStaysUnderItsLeaf) {
  const NetworkGraph g = build_network(small_rail_fabric());
  Router r(g, 0);
  const auto same_rail = r.ecmp_path({0, 1}, {3, 1}, 7);
  ASSERT_EQ(same_rail.size(), 2u);
  EXPECT_EQ(g.link(same_rail[0]).to, g.switch_node(SwitchRole::Leaf, 1));
  EXPECT_EQ(r.hop_count({0, 1}, {4, 1}), 4);  // next SU
  EXPECT_EQ(r.hop_count({0, 0}, {1, 1}), 4);  // cross-rail in one SU
}

TEST(Router, EcmpIsDeterministicAndSpreadsFlows) {
  const NetworkGraph g = build_network(small_rail_fabric());
  Router a(g, 42), b(g, 42), other(g, 43);
  std::set<NodeId> spines;
  int differ = 0;
  for (std::uint64_t key = 0; key < 64; ++key) {
    const auto p = a.ecmp_path({0, 0}, {8, 0}, key);
    EXPECT_EQ(p, b.ecmp_path({0, 0}, {8, 0}, key));  // same seed, same key: same path
    EXPECT_EQ(p, a.ecmp_path({0, 0}, {8, 0}, key));
    ASSERT_EQ(p.size(), 4u);
    spines.insert(g.link(p[1]).to);
    differ += p != other.ecmp_path({0, 0}, {8, 0}, key) ? 1 : 0;
  }
  EXPECT_EQ(spines.size(), 4u);  // 64 flows use all 4 spines
  EXPECT_GT(differ, 16);         // another seed moves many flows (3/4 expected)
}

TEST(Router, AdaptivePicksTheLeastLoadedPath) {
  const NetworkGraph g = build_network(small_rail_fabric());
  Router r(g, 0);
  std::vector<double> load(static_cast<std::size_t>(g.link_count()), 0.0);
  const NodeId leaf0 = g.switch_node(SwitchRole::Leaf, 0);
  // Load leaf0's uplinks to spines 0, 1, 3; spine 2 is free.
  for (int s : {0, 1, 3})
    load[static_cast<std::size_t>(*g.link_between(leaf0, g.switch_node(SwitchRole::Spine, s)))] = 5e9;
  for (std::uint64_t key = 0; key < 8; ++key) {
    const auto p = r.adaptive_path({0, 0}, {8, 0}, load, key);
    ASSERT_EQ(p.size(), 4u);
    EXPECT_EQ(g.link(p[1]).to, g.switch_node(SwitchRole::Spine, 2));
  }
  // A loaded downlink counts too: the bottleneck decides (spine 2 -> leaf 4 now the worst).
  const NodeId leaf4 = g.switch_node(SwitchRole::Leaf, 4);
  load[static_cast<std::size_t>(*g.link_between(g.switch_node(SwitchRole::Spine, 2), leaf4))] = 9e9;
  const auto p = r.adaptive_path({0, 0}, {8, 0}, load, 0);
  EXPECT_NE(g.link(p[1]).to, g.switch_node(SwitchRole::Spine, 2));
  EXPECT_THROW(r.adaptive_path({0, 0}, {8, 0}, std::vector<double>(3, 0.0), 0), Error);
}

TEST(Router, LinkDownReroutes) {
  NetworkGraph g = build_network(small_rail_fabric());
  Router r(g, 0);
  const NodeId spine0 = g.switch_node(SwitchRole::Spine, 0);
  g.set_link_down("leaf0-spine0");
  for (std::uint64_t key = 0; key < 32; ++key) {
    const auto p = r.ecmp_path({0, 0}, {8, 0}, key);
    EXPECT_NE(g.link(p[1]).to, spine0);
  }
  // One direction only: leaf4>spine0 down leaves spine0>leaf4 up.
  g.clear_faults();
  g.set_link_down("leaf4>spine0");
  EXPECT_FALSE(g.link(g.link_by_name("leaf4>spine0")).up);
  EXPECT_TRUE(g.link(g.link_by_name("spine0>leaf4")).up);
  // Every uplink of leaf 0 down: no path out, and the error names both NICs.
  g.clear_faults();
  for (int s = 0; s < 4; ++s) g.set_link_down("leaf0>spine" + std::to_string(s));
  try {
    r.ecmp_path({0, 0}, {8, 0}, 1);
    FAIL() << "expected no path";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("node0.nic0"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("node8.nic0"), std::string::npos) << e.what();
  }
  EXPECT_EQ(r.ecmp_path({0, 0}, {1, 0}, 1).size(), 2u);  // still fine under the leaf
}

TEST(Router, NicDownAndDegradedLinks) {
  NetworkGraph g = build_network(small_rail_fabric());
  Router r(g, 0);
  g.set_nic_down(3, 1);
  EXPECT_THROW(r.ecmp_path({0, 1}, {3, 1}, 0), Error);
  EXPECT_THROW(r.ecmp_path({3, 1}, {0, 1}, 0), Error);
  EXPECT_EQ(r.hop_count({0, 1}, {3, 1}), -1);
  EXPECT_EQ(r.ecmp_path({0, 1}, {2, 1}, 0).size(), 2u);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("node3.nic1>leaf1")).capacity_Bps, 0.0);
  // Degraded: capacity scales, routing does not change.
  const auto before = r.ecmp_path({0, 0}, {8, 0}, 5);
  g.set_link_degraded("leaf0-spine1", 0.25);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("spine1>leaf0")).capacity_Bps, 0.25 * test::kPortBps);
  EXPECT_EQ(r.ecmp_path({0, 0}, {8, 0}, 5), before);
  EXPECT_THROW(g.set_link_degraded("leaf0-spine1", 1.5), Error);
  EXPECT_THROW(g.set_link_degraded("leaf0-spine1", 0.0), Error);
}

// HPN: a flow leaves by one port and stays in that port's plane.
TEST(Router, HpnFlowsStayInOnePlane) {
  const NetworkGraph g = build_network(cluster(2048, NetworkTopology::HPN));
  Router r(g, 3);
  std::set<int> planes;
  for (std::uint64_t key = 0; key < 32; ++key) {
    const auto p = r.ecmp_path({0, 0}, {200, 5}, key);
    const int plane = g.node(g.link(p[0]).to).plane;
    planes.insert(plane);
    for (std::size_t i = 0; i + 1 < p.size(); ++i) EXPECT_EQ(g.node(g.link(p[i]).to).plane, plane);
  }
  EXPECT_EQ(planes.size(), 2u);  // both ports carry flows
}

// Dragonfly minimal routes: at most local, global, local between routers.
TEST(Router, DragonflyMinimalRoutes) {
  const NetworkGraph g = build_network(cluster(64, NetworkTopology::Dragonfly, 2, 8));
  Router r(g, 0);
  for (int b = 1; b < g.nic_count(); ++b) EXPECT_LE(r.hop_count({0, 0}, {b / 8, b % 8}), 5);
}

}  // namespace
}  // namespace trainsim
