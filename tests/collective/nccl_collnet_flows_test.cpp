// CollNet flows (NCCL src/device/all_reduce.h, CollNetDirect/CollNetChain) on a communicator built by the real
// search for 2 nodes × 8 H100 with NCCL_COLLNET_ENABLE=1: the in-network reduction halves what every NIC sends
// compared with a ring (each node's buffer crosses the network once each way).
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "collective/flows/nccl_flows.hpp"
#include "collective/nccl/nccl_comm_builder.hpp"
#include "core/error.hpp"
#include "support/byte_sizes.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using test::GiB;
using test::KiB;
using test::MiB;
using A = NcclAlgorithm;

std::shared_ptr<const NcclCommunicator> comm_2x8(bool collnet) {
  const ClusterSpec cluster = testing::h100_cluster(2);
  const NcclCommBuilder builder(cluster, NcclEnv::parse({{"NCCL_COLLNET_ENABLE", collnet ? "1" : "0"}}));
  return builder.communicator(GroupPlacement::of(testing::first_ranks(16), cluster));
}

FlowDag all_reduce_flows(const NcclCommunicator& c, std::int64_t bytes, A a, int channels,
                         FlowGranularity g = FlowGranularity::PerChannel) {
  FlowOptions o;
  o.granularity = g;
  return generate_collective_flows(c, CollKind::AllReduce, bytes, CallPlan{a, NcclProtocol::Simple, channels}, o);
}

// Network bytes per node to and from the fabric, and per (node, NIC) to the fabric.
struct FabricTraffic {
  std::map<int, std::int64_t> up, down;
  std::map<std::pair<int, int>, std::int64_t> up_per_nic;
};
FabricTraffic fabric_traffic(const NcclCommunicator& c, const FlowDag& dag) {
  FabricTraffic t;
  for (const Flow& f : dag.flows) {
    if (f.dst.kind == FlowEndpoint::Kind::InNetwork) {
      EXPECT_EQ(f.link, LinkClass::Network);
      EXPECT_GE(f.src_net, 0);
      const int node = c.node_of[static_cast<std::size_t>(f.src.index)];
      t.up[node] += f.bytes;
      t.up_per_nic[{node, f.src_net}] += f.bytes;
    } else if (f.src.kind == FlowEndpoint::Kind::InNetwork) {
      EXPECT_GE(f.dst_net, 0);
      t.down[c.node_of[static_cast<std::size_t>(f.dst.index)]] += f.bytes;
    } else {
      EXPECT_NE(f.link, LinkClass::Network) << "CollNet moves nothing node to node directly";
    }
  }
  return t;
}

using EdgeKey = std::tuple<int, int, int, int, int>;
std::map<EdgeKey, std::int64_t> bytes_by_edge(const FlowDag& dag) {
  std::map<EdgeKey, std::int64_t> m;
  for (const Flow& f : dag.flows)
    m[{static_cast<int>(f.src.kind), f.src.index, static_cast<int>(f.dst.kind), f.dst.index,
       static_cast<int>(f.link)}] += f.bytes;
  return m;
}

void expect_valid(const FlowDag& dag) {
  for (std::size_t i = 0; i < dag.flows.size(); ++i)
    for (std::uint32_t d = dag.flows[i].dep_begin; d < dag.flows[i].dep_end; ++d) ASSERT_LT(dag.dep_index[d], i);
}

TEST(NcclCollNetFlows, DirectScattersToEveryHeadAndReducesInTheFabric) {
  const auto c = comm_2x8(true);
  ASSERT_TRUE(c->collnet);
  ASSERT_EQ(c->collnet_head_local.size(), 8u);
  const std::int64_t S = GiB;
  const FlowDag dag = all_reduce_flows(*c, S, A::CollNetDirect, 16);
  expect_valid(dag);
  const auto t = fabric_traffic(*c, dag);
  for (int node = 0; node < 2; ++node) {
    EXPECT_EQ(t.up.at(node), S);  // each node's buffer crosses the network once each way
    EXPECT_EQ(t.down.at(node), S);
  }
  for (const auto& [nic, bytes] : t.up_per_nic) EXPECT_EQ(bytes, S / 8) << nic.first << "/" << nic.second;
  // 8 heads = every GPU: each sends its 7 foreign blocks to their heads, its own block to the
  // fabric and the reduced block back to the 7 others: 15/8 S; it receives the same.
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(dag.bytes_sent_by(r), 15 * S / 8) << r;
    EXPECT_EQ(dag.bytes_received_by(r), 15 * S / 8) << r;
  }
}

