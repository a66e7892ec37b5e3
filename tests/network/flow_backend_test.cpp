// The flow-level backend executing collectives (network/flow_backend.hpp) on generated fabrics:
// without contention it agrees with NCCL's own estimate; copies of a call compete on shared links;
// calls inside one node are priced by the collective model; a dead NIC moves traffic to another
// NIC and slows the call without losing bytes.
#include <gtest/gtest.h>

#include <numeric>
#include <set>
#include <tuple>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/error.hpp"
#include "network/flow_backend.hpp"
#include "topology/generate.hpp"

namespace trainsim {
namespace {

ClusterSpec h100(int nodes, NetworkTopology topo = NetworkTopology::RailOptimized) {
  ClusterSpec c;
  c.gpu.name = "H100-SXM";
  c.gpu.architecture = "hopper";
  c.gpu.sm_version = 90;
  c.gpu.vendor = "NVIDIA";
  c.gpu.scale_up_GBps = 450;
  c.gpus_per_node = 8;
  c.num_gpus = 8 * nodes;
  c.scale_up = {ScaleUpKind::NVSwitch, 450, 8};
  c.nics_per_node = 8;
  c.nic_gbps = 400;
  c.network.topology = topo;
  c.network.switch_radix = 64;
  return c;
}

std::vector<int> range(int first, int n, int stride = 1) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(first + i * stride);
  return v;
}

// Runs the calls (all started at 0) to completion; returns each call's completion time.
std::vector<SimTime> run_calls(FlowBackend& b, const std::vector<CollectiveCall>& calls) {
  for (std::size_t i = 0; i < calls.size(); ++i) b.start(0, i, calls[i]);
  std::vector<SimTime> done(calls.size(), -1);
  std::vector<std::uint64_t> completed;
  for (SimTime t; (t = b.next_event()) != kNever;) {
    b.advance(t, completed);
    for (auto token : completed) done[token] = t;
  }
  return done;
}

TEST(FlowBackend, AgreesWithNcclWithoutContention) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
  NetworkGraph g = build_network(c);
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, {});
  const std::int64_t bytes = std::int64_t{1} << 30;
  const SimTime t = run_calls(b, {{CollKind::AllReduce, bytes, 0}})[0];
  const SimTime est = nccl.estimate(CollKind::AllReduce, bytes, GroupPlacement::of(range(0, 16), c)).time;
  // NCCL prices the NIC path at 48 GB/s per channel (PCIe), the fabric gives the NIC's 50 GB/s.
  EXPECT_NEAR(to_seconds(t) / to_seconds(est), 1.0, 0.06) << to_seconds(t) << " vs " << to_seconds(est);
  EXPECT_GT(b.stats().flows, 0);
}

// Eight DP groups (one per local GPU) all-reduce at once over 4 nodes: on a rail-optimised fabric
// every group has its own rail, so a copy takes as long as one alone. On a classic fat-tree with
// radix 32 and 4:1 oversubscription a leaf holds 3 hosts (24 × 50 GB/s down, 6 × 50 GB/s up): the
// ring leaves leaf 0 once (node 2 -> node 3) and every copy pushes one NIC's 50 GB/s through that
// uplink: 8 × 50 = 400 GB/s on 300 GB/s, so the copies take 4/3 as long as one alone.
TEST(FlowBackend, CopiesCompeteOnSharedLinks) {
  const std::int64_t bytes = 256 << 20;
  std::vector<std::vector<int>> dp_groups;
  for (int l = 0; l < 8; ++l) dp_groups.push_back(range(l, 4, 8));  // 4 nodes
  auto time_of = [&](const ClusterSpec& c, std::vector<std::vector<int>> copies) {
    const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
    NetworkGraph g = build_network(c);
    FlowBackend b(c, nccl, g, {std::move(copies)}, {});
    return to_seconds(run_calls(b, {{CollKind::AllReduce, bytes, 0}})[0]);
  };
  const ClusterSpec rail = h100(4);
  EXPECT_NEAR(time_of(rail, dp_groups) / time_of(rail, {dp_groups[0]}), 1.0, 0.02);
  ClusterSpec tree = h100(4, NetworkTopology::FatTree);
  tree.network.switch_radix = 32;
  tree.network.oversubscription = {4.0};
  EXPECT_NEAR(time_of(tree, dp_groups) / time_of(tree, {dp_groups[0]}), 4.0 / 3.0, 0.02);
}

