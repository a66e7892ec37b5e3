// The summary: counts per tier, bisection bandwidth by the documented cut, oversubscription.
#include <sstream>

#include "topology/graphviz.hpp"
#include "topology/summary.hpp"
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;

// 2 SUs x 32 nodes x 8 NICs at 50 GB/s: half the NICs send 512/2 x 50 GB/s = 12.8 TB/s, and the
// leaves' uplinks (16 x 32 x 50 GB/s) carry half of 25.6 TB/s: 12.8 TB/s either way.
TEST(Summary, BisectionOfANonBlockingFabric) {
  const ClusterSpec c = cluster(512, NetworkTopology::RailOptimized);
  const NetworkSummary s = summarize(build_network(c), c.network);
  EXPECT_DOUBLE_EQ(s.bisection_Bps, 12.8e12);
  EXPECT_EQ(s.bisection_cut, "nic");
  ASSERT_EQ(s.switches.size(), 2u);
  EXPECT_EQ(s.switches[0].count, 16);
  EXPECT_EQ(s.switches[1].count, 8);
  EXPECT_EQ(s.switches[1].tier, 1);
  EXPECT_EQ(s.oversubscription, std::vector<double>{1.0});
}

// 2:1 at the leaves halves the cut: 6.4 TB/s across the leaf uplinks.
TEST(Summary, BisectionHalvesAtTwoToOne) {
  ClusterSpec c = cluster(512, NetworkTopology::RailOptimized);
  c.network.oversubscription = {2};
  c.network.pod_size = 256;
  const NetworkSummary s = summarize(build_network(c), c.network);
  EXPECT_DOUBLE_EQ(s.bisection_Bps, 6.4e12);
  EXPECT_EQ(s.bisection_cut, "leaf-spine");
}

// [1, 1, 7] over 4 pods: the spine uplinks carry 1/7 of the pods' 12.8 TB/s, so the cut is
// 6.4 / 7 TB/s.
TEST(Summary, BisectionBetweenPodsAtSevenToOne) {
  ClusterSpec c = cluster(256, NetworkTopology::RailOptimized, 3, 16, 4, 4);
  c.network.oversubscription = {1, 1, 7};
  c.network.pod_size = 64;
  const NetworkSummary s = summarize(build_network(c), c.network);
  EXPECT_NEAR(s.bisection_Bps, 6.4e12 / 7, 1e-3);
  EXPECT_EQ(s.bisection_cut, "spine-core");
  EXPECT_EQ(s.oversubscription, (std::vector<double>{1, 7}));
}

// Dragonfly, radix 8, 8 groups: 4 x 4 = 16 global cables from groups 0-3 to 4-7, 800 GB/s.
TEST(Summary, DragonflyBisectionCountsGlobalLinks) {
  const ClusterSpec c = cluster(64, NetworkTopology::Dragonfly, 2, 8);
  const NetworkSummary s = summarize(build_network(c), c.network);
  EXPECT_DOUBLE_EQ(s.bisection_Bps, 16 * test::kPortBps);
  EXPECT_EQ(s.bisection_cut, "global");
  EXPECT_EQ(s.unused_keys, (std::vector<std::string>{"tiers", "oversubscription"}));
}

TEST(Summary, FaultsShowInCountsAndCut) {
  const ClusterSpec c = cluster(64, NetworkTopology::Ideal);
  NetworkGraph g = build_network(c);
  g.set_nic_down(0, 0);
  g.set_link_degraded("node1.nic0-xbar", 0.5);
  const NetworkSummary s = summarize(g, c.network);
  EXPECT_DOUBLE_EQ(s.bisection_Bps, (62 + 0.5) * test::kPortBps / 2);
  for (const auto& l : s.links)
    if (l.kind == LinkKind::Access) {
      EXPECT_EQ(l.down, 2);
      EXPECT_EQ(l.degraded, 2);
    }
}

TEST(Summary, TextAndDot) {
  const ClusterSpec c = cluster(16, NetworkTopology::RailOptimized);
  NetworkGraph g = build_network(c);
  std::ostringstream text;
  write_summary(text, summarize(g, c.network));
  EXPECT_NE(text.str().find("rail-optimized, 2 tiers, switch radix 64"), std::string::npos) << text.str();
  EXPECT_NE(text.str().find("tier 0: 8 leaf; tier 1: 1 spine; total 9"), std::string::npos) << text.str();
  g.set_link_down("leaf0-spine0");
  std::ostringstream dot;
  write_dot(dot, g);
  EXPECT_EQ(dot.str().rfind("graph \"rail-optimized\" {", 0), 0u);
  EXPECT_NE(dot.str().find("\"leaf0\" -- \"spine0\" [label=\"100\", style=dashed, color=red];"), std::string::npos)
      << dot.str();
}

}  // namespace
}  // namespace trainsim
