// The collective layer's two faces behind CollectiveModel: NCCL's predicted time and the flow DAG
// of the same choice, and the scenario's `algorithms:` block choosing what runs each collective.
#include <gtest/gtest.h>

#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "support/byte_sizes.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using test::GiB;

// NCCL's 1 GiB AllReduce on 2 × 8 H100 (docs/collectives.md) without NVLS: Ring/Simple on 16 channels; each
// rank sends 2·15/16 GiB, and the DAG's latency is the cost model's Ring/Simple AllReduce latency (131.6 µs
// before the plateau factor).
TEST(CollectiveModelFlows, FlowsFollowNcclsChoice) {
  const ClusterSpec c = testing::h100_cluster(2);
  const GroupPlacement world = GroupPlacement::of(testing::first_ranks(16), c);
  const NcclAnalyticalModel ring(c, {{"NCCL_NVLS_ENABLE", "0"}});
  const FlowDag dag = ring.flows(CollKind::AllReduce, GiB, world, FlowGranularity::PerChannel);
  EXPECT_EQ(dag.algorithm, NcclAlgorithm::Ring);
  EXPECT_EQ(dag.protocol, NcclProtocol::Simple);
  EXPECT_EQ(dag.channels, 16);
  EXPECT_NEAR(dag.latency_us, 131.6, 1e-9);
  for (int r = 0; r < 16; ++r) EXPECT_NEAR(static_cast<double>(dag.payload_sent_by(r)), 2.0 * 15 / 16 * GiB, 16.0 * 64);

  const NcclAnalyticalModel nvls(c, {});
  const FlowDag tree = nvls.flows(CollKind::AllReduce, GiB, world, FlowGranularity::PerChannel);
  EXPECT_EQ(tree.algorithm, NcclAlgorithm::NVLSTree);
  bool switch_flow = false, network_flow = false;
  for (const auto& f : tree.flows) {
    switch_flow = switch_flow || f.dst.kind == FlowEndpoint::Kind::NvSwitch;
    network_flow = network_flow || f.link == LinkClass::Network;
  }
  EXPECT_TRUE(switch_flow);
  EXPECT_TRUE(network_flow);
}

TEST(CollectiveModelFlows, AlgorithmsBlockAppliesWhereItCanRun) {
  const ClusterSpec c = testing::h100_cluster(4);
  const GroupPlacement world = GroupPlacement::of(testing::first_ranks(32), c);
  const GroupPlacement one_node = GroupPlacement::of(testing::first_ranks(8), c);
  AlgorithmsSpec spec;
  spec.all_reduce = CollectiveAlgorithm::Hierarchical;
  spec.all_gather = CollectiveAlgorithm::HalvingDoubling;
  const auto model = make_collective_model(c, {}, spec);
  EXPECT_EQ(model->estimate(CollKind::AllReduce, GiB, world).algorithm, NcclAlgorithm::Hierarchical);
  // Hierarchical needs several nodes: a TP group inside one node keeps NCCL's choice.
  EXPECT_EQ(model->estimate(CollKind::AllReduce, GiB, one_node).algorithm, NcclAlgorithm::NVLS);
  EXPECT_EQ(model->estimate(CollKind::AllGather, GiB, world).algorithm, NcclAlgorithm::HalvingDoubling);
  EXPECT_EQ(model->estimate(CollKind::ReduceScatter, GiB, world).algorithm, NcclAlgorithm::Ring);

  spec = AlgorithmsSpec{};
  spec.all_reduce = CollectiveAlgorithm::ReductionServer;
  spec.reduction_server.servers = 4;
  spec.reduction_server.nic_gbps = 400;
  const auto rs = make_collective_model(c, {}, spec);
  const auto est = rs->estimate(CollKind::AllReduce, GiB, world);
  EXPECT_EQ(est.algorithm, NcclAlgorithm::ReductionServer);
  const FlowDag dag = rs->flows(CollKind::AllReduce, GiB, world, FlowGranularity::PerChannel);
  bool to_reducer = false;
  for (const auto& f : dag.flows) to_reducer = to_reducer || f.dst.kind == FlowEndpoint::Kind::Reducer;
  EXPECT_TRUE(to_reducer);
  // A node reduces inside itself first, so each node's NICs send its buffer once (vs 2(n-1)/n of it per GPU
  // for a ring): GPU 5 puts its 1/8 shard on the network, its node's 8 GPUs the whole GiB.
  std::int64_t gpu5 = 0, node0 = 0;
  for (const auto& f : dag.flows) {
    if (f.link != LinkClass::Network || f.src.kind != FlowEndpoint::Kind::Gpu) continue;
    if (f.src.index == 5) gpu5 += f.payload;
    if (f.src.index < 8) node0 += f.payload;
  }
  EXPECT_EQ(gpu5, GiB / 8);
  EXPECT_EQ(node0, GiB);
}

}  // namespace
}  // namespace trainsim