TEST(FlowBackend, CallsInsideANodeUseTheCollectiveModel) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  FlowBackend b(c, nccl, g, {{range(0, 8), range(8, 8)}}, {});
  const SimTime t = run_calls(b, {{CollKind::AllGather, 64 << 20, 0}})[0];
  EXPECT_EQ(t, nccl.estimate(CollKind::AllGather, 64 << 20, GroupPlacement::of(range(0, 8), c)).time);
  EXPECT_EQ(b.stats().flows, 0);
}

// NIC 2 of node 1 down: the GPU's traffic leaves through another NIC of the node (over NVLink),
// which then carries two rails: the all-reduce slows down but every byte still arrives.
TEST(FlowBackend, DeadNicMovesTrafficToAnotherNic) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
  const std::int64_t bytes = 256 << 20;
  NetworkGraph healthy = build_network(c);
  NetworkGraph broken = build_network(c);
  broken.set_nic_down(1, 2);
  FlowBackend a(c, nccl, healthy, {{range(0, 16)}}, {});
  FlowBackend b(c, nccl, broken, {{range(0, 16)}}, {});
  const double ta = to_seconds(run_calls(a, {{CollKind::AllReduce, bytes, 0}})[0]);
  const double tb = to_seconds(run_calls(b, {{CollKind::AllReduce, bytes, 0}})[0]);
  EXPECT_GT(tb, 1.3 * ta);
  auto fabric_bytes = [](const FlowBackend& x) {
    double sum = 0;
    const auto stats = x.link_statistics();
    for (std::size_t l = 0; l < stats.size(); ++l)
      if (x.graph().link(static_cast<LinkId>(l)).kind == LinkKind::Access) sum += stats[l].bytes_carried;
    return sum;
  };
  EXPECT_NEAR(fabric_bytes(b), fabric_bytes(a), 1.0);  // same bytes through NIC links, other NICs
  const NodeId dead = broken.nic(1, 2);
  const auto stats = b.link_statistics();
  for (LinkId l : broken.out_links(dead)) EXPECT_EQ(stats[static_cast<std::size_t>(l)].bytes_carried, 0.0);
}

// The NIC dies while the first all-reduce runs: that one finishes on its paths, the next one
// (started afterwards) detours through another NIC and takes longer; no transfer is lost.
TEST(FlowBackend, LinkStateChangesMidRun) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
  NetworkGraph g = build_network(c);
  std::vector<ScheduledLinkState> changes;
  for (LinkId l : g.out_links(g.nic(1, 2)))
    for (LinkId x : {l, NetworkGraph::reverse(l)}) changes.push_back({from_microseconds(100), x, false, 1.0});
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, {}, changes);
  const std::int64_t bytes = 256 << 20;
  std::vector<std::uint64_t> done;
  auto run_one = [&](SimTime start, std::uint64_t token) {
    b.start(start, token, {CollKind::AllReduce, bytes, 0});
    for (SimTime t; (t = b.next_event()) != kNever;) {
      b.advance(t, done);
      if (!done.empty()) return t;
    }
    return SimTime{-1};
  };
  const SimTime end1 = run_one(0, 1);
  ASSERT_GT(end1, from_microseconds(100));  // the fault came while it ran
  const SimTime end2 = run_one(end1, 2);
  EXPECT_GT(end2 - end1, end1 * 13 / 10);
  EXPECT_FALSE(g.link(g.out_links(g.nic(1, 2))[0]).up);
}

// A one-way pipeline send (sender set) moves its bytes one way; a batched send-and-receive both ways.
TEST(FlowBackend, OneWaySendMovesHalfTheBytesOfASendRecv) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  auto nic_bytes = [&](int sender, double* sent_by_second) {
    NetworkGraph g = build_network(c);
    FlowBackend b(c, nccl, g, {{{3, 11}}}, {});
    run_calls(b, {{CollKind::SendRecv, 32 << 20, 0, sender}});
    double total = 0;
    *sent_by_second = 0;
    const auto stats = b.link_statistics();
    for (std::size_t l = 0; l < stats.size(); ++l) {
      const Link& link = g.link(static_cast<LinkId>(l));
      if (link.kind != LinkKind::Access || g.node(link.from).kind != NodeKind::Nic) continue;
      total += stats[l].bytes_carried;
      if (g.node(link.from).index / c.nics_per_node == 1) *sent_by_second += stats[l].bytes_carried;
    }
    return total;
  };
  double second_both = 0, second_one = 0;
  const double both = nic_bytes(-1, &second_both);
  const double one = nic_bytes(0, &second_one);
  EXPECT_NEAR(one, both / 2, 1.0);
  EXPECT_EQ(second_one, 0.0);  // rank 11 on node 1 only receives
  EXPECT_GT(second_both, 0.0);
}

