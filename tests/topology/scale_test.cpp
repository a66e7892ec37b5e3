// Every generator from 8 to 100,000 GPUs: every NIC is attached, every switch port count stays
// within the radix, and a few routes work at full size. (Speed is in bench/topology_bench.cpp.)
#include "topology/router.hpp"
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;

struct Case {
  NetworkTopology topology;
  int tiers, radix;
  std::vector<double> oversubscription;
};

// Radix 64 tops out at 65,536 GPUs on a 1:1 three-tier tree; 100,000 needs a bigger radix or
// oversubscription between pods.
const std::vector<Case>& cases_for_100k() {
  static const std::vector<Case> cases = {{NetworkTopology::RailOptimized, 3, 64, {1, 1, 7}},
                                          {NetworkTopology::RailOptimized, 3, 128, {1}},
                                          {NetworkTopology::FatTree, 3, 128, {1}},
                                          {NetworkTopology::HPN, 3, 128, {1}},
                                          {NetworkTopology::Dragonfly, 2, 64, {1}},
                                          {NetworkTopology::Ideal, 2, 64, {1}}};
  return cases;
}

void expect_sane(const NetworkGraph& g, int radix) {
  for (int n = 0; n < g.node_machine_count(); ++n)
    for (int k = 0; k < g.nics_per_node(); ++k) {
      int access = 0;
      for (LinkId l : g.out_links(g.nic(n, k))) access += g.link(l).kind == LinkKind::Access ? 1 : 0;
      ASSERT_GE(access, 1) << g.node_name(g.nic(n, k));
    }
  if (g.role_count(SwitchRole::Crossbar) > 0) return;
  for (NodeId s = g.first_switch(); s < g.node_count(); ++s) {
    double ports = 0;  // in NIC-rate ports
    for (LinkId l : g.out_links(s)) ports += g.link(l).nominal_capacity_Bps / g.nic_Bps();
    ASSERT_LE(ports, radix + 1e-9) << g.node_name(s);
  }
}

TEST(Scale, EightGpus) {
  for (const Case& c : cases_for_100k()) {
    ClusterSpec spec = cluster(8, c.topology, c.tiers, c.radix);
    spec.network.oversubscription = c.oversubscription;
    const NetworkGraph g = build_network(spec);
    expect_sane(g, c.radix);
    Router r(g, 0);
    EXPECT_GT(r.hop_count({0, 0}, {0, 7}), 0) << to_string(c.topology);
  }
}

TEST(Scale, HundredThousandGpus) {
  for (const Case& c : cases_for_100k()) {
    ClusterSpec spec = cluster(100000, c.topology, c.tiers, c.radix);
    spec.network.oversubscription = c.oversubscription;
    const NetworkGraph g = build_network(spec);
    EXPECT_EQ(g.nic_count(), 100000);
    expect_sane(g, c.radix);
    Router r(g, 0);
    for (int dst : {1, 777, 50001, 99999}) {
      const auto path = r.ecmp_path({0, 0}, {dst / 8, dst % 8}, 3);
      EXPECT_FALSE(path.empty()) << to_string(c.topology) << " to NIC " << dst;
    }
  }
}

TEST(Scale, Radix64CannotJoin100kAtOneToOne) {
  const auto e = test::build_error(cluster(100000, NetworkTopology::RailOptimized, 3));
  EXPECT_EQ(e.key, "cluster.network.switch_radix");
  EXPECT_NE(e.what.find("at most 64 pods"), std::string::npos) << e.what;
}

}  // namespace
}  // namespace trainsim
