// Hierarchical collectives: the phases priced through a fake NCCL model, errors, and the flow DAG.
#include <gtest/gtest.h>

#include <tuple>
#include <vector>

#include "collective/algorithms/custom_algorithms.hpp"
#include "core/error.hpp"
#include "custom_test_support.hpp"

namespace trainsim {
namespace {

using Call = std::tuple<CollKind, std::int64_t, int, int>;

// A fake NCCL model with distinct, known prices per call, recording what it was asked.
struct FakeNccl {
  std::vector<Call> calls;
  static SimTime price(CollKind kind, std::int64_t bytes, int ppn, int nnodes) {
    return 1'000'000 * static_cast<SimTime>(static_cast<int>(kind) + 1) + bytes / 1024 + 10 * ppn + 1000 * nnodes;
  }
  CustomAlgoContext context(int nnodes, int ppn) {
    CustomAlgoContext ctx;
    ctx.nranks = nnodes * ppn;
    ctx.nnodes = nnodes;
    ctx.ppn = ppn;
    ctx.nccl = [this](CollKind kind, std::int64_t bytes, int p, int m) {
      calls.emplace_back(kind, bytes, p, m);
      CollectiveEstimate e;
      e.time = price(kind, bytes, p, m);
      e.protocol = m > 1 ? NcclProtocol::LL128 : NcclProtocol::Simple;
      e.channels = m > 1 ? 16 : 24;
      return e;
    };
    return ctx;
  }
};

constexpr std::int64_t kCallBytes = 1 << 30;  // S: the size of the collectives priced here

TEST(CustomHierarchical, AllReduceIsTheSumOfItsThreePhases) {
  FakeNccl nccl;
  const auto e =
      estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, nccl.context(4, 8));
  const std::vector<Call> expected{{CollKind::ReduceScatter, kCallBytes, 8, 1},
                                   {CollKind::AllReduce, kCallBytes / 8, 1, 4},
                                   {CollKind::AllGather, kCallBytes, 8, 1}};
  EXPECT_EQ(nccl.calls, expected);
  EXPECT_EQ(e.time, FakeNccl::price(CollKind::ReduceScatter, kCallBytes, 8, 1) +
                        FakeNccl::price(CollKind::AllReduce, kCallBytes / 8, 1, 4) +
                        FakeNccl::price(CollKind::AllGather, kCallBytes, 8, 1));
  EXPECT_EQ(e.algorithm, NcclAlgorithm::Hierarchical);
  EXPECT_EQ(e.protocol, NcclProtocol::LL128);  // the network phase's
  EXPECT_EQ(e.channels, 16);
}

TEST(CustomHierarchical, ReduceScatterAndAllGatherPhases) {
  FakeNccl rs;
  const auto ers =
      estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::ReduceScatter, kCallBytes, rs.context(4, 8));
  EXPECT_EQ(rs.calls, (std::vector<Call>{{CollKind::ReduceScatter, kCallBytes, 8, 1},
                                         {CollKind::ReduceScatter, kCallBytes / 8, 1, 4}}));
  EXPECT_EQ(ers.time, FakeNccl::price(CollKind::ReduceScatter, kCallBytes, 8, 1) +
                          FakeNccl::price(CollKind::ReduceScatter, kCallBytes / 8, 1, 4));
  FakeNccl ag;
  const auto eag =
      estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllGather, kCallBytes, ag.context(4, 8));
  EXPECT_EQ(ag.calls,
            (std::vector<Call>{{CollKind::AllGather, kCallBytes / 8, 1, 4}, {CollKind::AllGather, kCallBytes, 8, 1}}));
  EXPECT_EQ(eag.time, FakeNccl::price(CollKind::AllGather, kCallBytes / 8, 1, 4) +
                          FakeNccl::price(CollKind::AllGather, kCallBytes, 8, 1));
}

// Shards round up so no byte is lost: 10 bytes over 4 GPUs per node -> 3-byte shards.
TEST(CustomHierarchical, ShardRoundsUp) {
  FakeNccl nccl;
  estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, 10, nccl.context(2, 4));
  ASSERT_EQ(nccl.calls.size(), 3u);
  EXPECT_EQ(std::get<1>(nccl.calls[1]), 3);
}

// One GPU per node: the intra-node phases are groups of one and cost nothing.
TEST(CustomHierarchical, OneGpuPerNodeIsJustTheInterNodePhase) {
  FakeNccl nccl;
  const auto e =
      estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, nccl.context(8, 1));
  EXPECT_EQ(nccl.calls, (std::vector<Call>{{CollKind::AllReduce, kCallBytes, 1, 8}}));
  EXPECT_EQ(e.time, FakeNccl::price(CollKind::AllReduce, kCallBytes, 1, 8));
}