// All-to-all over 2 nodes of 8 GPUs: the 56 pairs inside each node are one transfer each (their
// channels side by side), and so is each rail twin's direct send to the other node. Every other
// cross-node send goes through PXN: its relay's network connection to the peer on a channel carries
// the bytes of all the local GPUs it relays for, one transfer per (relay, peer, channel), fewer than
// one per sender. As packets, those are the transfers; at flow level they move as one coflow (below).
TEST(FlowBackend, PxnRelaysShareOneConnectionPerPeer) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  FlowBackendOptions packets;
  packets.packet = PacketConfig{};
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, packets);
  const std::int64_t bytes = std::int64_t{64} << 20;
  const FlowDag dag =
      nccl.flows(CollKind::AllToAll, bytes, GroupPlacement::of(range(0, 16), c), FlowGranularity::PerChannel);
  std::set<std::tuple<int, int, int>> connections;  // relayed: (relay, peer, channel)
  std::set<std::pair<int, int>> senders;            // relayed: (sender, peer)
  for (const Flow& f : dag.flows)
    if (f.relay >= 0) {
      connections.emplace(f.relay, f.dst.index, f.channel);
      senders.emplace(f.src.index, f.dst.index);
    }
  ASSERT_EQ(senders.size(), 2u * 56);  // every cross-node pair but the rail twins' own goes through a relay
  EXPECT_EQ(b.planned_transfers({CollKind::AllToAll, bytes, 0}),
            2 * 56 + 2 * 8 + static_cast<std::int64_t>(connections.size()));  // NVLink, twins, relays
  EXPECT_LT(connections.size(), senders.size());
}

// At flow level an all-to-all copy is one coflow over those transfers' links. Every byte a node sends
// to the other still crosses its NICs (half of each GPU's buffer), and on a quiet fabric the call
// ends when its busiest link has carried its bytes at full capacity, as the last of its transfers
// would as separate max-min flows.
TEST(FlowBackend, AllToAllMovesAsOneCoflowPerCopy) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, {});
  const std::int64_t bytes = std::int64_t{64} << 20;
  EXPECT_EQ(b.planned_transfers({CollKind::AllToAll, bytes, 0}), 1);
  const SimTime t = run_calls(b, {{CollKind::AllToAll, bytes, 0}})[0];
  EXPECT_EQ(b.stats().flows, 1);
  double nic_out = 0, busiest = 0;  // bytes; seconds at line rate
  const auto stats = b.link_statistics();
  for (std::size_t l = 0; l < stats.size(); ++l) {
    const Link& link = g.link(static_cast<LinkId>(l));
    busiest = std::max(busiest, stats[l].bytes_carried / link.capacity_Bps);
    if (link.kind == LinkKind::Access && g.node(link.from).kind == NodeKind::Nic) nic_out += stats[l].bytes_carried;
  }
  EXPECT_GE(nic_out, 16.0 * static_cast<double>(bytes) / 2);
  EXPECT_LE(nic_out, 16.0 * static_cast<double>(bytes) / 2 * 1.05);  // Simple protocol's few % of headers
  const double tail =
      nccl.flows(CollKind::AllToAll, bytes, GroupPlacement::of(range(0, 16), c), FlowGranularity::PerChannel)
          .latency_us *
      1e-6;
  EXPECT_NEAR(to_seconds(t) - tail, busiest, 20e-6) << to_seconds(t) << " s, busiest link " << busiest << " s";
  // Balanced: every NIC's uplink is that busy, within the headers of the twins' direct sends.
  for (std::size_t l = 0; l < stats.size(); ++l) {
    const Link& link = g.link(static_cast<LinkId>(l));
    if (link.kind == LinkKind::Access && g.node(link.from).kind == NodeKind::Nic) {
      EXPECT_NEAR(stats[l].bytes_carried / link.capacity_Bps, busiest, busiest * 0.02) << "link " << l;
    }
  }
}

