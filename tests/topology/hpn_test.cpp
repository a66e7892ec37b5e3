// Alibaba HPN: dual-ToR rail segments and two aggregation planes that never meet.
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;
using test::kPortBps;

// Radix 64 at 1:1: a ToR has 32 ports' worth of downlinks and each host puts one half-rate port
// on it, so a segment is 64 hosts (512 GPUs); 2 segments x 8 rails x 2 planes = 32 ToRs. Per
// plane 16 ToRs x 32 uplinks fill 8 aggregation switches.
TEST(Hpn, SegmentsPlanesAndHalfRatePorts) {
  const NetworkGraph g = build_network(cluster(1024, NetworkTopology::HPN));
  EXPECT_EQ(test::derived(g, "hosts_per_segment"), 64);
  EXPECT_EQ(g.role_count(SwitchRole::Leaf), 32);
  EXPECT_EQ(g.role_count(SwitchRole::Spine), 16);
  // NIC 3 of node 70 (segment 1): port 0 on plane-0 ToR 8+3, port 1 on plane-1 ToR 16+8+3.
  const LinkId p0 = g.link_by_name("node70.nic3>leaf11"), p1 = g.link_by_name("node70.nic3>leaf27");
  EXPECT_DOUBLE_EQ(g.link(p0).capacity_Bps, kPortBps / 2);
  EXPECT_DOUBLE_EQ(g.link(p1).capacity_Bps, kPortBps / 2);
  EXPECT_EQ(g.node(g.link(p0).to).plane, 0);
  EXPECT_EQ(g.node(g.link(p1).to).plane, 1);
}

TEST(Hpn, PlanesNeverInterconnect) {
  const NetworkGraph g = build_network(cluster(2048, NetworkTopology::HPN, 3));
  int switch_links = 0;
  for (const Link& l : g.links()) {
    if (!g.is_switch(l.from) || !g.is_switch(l.to)) continue;
    ++switch_links;
    EXPECT_EQ(g.node(l.from).plane, g.node(l.to).plane) << g.link_name(static_cast<LinkId>(&l - g.links().data()));
  }
  EXPECT_GT(switch_links, 0);
  EXPECT_GT(g.role_count(SwitchRole::Core), 0);
}

// Radix 128 gives the paper's 1,024-GPU segments.
TEST(Hpn, Radix128GivesThousandGpuSegments) {
  const NetworkGraph g = build_network(cluster(2048, NetworkTopology::HPN, 2, 128));
  EXPECT_EQ(test::derived(g, "hosts_per_segment") * 8, 1024);
  EXPECT_EQ(test::build_error(cluster(64, NetworkTopology::HPN, 1)).key, "cluster.network.tiers");
}

}  // namespace
}  // namespace trainsim
