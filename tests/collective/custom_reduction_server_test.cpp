// Reduction server (Vertex AI, 2021): time independent of the worker count, half of ring's bytes per
// worker, and a flow DAG that conserves bytes per worker and per reducer.
#include <gtest/gtest.h>

#include "collective/custom_algorithms.hpp"
#include "core/error.hpp"
#include "custom_test_support.hpp"

namespace trainsim {
namespace {

constexpr double kNetBw = 50;  // 400 Gb/s per GPU

CustomAlgoContext context(int nnodes, int ppn, ReductionServerSpec rs) {
  CustomAlgoContext ctx;
  ctx.nranks = nnodes * ppn;
  ctx.nnodes = nnodes;
  ctx.ppn = ppn;
  ctx.intra_bw_GBps = 300;
  ctx.net_bw_GBps = kNetBw;
  ctx.reduction_server = rs;
  return ctx;
}

double rs_us(std::int64_t bytes, const CustomAlgoContext& ctx) {
  return to_microseconds(estimate_custom(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, bytes, ctx).time);
}

// Worker-bound: latency + S / worker_bw (sending and receiving overlap on opposite link directions).
TEST(CustomReductionServer, WorkerBoundTime) {
  const double S = 1 << 30;
  const ReductionServerSpec rs{16, 400, 10};  // 16 reducers for 16 workers: each carries S
  EXPECT_NEAR(rs_us(1 << 30, context(2, 8, rs)), 10 + S / (1000 * kNetBw), 1e-3);
}

// Reducer-bound: few reducers carry n·S/R each.
TEST(CustomReductionServer, ReducerBoundTime) {
  const double S = 1 << 30;
  const ReductionServerSpec rs{2, 100, 10};  // 12.5 GB/s per reducer
  EXPECT_NEAR(rs_us(1 << 30, context(2, 8, rs)), 10 + 16 * S / 2 / (1000 * 12.5), 1e-3);
  // servers = 0: one reducer per worker node.
  const ReductionServerSpec per_node{0, 100, 10};
  EXPECT_NEAR(rs_us(1 << 30, context(2, 8, per_node)), 10 + 16 * S / 2 / (1000 * 12.5), 1e-3);
}

// 16 vs 1024 workers, same per-GPU bandwidth, reducers scaled with n: the same time.
TEST(CustomReductionServer, TimeIndependentOfWorkerCount) {
  const double small = rs_us(1 << 28, context(2, 8, {16, 400, 10}));
  const double large = rs_us(1 << 28, context(128, 8, {1024, 400, 10}));
  EXPECT_EQ(small, large);
  // Ring all-reduce's bandwidth term grows towards 2·S/bw; the reduction server's stays S/bw.
  const double S = 1 << 28;
  const double ring_1024 = 2.0 * 1023 / 1024 * S / (1000 * kNetBw);
  EXPECT_NEAR((large - 10) / ring_1024, 1024.0 / (2 * 1023), 1e-9);
}

// Flow bytes: each worker sends exactly S and receives S; each reducer receives and sends n·S/R.
TEST(CustomReductionServer, FlowBytesPerWorkerAndReducer) {
  const auto comm = testing::custom_comm(2, 8);
  const std::int64_t S = 1 << 20;
  const ReductionServerSpec rs{4, 200, 10};
  const auto dag = custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, S, comm, rs);
  testing::expect_well_formed(dag);
  EXPECT_EQ(dag.algorithm, NcclAlgorithm::ReductionServer);
  EXPECT_DOUBLE_EQ(dag.latency_us, 10);
  const auto workers = testing::tally(dag, FlowEndpoint::Kind::Gpu, 16);
  for (int w = 0; w < 16; ++w) {
    EXPECT_EQ(workers.sent[w], S);
    EXPECT_EQ(workers.received[w], S);
  }
  const auto reducers = testing::tally(dag, FlowEndpoint::Kind::Reducer, 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(reducers.received[r], 16 * S / 4);
    EXPECT_EQ(reducers.sent[r], 16 * S / 4);
  }
  for (const Flow& f : dag.flows) {
    EXPECT_EQ(f.link, LinkClass::Network);
    const FlowEndpoint& gpu = f.src.kind == FlowEndpoint::Kind::Gpu ? f.src : f.dst;
    const int gpu_nic = f.src.kind == FlowEndpoint::Kind::Gpu ? f.src_net : f.dst_net;
    EXPECT_EQ(gpu_nic, comm.local_of[gpu.index]);
  }
}

// Half of ring's bytes: ring all-reduce sends 2(n-1)/n·S per rank; the reduction server S.
TEST(CustomReductionServer, WorkerSendsHalfOfRingBytes) {
  const auto comm = testing::custom_comm(128, 8);
  const std::int64_t S = 1 << 20;
  const auto dag = custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, S, comm, {8, 400, 10});
  const auto t = testing::tally(dag, FlowEndpoint::Kind::Gpu, 1024);
  const double ring = 2.0 * 1023 / 1024 * static_cast<double>(S);
  EXPECT_NEAR(static_cast<double>(t.sent[517]) / ring, 0.5, 0.001);
}

// A reducer returns a piece only after all n workers' piece arrived; the dependency list is shared.
TEST(CustomReductionServer, ReturnFlowsWaitForEveryWorker) {
  const auto comm = testing::custom_comm(2, 2);
  const auto dag = custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 16, comm, {2, 100, 5});
  std::size_t returns = 0;
  for (const Flow& f : dag.flows) {
    if (f.src.kind != FlowEndpoint::Kind::Reducer) continue;
    ++returns;
    ASSERT_EQ(f.dep_end - f.dep_begin, 4u);
    for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) {
      const Flow& in = dag.flows[dag.dep_index[d]];
      EXPECT_EQ(in.dst, f.src);
      EXPECT_EQ(in.payload, f.payload);
    }
  }
  EXPECT_EQ(returns, dag.flows.size() / 2);
  // Shared lists: one per (reducer, piece) plus at most one entry per send, not n per return flow.
  EXPECT_LE(dag.dep_index.size(), dag.flows.size());
  EXPECT_EQ(testing::dag_depth(dag), 4 + 1);  // 4 pipelined pieces, then the last return
}

TEST(CustomReductionServer, BadSpecsThrow) {
  EXPECT_THROW(rs_us(1 << 20, context(2, 8, {-1, 100, 10})), Error);
  EXPECT_THROW(rs_us(1 << 20, context(2, 8, {0, 0, 10})), Error);
  EXPECT_THROW(rs_us(1 << 20, context(2, 8, {0, 100, -1})), Error);
  auto no_net = context(2, 8, {});
  no_net.net_bw_GBps = 0;
  EXPECT_THROW(rs_us(1 << 20, no_net), Error);
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 20,
                            testing::custom_comm(2, 8), {-3, 100, 10}),
               Error);
}

}  // namespace
}  // namespace trainsim