// Beside a ring all-reduce on the same NICs, the all-to-all's coflow shares them as its transfers
// would (each weighs on a NIC as the transfers it stands for): both calls take longer than alone, and
// the NICs never idle while either has bytes left, so the later one ends by the two times alone added.
TEST(FlowBackend, AllToAllCoflowSharesNicsWithOtherCalls) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
  const CollectiveCall a2a{CollKind::AllToAll, std::int64_t{256} << 20, 0};
  const CollectiveCall ar{CollKind::AllReduce, std::int64_t{256} << 20, 0};
  auto times = [&](std::vector<CollectiveCall> calls) {
    NetworkGraph g = build_network(c);
    FlowBackend b(c, nccl, g, {{range(0, 16)}}, {});
    return run_calls(b, calls);
  };
  const SimTime a2a_alone = times({a2a})[0], ar_alone = times({ar})[0];
  const auto both = times({a2a, ar});
  EXPECT_GT(both[0], a2a_alone * 11 / 10);
  EXPECT_GT(both[1], ar_alone * 11 / 10);
  EXPECT_LE(std::max(both[0], both[1]), (a2a_alone + ar_alone) * 102 / 100);
}

// Under adaptive routing each connection of an all-to-all goes where the connections routed before it (its own
// call's included) load the fabric least: on a full-bisection fat-tree of 4 nodes over leaves of 16 ports the
// call then runs at its NICs' pace, where ECMP's hash collisions on the leaf uplinks slow it.
TEST(FlowBackend, AdaptiveRoutingSpreadsAnAllToAllsConnections) {
  ClusterSpec c = h100(4, NetworkTopology::FatTree);
  c.network.switch_radix = 16;
  const NcclAnalyticalModel nccl(c, {});
  const std::int64_t bytes = std::int64_t{256} << 20;
  auto time_of = [&](bool adaptive, double* nic_bound) {
    NetworkGraph g = build_network(c);
    FlowBackendOptions o;
    o.adaptive_routing = adaptive;
    FlowBackend b(c, nccl, g, {{range(0, 32)}}, o);
    const SimTime t = run_calls(b, {{CollKind::AllToAll, bytes, 0}})[0];
    const auto stats = b.link_statistics();
    *nic_bound = 0;
    for (std::size_t l = 0; l < stats.size(); ++l) {
      const Link& link = g.link(static_cast<LinkId>(l));
      if (link.kind == LinkKind::Access && g.node(link.from).kind == NodeKind::Nic)
        *nic_bound = std::max(*nic_bound, stats[l].bytes_carried / link.capacity_Bps);
    }
    return to_seconds(t);
  };
  double ecmp_bound = 0, adaptive_bound = 0;
  const double ecmp = time_of(false, &ecmp_bound);
  const double adaptive = time_of(true, &adaptive_bound);
  EXPECT_LT(adaptive, ecmp * 0.95) << adaptive << " s adaptive, " << ecmp << " s ECMP";
  EXPECT_NEAR(adaptive, adaptive_bound, adaptive_bound * 0.05) << "NIC-bound " << adaptive_bound << " s";
}

// The same for ring collectives: each of a ring's inter-leaf hops goes where the hops routed before it (its own
// call's included) load the leaf uplinks least, so an all-gather over 4 nodes on leaves of 16 ports runs at its
// NICs' pace, where ECMP's hash collisions on the uplinks slow it. Before 2026-11-29 a call's own transfers did not
// weigh on its routing, and adaptive routing picked ECMP's paths for every collective but the all-to-all.
TEST(FlowBackend, AdaptiveRoutingSpreadsARingsHops) {
  ClusterSpec c = h100(4, NetworkTopology::FatTree);
  c.network.switch_radix = 16;
  const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
  const std::int64_t bytes = std::int64_t{1} << 30;
  auto time_of = [&](bool adaptive) {
    NetworkGraph g = build_network(c);
    FlowBackendOptions o;
    o.adaptive_routing = adaptive;
    FlowBackend b(c, nccl, g, {{range(0, 32)}}, o);
    return to_seconds(run_calls(b, {{CollKind::AllGather, bytes, 0}})[0]);
  };
  const double ecmp = time_of(false), adaptive = time_of(true);
  EXPECT_LT(adaptive, ecmp * 0.95) << adaptive << " s adaptive, " << ecmp << " s ECMP";
}

