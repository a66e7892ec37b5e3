// Hand-computable checks of the fabric and the flow network together (issue 4): a 2:1 oversubscribed
// leaf halves cross-spine bandwidth for a permutation pattern; two flows ECMP hashes onto one uplink
// take twice as long as adaptive routing's disjoint paths; a dead uplink reroutes and conserves bytes.
// Classic fat-tree of radix-16 switches, one GPU and one 400 Gb/s (50 GB/s) NIC per host: at 1:1 a
// leaf has 8 hosts and 8 single-cable uplinks (128 hosts: 16 leaves, 8 spines); at 2:1, 10 hosts
// and 5 uplinks (160 hosts: 16 leaves, 5 spines), 250 GB/s together.
#include <gtest/gtest.h>

#include <vector>

#include "network/flow/flow_network.hpp"
#include "topology/generate.hpp"
#include "topology/router.hpp"

namespace trainsim {
namespace {

constexpr std::int64_t kBytes = 5'000'000'000;  // 0.1 s at 50 GB/s
constexpr double kNicBps = 50e9;

ClusterSpec hosts(int n, double oversubscription) {
  ClusterSpec c;
  c.gpu.name = "test";
  c.num_gpus = n;
  c.gpus_per_node = 1;
  c.nics_per_node = 1;
  c.nic_gbps = 400;
  c.scale_up = {ScaleUpKind::NVSwitch, 450, 1};
  c.network.topology = NetworkTopology::FatTree;
  c.network.tiers = 2;
  c.network.switch_radix = 16;
  c.network.oversubscription = {oversubscription};
  return c;
}

std::vector<double> capacities(const NetworkGraph& g) {
  std::vector<double> v;
  for (const Link& l : g.links()) v.push_back(l.capacity_Bps);
  return v;
}

// Starts one flow per path at 0 and returns each flow's finish time in seconds.
std::vector<double> run(const NetworkGraph& g, const std::vector<std::vector<LinkId>>& paths,
                        std::vector<LinkStats>* stats = nullptr) {
  FlowNetwork net(capacities(g), std::vector<SimTime>(g.links().size(), 0));
  std::vector<FlowId> ids;
  for (const auto& p : paths) ids.push_back(net.start(0, p, kBytes));
  std::vector<double> done(paths.size(), -1);
  std::vector<FlowId> finished;
  for (SimTime t; (t = net.next_completion()) != kNever;) {
    net.advance(t, finished);
    for (FlowId f : finished)
      for (std::size_t i = 0; i < ids.size(); ++i)
        if (ids[i] == f && done[i] < 0) done[i] = to_seconds(t);
  }
  if (stats) *stats = net.link_statistics();
  return done;
}

// Host i of leaf 0 sends to host i of leaf 1, paths chosen adaptively one after the other (each
// flow sees the load of those before it): the spread a perfect adaptive fabric achieves.
std::vector<std::vector<LinkId>> permutation(const NetworkGraph& g, Router& r, int per_leaf) {
  std::vector<double> load(g.links().size(), 0);
  std::vector<std::vector<LinkId>> paths;
  for (int i = 0; i < per_leaf; ++i) {
    auto p = r.adaptive_path({i, 0}, {per_leaf + i, 0}, load, static_cast<std::uint64_t>(i));
    for (LinkId l : p) load[static_cast<std::size_t>(l)] += 1;
    paths.push_back(std::move(p));
  }
  return paths;
}

TEST(FabricChecks, TwoToOneOversubscriptionHalvesCrossSpineBandwidth) {
  const NetworkGraph full = build_network(hosts(128, 1.0));
  const NetworkGraph half = build_network(hosts(160, 2.0));
  Router rf(full, 0), rh(half, 0);
  const auto tf = run(full, permutation(full, rf, 8));
  const auto th = run(half, permutation(half, rh, 10));
  for (double t : tf) EXPECT_NEAR(t, kBytes / kNicBps, 1e-9);      // NIC-limited
  for (double t : th) EXPECT_NEAR(t, 2 * kBytes / kNicBps, 1e-9);  // 500 GB/s through 250 GB/s
}

TEST(FabricChecks, EcmpCollisionFinishesLaterThanAdaptive) {
  const NetworkGraph g = build_network(hosts(128, 1.0));
  Router r(g, 42);
  // Two flows from different hosts of leaf 0 to leaf 1 whose hashes pick the same uplink.
  const auto a = r.ecmp_path({0, 0}, {8, 0}, 1);
  std::vector<LinkId> b;
  for (std::uint64_t key = 2; key < 1000 && b.empty(); ++key) {
    auto p = r.ecmp_path({1, 0}, {9, 0}, key);
    if (p[1] == a[1]) b = p;  // hop 1: leaf -> spine
  }
  ASSERT_FALSE(b.empty()) << "no colliding flow key found";
  const auto collided = run(g, {a, b});
  for (double t : collided) EXPECT_NEAR(t, 2 * kBytes / kNicBps, 1e-9);  // 25 GB/s each
  const auto spread = run(g, permutation(g, r, 2));
  for (double t : spread) EXPECT_NEAR(t, kBytes / kNicBps, 1e-9);
}

TEST(FabricChecks, DeadUplinkReroutesAndConservesBytes) {
  NetworkGraph g = build_network(hosts(128, 1.0));
  Router r(g, 0);
  const auto before = permutation(g, r, 8);
  const LinkId dead = before[0][1];  // one leaf0 -> spine uplink
  g.set_link_state(dead, false);
  const auto after = permutation(g, r, 8);
  for (const auto& p : after)
    for (LinkId l : p) EXPECT_NE(l, dead);
  std::vector<LinkStats> stats;
  const auto t = run(g, after, &stats);
  // 8 flows over 7 uplinks: two share one and take twice as long, the rest are NIC-limited.
  int slow = 0;
  for (double x : t) slow += x > 1.5 * kBytes / kNicBps ? 1 : 0;
  EXPECT_EQ(slow, 2);
  double into_leaf1 = 0;
  for (std::size_t l = 0; l < stats.size(); ++l) {
    const Link& link = g.link(static_cast<LinkId>(l));
    if (link.kind == LinkKind::Access && g.node(link.to).kind == NodeKind::Nic) into_leaf1 += stats[l].bytes_carried;
  }
  EXPECT_DOUBLE_EQ(into_leaf1, 8.0 * kBytes);
  EXPECT_EQ(stats[static_cast<std::size_t>(dead)].bytes_carried, 0.0);
}

}  // namespace
}  // namespace trainsim
