// GPUs, scale-up switches and PCIe: what every generator builds below the NICs.
#include "topology/router.hpp"
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;

TEST(Endpoints, OneNvswitchPerDomainAndPcieLocality) {
  ClusterSpec c = cluster(16, NetworkTopology::RailOptimized);
  c.network.pcie_GBps = 64;
  const NetworkGraph g = build_network(c);
  EXPECT_EQ(g.domain_count(), 2);
  EXPECT_DOUBLE_EQ(g.link(g.scale_up_link(9)).capacity_Bps, 450e9);
  EXPECT_EQ(g.link(g.scale_up_link(9)).to, g.nvswitch(1));
  Router r(g, 0);
  const LinkId pcie = r.gpu_to_nic(10, 2);  // GPU 2 of node 1 and its NIC
  EXPECT_EQ(g.link(pcie).from, g.gpu(10));
  EXPECT_EQ(g.link(pcie).to, g.nic(1, 2));
  EXPECT_DOUBLE_EQ(g.link(pcie).capacity_Bps, 64e9);
  EXPECT_EQ(r.nic_to_gpu(2, 10), NetworkGraph::reverse(pcie));
  EXPECT_THROW(r.gpu_to_nic(10, 3), Error);
}

// NVL72: 72 GPUs over 18 hosts of 4 share one NVSwitch node; 144 GPUs are two domains.
TEST(Endpoints, Nvl72DomainSpansHosts) {
  ClusterSpec c = cluster(144, NetworkTopology::RailOptimized, 2, 64, 4, 4);
  c.scale_up.domain_size = 72;
  c.scale_up.bandwidth_GBps = 900;
  const NetworkGraph g = build_network(c);
  EXPECT_EQ(g.domain_count(), 2);
  Router r(g, 0);
  const auto path = r.scale_up_path(0, 71);  // node 0 to node 17
  ASSERT_EQ(path.size(), 2u);
  EXPECT_EQ(g.link(path[0]).to, g.nvswitch(0));
  EXPECT_EQ(g.link(path[1]).to, g.gpu(71));
  EXPECT_DOUBLE_EQ(g.link(path[0]).capacity_Bps, 900e9);
  EXPECT_THROW(r.scale_up_path(0, 72), Error);
  EXPECT_TRUE(r.scale_up_path(5, 5).empty());
}

// NIC k is nearest GPU k*gpus/nics: with 4 NICs for 8 GPUs, GPUs 0 and 1 share NIC 0; with 16
// NICs, GPU 1 owns NICs 2 and 3.
TEST(Endpoints, NicGpuLocality) {
  const NetworkGraph four = build_network(cluster(8, NetworkTopology::FatTree, 2, 64, 8, 4));
  EXPECT_EQ(four.local_nics(1), std::vector<int>{0});
  EXPECT_EQ(four.local_gpus(0, 3), (std::vector<int>{6, 7}));
  const NetworkGraph sixteen = build_network(cluster(16, NetworkTopology::FatTree, 2, 64, 8, 16));
  EXPECT_EQ(sixteen.local_nics(9), (std::vector<int>{2, 3}));
  EXPECT_EQ(sixteen.local_gpus(1, 3), std::vector<int>{9});
  EXPECT_EQ(test::count_links(sixteen, LinkKind::Pcie), 2 * 32);
}

// Latency: a wire's latency, plus a switch's forwarding latency on links entering a switch.
TEST(Endpoints, LinkLatencies) {
  ClusterSpec c = cluster(16, NetworkTopology::RailOptimized);
  c.network.link_latency_ns = 500;
  c.network.switch_latency_ns = 300;
  const NetworkGraph g = build_network(c);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("node0.nic0>leaf0")).latency_ns, 800);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("leaf0>node0.nic0")).latency_ns, 500);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("leaf0>spine0")).latency_ns, 800);
  EXPECT_DOUBLE_EQ(g.link(g.scale_up_link(0)).latency_ns, 0);
}

}  // namespace
}  // namespace trainsim