// A coflow is routed once per copy and reused while the links stay as they are; a NIC that dies
// between two all-to-alls sends the second one around it (nothing more on its links) and slows it.
TEST(FlowBackend, AllToAllCoflowIsReroutedAfterALinkChange) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  std::vector<ScheduledLinkState> changes;
  const auto out = g.out_links(g.nic(1, 2));
  const std::vector<LinkId> dead_links(out.begin(), out.end());
  for (LinkId l : dead_links)
    for (LinkId x : {l, NetworkGraph::reverse(l)}) changes.push_back({from_seconds(1.0), x, false, 1.0});
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, {}, changes);
  const std::int64_t bytes = std::int64_t{64} << 20;
  std::vector<std::uint64_t> done;
  auto run_one = [&](SimTime start, std::uint64_t token) {
    b.start(start, token, {CollKind::AllToAll, bytes, 0});
    for (SimTime t; (t = b.next_event()) != kNever;) {
      b.advance(t, done);
      if (!done.empty()) return t;
    }
    return SimTime{-1};
  };
  auto dead_bytes = [&] {
    double sum = 0;
    const auto stats = b.link_statistics();
    for (LinkId l : dead_links) sum += stats[static_cast<std::size_t>(l)].bytes_carried;
    return sum;
  };
  const SimTime first = run_one(0, 1);
  const SimTime second = run_one(first, 2) - first;  // same links: the same coflow
  EXPECT_EQ(second, first);
  const double before = dead_bytes();
  EXPECT_GT(before, 0.0);
  const SimTime later = from_seconds(2.0);  // after the fault
  b.advance(later, done);
  const SimTime third = run_one(later, 3) - later;
  EXPECT_EQ(dead_bytes(), before);
  EXPECT_GT(third, first * 11 / 10);
}

// A call whose transfers last under a microsecond at line rate is latency-bound: the collective
// model times it, as it does a call inside one node, and it puts nothing on the fabric.
TEST(FlowBackend, LatencyBoundCallsUseTheCollectiveModel) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, {});
  const std::int64_t small = 64 << 10;  // 4 KiB per peer
  const SimTime t = run_calls(b, {{CollKind::AllToAll, small, 0}})[0];
  EXPECT_EQ(t, nccl.estimate(CollKind::AllToAll, small, GroupPlacement::of(range(0, 16), c)).time);
  EXPECT_EQ(b.stats().flows, 0);
  EXPECT_EQ(b.planned_transfers({CollKind::AllToAll, small, 0}), 0);
  EXPECT_GT(b.planned_transfers({CollKind::AllToAll, 16 << 20, 0}), 0);
}

// The transfers of a call that become ready at one instant get their rates from one solve, not one
// solve per transfer: 16 pairs across 4 nodes swap buffers (a batched send and receive each), 32
// transfers that start at one instant and finish at a few.
TEST(FlowBackend, TransfersStartingTogetherShareOneSolve) {
  const ClusterSpec c = h100(4);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  std::vector<std::vector<int>> pairs;
  for (int r = 0; r < 16; ++r) pairs.push_back({r, r + 16});
  FlowBackend b(c, nccl, g, {pairs}, {});
  run_calls(b, {{CollKind::SendRecv, std::int64_t{64} << 20, 0}});
  ASSERT_NE(b.flow_network(), nullptr);
  EXPECT_GE(b.stats().flows, 32);
  EXPECT_LE(b.flow_network()->solve_counters().solves, 8);
}

TEST(FlowBackend, DeterministicForASeed) {
  ClusterSpec c = h100(4, NetworkTopology::FatTree);
  c.network.switch_radix = 32;
  const NcclAnalyticalModel nccl(c, {{"NCCL_NVLS_ENABLE", "0"}});
  NetworkGraph g = build_network(c);
  std::vector<std::vector<int>> dp;
  for (int l = 0; l < 8; ++l) dp.push_back(range(l, 4, 8));
  auto once = [&](std::uint64_t seed) {
    FlowBackendOptions o;
    o.seed = seed;
    FlowBackend b(c, nccl, g, {dp}, o);
    return run_calls(b, {{CollKind::AllReduce, 64 << 20, 0}, {CollKind::AllGather, 32 << 20, 0}});
  };
  EXPECT_EQ(once(7), once(7));
}

TEST(FlowBackend, UnknownGroupIsAnError) {
  const ClusterSpec c = h100(2);
  const NcclAnalyticalModel nccl(c, {});
  NetworkGraph g = build_network(c);
  FlowBackend b(c, nccl, g, {{range(0, 16)}}, {});
  EXPECT_THROW(b.start(0, 0, {CollKind::AllReduce, 1024, 5}), InternalError);  // the workload names its groups
}

}  // namespace
}  // namespace trainsim