TEST(NcclCollNetFlows, ChainClimbsTheChainAndLeavesFromItsHead) {
  const auto c = comm_2x8(true);
  const std::int64_t S = 256 * MiB;
  const FlowDag dag = all_reduce_flows(*c, S, A::CollNetChain, 16);
  expect_valid(dag);
  const auto t = fabric_traffic(*c, dag);
  for (int node = 0; node < 2; ++node) {
    EXPECT_EQ(t.up.at(node), S);
    EXPECT_EQ(t.down.at(node), S);
  }
  // 16 channels over the 8 chain graphs, equal shares: 8 distinct chain heads/NICs carry 2 × S/16.
  EXPECT_EQ(t.up_per_nic.size(), 16u);
  for (const auto& [nic, bytes] : t.up_per_nic) EXPECT_EQ(bytes, S / 8);
  // Per channel and node, a chain of 8 moves the share s = S/16 over 7 hops up, 1 to the fabric and 7
  // hops down: 15 s; over 16 channels 15 S per node.
  for (int node = 0; node < 2; ++node) {
    std::int64_t sent = 0;
    for (int l = 0; l < 8; ++l) sent += dag.bytes_sent_by(node * 8 + l);
    EXPECT_EQ(sent, 15 * S);
  }
}

TEST(NcclCollNetFlows, MultiNodeNvlsGoesThroughTheFabric) {
  const auto c = comm_2x8(true);
  const std::int64_t S = 64 * MiB;
  const FlowDag dag = all_reduce_flows(*c, S, A::NVLS, 16);
  expect_valid(dag);
  const auto t = fabric_traffic(*c, dag);
  for (int node = 0; node < 2; ++node) EXPECT_EQ(t.up.at(node), S);
  for (const auto& [nic, bytes] : t.up_per_nic) EXPECT_EQ(bytes, S / 8);
}

TEST(NcclCollNetFlows, PerStepMatchesPerChannel) {
  const auto c = comm_2x8(true);
  for (A a : {A::CollNetDirect, A::CollNetChain, A::NVLS}) {
    SCOPED_TRACE(to_string(a));
    const FlowDag agg = all_reduce_flows(*c, 6 * MiB + 4 * KiB, a, 4);
    const FlowDag step = all_reduce_flows(*c, 6 * MiB + 4 * KiB, a, 4, FlowGranularity::PerStep);
    expect_valid(step);
    EXPECT_GT(step.flows.size(), agg.flows.size());
    EXPECT_EQ(bytes_by_edge(agg), bytes_by_edge(step));
  }
}

// PerStep: the fabric's result for a chunk leaves only after every node's contribution arrived.
TEST(NcclCollNetFlows, FabricWaitsForEveryNode) {
  const auto c = comm_2x8(true);
  const FlowDag dag = all_reduce_flows(*c, 512 * KiB, A::CollNetDirect, 1, FlowGranularity::PerStep);
  int checked = 0;
  for (const Flow& f : dag.flows) {
    if (f.src.kind != FlowEndpoint::Kind::InNetwork) continue;
    std::map<int, int> nodes_up;
    for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) {
      const Flow& dep = dag.flows[dag.dep_index[d]];
      if (dep.dst.kind == FlowEndpoint::Kind::InNetwork && dep.dst.index == f.src.index && dep.step == f.step)
        ++nodes_up[c->node_of[static_cast<std::size_t>(dep.src.index)]];
    }
    EXPECT_EQ(nodes_up.size(), 2u);
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(NcclCollNetFlows, WithoutCollNetTheAlgorithmsAreErrors) {
  const auto c = comm_2x8(false);
  EXPECT_FALSE(c->collnet);
  EXPECT_THROW(all_reduce_flows(*c, MiB, A::CollNetDirect, 4), Error);
  EXPECT_THROW(all_reduce_flows(*c, MiB, A::CollNetChain, 4), Error);
  EXPECT_THROW(all_reduce_flows(*c, MiB, A::NVLS, 4), Error);
}

}  // namespace
}  // namespace trainsim