TEST(CustomHierarchical, SingleNodeOrUnevenNodesThrow) {
  FakeNccl nccl;
  EXPECT_THROW(estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, nccl.context(1, 8)),
               Error);
  auto uneven = nccl.context(2, 8);
  uneven.nranks = 12;
  EXPECT_THROW(estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, uneven), Error);
  EXPECT_TRUE(nccl.calls.empty());
  EXPECT_THROW(
      custom_flows(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, testing::custom_comm(1, 8), {}),
      Error);
  auto comm = testing::custom_comm(2, 4);  // move rank 7 off node 1: nodes of 4 and 3 (+1 on a third)
  comm.nnodes = 3;
  comm.node_of[7] = 2;
  comm.local_of[7] = 0;
  comm.node_ranks[1].pop_back();
  comm.node_ranks.push_back({7});
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, comm, {}), Error);
  try {
    estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, kCallBytes, nccl.context(1, 8));
  } catch (const Error& e) { EXPECT_NE(std::string(e.what()).find("one node"), std::string::npos) << e.what(); }
}

// 2 nodes × 4, AllReduce of S: intra RS rings send 3/4·S, inter rings on S/4 shards send
// 2·(1/2)·S/4, intra AG rings 3/4·S; the network phase runs between same-local-index GPUs.
TEST(CustomHierarchical, FlowBytesPhasesAndDependencies) {
  const auto comm = testing::custom_comm(2, 4);
  const std::int64_t bytes = 4096;
  const auto dag = custom_flows(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, bytes, comm, {});
  testing::expect_well_formed(dag);
  ASSERT_EQ(dag.flows.size(), 8u + 8u + 8u);
  const auto t = testing::tally(dag, FlowEndpoint::Kind::Gpu, 8);
  for (int r = 0; r < 8; ++r) {
    EXPECT_EQ(t.sent[r], 2 * 3 * bytes / 4 + bytes / 4) << r;
    EXPECT_EQ(t.received[r], t.sent[r]);
  }
  std::int64_t network = 0;
  for (std::size_t i = 0; i < dag.flows.size(); ++i) {
    const Flow& f = dag.flows[i];
    const bool inter = i >= 8 && i < 16;
    EXPECT_EQ(f.link == LinkClass::Network, inter) << i;
    if (inter) {
      network += f.payload;
      EXPECT_EQ(comm.local_of[f.src.index], comm.local_of[f.dst.index]);
      EXPECT_EQ(f.src_net, comm.local_of[f.src.index]);
      // Waits for the intra-node reduce-scatter hop into the sender.
      ASSERT_EQ(f.dep_end - f.dep_begin, 1u);
      const Flow& dep = dag.flows[dag.dep_index[f.dep_begin]];
      EXPECT_EQ(dep.dst.index, f.src.index);
      EXPECT_EQ(dep.link, LinkClass::NVLink);
    }
    if (i >= 16) {  // all-gather hops wait for every network arrival on their node (4 each)
      ASSERT_EQ(f.dep_end - f.dep_begin, 4u);
      for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) {
        EXPECT_EQ(comm.node_of[dag.flows[dag.dep_index[d]].dst.index], comm.node_of[f.src.index]);
      }
    }
  }
  EXPECT_EQ(network, 8 * bytes / 4);  // each GPU: 2(m-1)/m·S/ppn = S/4 on the network
  EXPECT_EQ(testing::dag_depth(dag), 3);
  // NCCL's ring latency per phase (ncclTopoTuneModel, Simple): 8.4 + 3·3.4, 8.4 + 2·14, 8.4 + 3·3.4.
  EXPECT_NEAR(dag.latency_us, 3 * 8.4 + 6 * 3.4 + 2 * 14.0, 1e-9);
}

TEST(CustomHierarchical, ReduceScatterAndAllGatherFlows) {
  const auto comm = testing::custom_comm(4, 2);
  const std::int64_t bytes = 8000;
  for (const auto kind : {CollKind::ReduceScatter, CollKind::AllGather}) {
    const auto dag = custom_flows(CollectiveAlgorithm::Hierarchical, kind, bytes, comm, {});
    testing::expect_well_formed(dag);
    const auto t = testing::tally(dag, FlowEndpoint::Kind::Gpu, 8);
    // Intra ring of 2 on S: S/2; inter ring of 4 on S/2: 3/4·S/2.
    for (int r = 0; r < 8; ++r) EXPECT_EQ(t.sent[r], bytes / 2 + 3 * bytes / 8) << r;
    EXPECT_EQ(testing::dag_depth(dag), 2);
    const bool network_first = kind == CollKind::AllGather;
    EXPECT_EQ(dag.flows.front().link == LinkClass::Network, network_first);
  }
}

}  // namespace
}  // namespace trainsim
