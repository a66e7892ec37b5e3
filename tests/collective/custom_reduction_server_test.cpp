// Reduction server (Vertex AI, 2021): a node reduces inside itself over NVLink, its NICs carry the
// gradient to the reducers once and back once, then the node all-gathers. Time independent of the
// node count, about half of ring's network bytes (the published ~2x algbw) for one GPU per node and
// for 8 GPUs per node, and a flow DAG that conserves bytes per worker and per reducer.
#include <gtest/gtest.h>

#include "collective/algorithms/custom_algorithms.hpp"
#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/error.hpp"
#include "custom_test_support.hpp"
#include "support/byte_sizes.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using test::GiB;
using testing::kIntraBw;  // the stub NVLink bandwidth of the intra-node phases
using testing::kNetBw;

// A stub for the NCCL-priced intra-node phases: (q-1)/q·S at kIntraBw, recording each call.
struct Calls {
  std::vector<std::tuple<CollKind, std::int64_t, int, int>> seen;
};

double stub_phase_us(std::int64_t bytes, int q) {
  return (q - 1.0) / q * static_cast<double>(bytes) / (1000 * kIntraBw);
}

CustomAlgoContext context(int nnodes, int ppn, ReductionServerSpec rs, Calls* calls = nullptr) {
  CustomAlgoContext ctx;
  ctx.nranks = nnodes * ppn;
  ctx.nnodes = nnodes;
  ctx.ppn = ppn;
  ctx.intra_bw_GBps = kIntraBw;
  ctx.net_bw_GBps = kNetBw;
  ctx.reduction_server = rs;
  ctx.nccl = [calls](CollKind k, std::int64_t b, int q, int m) {
    if (calls) calls->seen.emplace_back(k, b, q, m);
    CollectiveEstimate e;
    e.time = from_microseconds(stub_phase_us(b, q));
    return e;
  };
  return ctx;
}

double rs_us(std::int64_t bytes, const CustomAlgoContext& ctx) {
  return to_microseconds(estimate_custom(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, bytes, ctx).time);
}

// One GPU per node, worker-bound: latency + S / worker_bw (send and receive overlap on opposite directions).
TEST(CustomReductionServer, OneGpuPerNodeWorkerBoundTime) {
  const double S = GiB;
  Calls calls;
  EXPECT_NEAR(rs_us(GiB, context(16, 1, {16, 400, 10}, &calls)), 10 + S / (1000 * kNetBw), 1e-3);
  EXPECT_TRUE(calls.seen.empty());  // no intra-node phases with one GPU per node
}

// 8 GPUs per node: NCCL reduce-scatter and all-gather of S inside the node, and each GPU sends only its
// S/8 shard over its NIC share: latency + S/8 / worker_bw + the two intra-node phases.
TEST(CustomReductionServer, MultiGpuNodeReducesInsideFirst) {
  const double S = GiB;
  Calls calls;
  const double t = rs_us(GiB, context(2, 8, {16, 400, 10}, &calls));
  EXPECT_NEAR(t, 10 + S / 8 / (1000 * kNetBw) + 2 * stub_phase_us(GiB, 8), 1e-3);
  ASSERT_EQ(calls.seen.size(), 2u);
  EXPECT_EQ(calls.seen[0], std::make_tuple(CollKind::ReduceScatter, GiB, 8, 1));
  EXPECT_EQ(calls.seen[1], std::make_tuple(CollKind::AllGather, GiB, 8, 1));
}

// Reducer-bound: few reducers each carry (worker nodes)·S/R; workers are nodes, not GPUs.
TEST(CustomReductionServer, ReducerBoundTime) {
  const double S = GiB;
  const ReductionServerSpec rs{2, 100, 10};  // 12.5 GB/s per reducer
  EXPECT_NEAR(rs_us(GiB, context(4, 8, rs)), 10 + 4 * S / 2 / (1000 * 12.5) + 2 * stub_phase_us(GiB, 8), 1e-3);
  EXPECT_NEAR(rs_us(GiB, context(4, 1, rs)), 10 + 4 * S / 2 / (1000 * 12.5), 1e-3);
  // servers = 0: one reducer per worker node, each receiving one node's S.
  const ReductionServerSpec per_node{0, 100, 10};
  EXPECT_NEAR(rs_us(GiB, context(4, 8, per_node)), 10 + S / (1000 * 12.5) + 2 * stub_phase_us(GiB, 8), 1e-3);
}

// 16 vs 1024 nodes, same per-GPU bandwidth, reducers scaled with the nodes: the same time.
TEST(CustomReductionServer, TimeIndependentOfNodeCount) {
  EXPECT_EQ(rs_us(1 << 28, context(16, 1, {16, 400, 10})), rs_us(1 << 28, context(1024, 1, {1024, 400, 10})));
  EXPECT_EQ(rs_us(1 << 28, context(2, 8, {2, 400, 10})), rs_us(1 << 28, context(128, 8, {128, 400, 10})));
  // Ring all-reduce's bandwidth term grows towards 2·S/bw; the reduction server's stays S/bw.
  const double S = 1 << 28;
  const double large = rs_us(1 << 28, context(1024, 1, {1024, 400, 10}));
  const double ring_1024 = 2.0 * 1023 / 1024 * S / (1000 * kNetBw);
  EXPECT_NEAR((large - 10) / ring_1024, 1024.0 / (2 * 1023), 1e-9);
}

// Groups whose nodes hold different numbers of ranks have no uniform shard layout: every GPU is a worker.
TEST(CustomReductionServer, NonUniformGroupsUsePerGpuWorkers) {
  auto ctx = context(3, 3, {0, 400, 10});
  ctx.nranks = 8;                                                          // 3 + 3 + 2
  EXPECT_NEAR(rs_us(GiB, ctx), 10 + 8.0 * GiB / 3 / (1000 * 50.0), 1e-3);  // reducer-bound: 8 workers, 3 reducers
}

// The published ratio on real clusters (Vertex AI blog: ~2x ring's algbw), through the collective model
// the scenario's `algorithms:` block uses: 8 nodes with one 100 Gb/s NIC each, 1 or 8 A100 per node.
double algbw(const ClusterSpec& c, CollectiveAlgorithm choice) {
  AlgorithmsSpec spec;
  spec.all_reduce = choice;
  spec.reduction_server.nic_gbps = 100;
  const auto model = make_collective_model(c, {}, spec);
  const auto world = GroupPlacement::of(testing::first_ranks(c.num_gpus), c);
  const CollectiveEstimate e = model->estimate(CollKind::AllReduce, GiB, world);
  EXPECT_EQ(e.algorithm, choice == CollectiveAlgorithm::ReductionServer ? NcclAlgorithm::ReductionServer : e.algorithm);
  return static_cast<double>(GiB) / 1e9 / to_seconds(e.time);
}

ClusterSpec one_nic_cluster(int nodes, int gpus_per_node) {
  ClusterSpec c = testing::a100_cluster(nodes);
  c.gpus_per_node = gpus_per_node;
  c.num_gpus = nodes * gpus_per_node;
  c.scale_up.domain_size = gpus_per_node;
  c.nics_per_node = 1;
  c.nic_gbps = 100;
  return c;
}

TEST(CustomReductionServer, ReproducesThePublishedRatioForOneAndEightGpusPerNode) {
  for (const int ppn : {1, 8}) {
    SCOPED_TRACE(ppn);
    const ClusterSpec c = one_nic_cluster(8, ppn);
    const double ring = algbw(c, CollectiveAlgorithm::Nccl);
    const double rs = algbw(c, CollectiveAlgorithm::ReductionServer);
    // The node's NIC carries S each way instead of ring's 2(n-1)/n·S; NVLink phases cost a little on 8 GPUs.
    EXPECT_GT(rs / ring, 1.7) << "ring " << ring << " GB/s, reduction server " << rs << " GB/s";
    EXPECT_LT(rs / ring, 2.1) << "ring " << ring << " GB/s, reduction server " << rs << " GB/s";
    // And it is the node's NIC that bounds it: at most 12.5 GB/s whatever the GPU count.
    EXPECT_LT(rs, 12.5);
    EXPECT_GT(rs, 0.85 * 12.5);
  }
}

// Flow bytes with one GPU per node: each worker sends exactly S and receives S; each reducer m·S/R.
TEST(CustomReductionServer, FlowBytesPerWorkerAndReducerOneGpuPerNode) {
  const auto comm = testing::custom_comm(16, 1);
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
  for (const Flow& f : dag.flows) EXPECT_EQ(f.link, LinkClass::Network);
}

// Network bytes of one flow set: per GPU to/from reducers (Network flows only).
struct NetBytes {
  std::vector<std::int64_t> sent, received;
};
NetBytes network_bytes(const FlowDag& dag, int n) {
  NetBytes b{std::vector<std::int64_t>(static_cast<std::size_t>(n), 0),
             std::vector<std::int64_t>(static_cast<std::size_t>(n), 0)};
  for (const Flow& f : dag.flows) {
    if (f.link != LinkClass::Network) continue;
    if (f.src.kind == FlowEndpoint::Kind::Gpu) b.sent[static_cast<std::size_t>(f.src.index)] += f.payload;
    if (f.dst.kind == FlowEndpoint::Kind::Gpu) b.received[static_cast<std::size_t>(f.dst.index)] += f.payload;
  }
  return b;
}

// 8 GPUs per node: each GPU's network traffic is its S/8 shard each way, so a node's NICs carry S once
// each way; the intra-node rings move (q-1)/q·S per GPU per phase; reducers get m·S/R.
TEST(CustomReductionServer, FlowBytesMultiGpuNodes) {
  const int m = 4, q = 8, n = m * q;
  const auto comm = testing::custom_comm(m, q, 1);
  const std::int64_t S = (std::int64_t{1} << 20) + 24;  // not a multiple of q: partitions must stay exact
  const ReductionServerSpec rs{2, 200, 10};
  const auto dag = custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, S, comm, rs);
  testing::expect_well_formed(dag);
  const NetBytes net = network_bytes(dag, n);
  for (int node = 0; node < m; ++node) {
    std::int64_t node_sent = 0, node_received = 0;
    for (int l = 0; l < q; ++l) {
      const int r = node * q + l;
      node_sent += net.sent[r];
      node_received += net.received[r];
      EXPECT_NEAR(static_cast<double>(net.sent[r]), static_cast<double>(S) / q, 1.0) << r;
    }
    EXPECT_EQ(node_sent, S);
    EXPECT_EQ(node_received, S);
  }
  const auto reducers = testing::tally(dag, FlowEndpoint::Kind::Reducer, 2);
  EXPECT_EQ(reducers.received[0] + reducers.received[1], m * S);
  EXPECT_EQ(reducers.sent[0] + reducers.sent[1], m * S);
  // Intra-node ring traffic: reduce-scatter + all-gather, (q-1)/q·S each per GPU.
  const auto all = testing::tally(dag, FlowEndpoint::Kind::Gpu, n);
  for (int r = 0; r < n; ++r) {
    EXPECT_NEAR(static_cast<double>(all.sent[r] - net.sent[r]), 2.0 * (q - 1) / q * static_cast<double>(S), 2.0 * q);
  }
  // Latency: the round trip plus NCCL's Ring/Simple latency of the two 7-hop NVLink rings.
  EXPECT_NEAR(dag.latency_us, 10 + 2 * (8.4 + 7 * 3.4), 1e-9);
}

// Order: a GPU's first piece to a reducer waits for the reduce-scatter flow into it; a reducer returns a
// piece only after the m GPUs of that local index delivered theirs; the all-gather waits for the returns.
TEST(CustomReductionServer, PhasesDependOnEachOther) {
  const int m = 3, q = 4;
  const auto comm = testing::custom_comm(m, q, 1);
  const auto dag = custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 16, comm, {2, 100, 5});
  std::size_t returns = 0, first_sends_after_rs = 0, ag_flows = 0;
  for (std::size_t i = 0; i < dag.flows.size(); ++i) {
    const Flow& f = dag.flows[i];
    if (f.src.kind == FlowEndpoint::Kind::Reducer) {
      ++returns;
      ASSERT_EQ(f.dep_end - f.dep_begin, static_cast<std::uint32_t>(m));
      for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) {
        const Flow& in = dag.flows[dag.dep_index[d]];
        EXPECT_EQ(in.dst, f.src);
        EXPECT_EQ(in.payload, f.payload);
        EXPECT_EQ(comm.local_of[in.src.index], comm.local_of[f.dst.index]);  // same local index, one per node
      }
    } else if (f.dst.kind == FlowEndpoint::Kind::Reducer && f.dep_end - f.dep_begin == 1) {
      const Flow& before = dag.flows[dag.dep_index[f.dep_begin]];
      if (before.link != LinkClass::Network) {
        ++first_sends_after_rs;
        EXPECT_EQ(before.dst, f.src);  // the reduce-scatter hop into this GPU
      }
    } else if (f.link != LinkClass::Network && f.dep_end > f.dep_begin) {
      ++ag_flows;
      for (std::uint32_t d = f.dep_begin; d < f.dep_end; ++d) {
        const Flow& in = dag.flows[dag.dep_index[d]];
        EXPECT_EQ(in.src.kind, FlowEndpoint::Kind::Reducer);
        EXPECT_EQ(comm.node_of[in.dst.index], comm.node_of[f.src.index]);
      }
    }
  }
  EXPECT_EQ(first_sends_after_rs, static_cast<std::size_t>(m * q * 2));  // every GPU, every reducer
  EXPECT_EQ(ag_flows, static_cast<std::size_t>(m * q));
  EXPECT_GT(returns, 0u);
  EXPECT_LE(dag.dep_index.size(), dag.flows.size() + static_cast<std::size_t>(m * m * q * 2 * 4));
  EXPECT_EQ(testing::dag_depth(dag), 1 + 4 + 1 + 1);  // RS hop, 4 pipelined pieces, last return, AG hop
}

// One GPU per node: the DAG depth is the pipeline alone, return lists are shared.
TEST(CustomReductionServer, ReturnFlowsWaitForEveryWorker) {
  const auto comm = testing::custom_comm(4, 1);
  const auto dag = custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 16, comm, {2, 100, 5});
  for (const Flow& f : dag.flows) {
    if (f.src.kind != FlowEndpoint::Kind::Reducer) continue;
    ASSERT_EQ(f.dep_end - f.dep_begin, 4u);
  }
  EXPECT_LE(dag.dep_index.size(), dag.flows.size());
  EXPECT_EQ(testing::dag_depth(dag), 4 + 1);  // 4 pipelined pieces, then the last return
}

// NICs follow the physical GPU, not its position in the group: the DP group of GPUs 1, 3, 5, 7 of each
// node sends through NICs 1, 3, 5, 7 (DGX-H100: one NIC per GPU), leaving 0, 2, 4, 6 to the group of
// the even GPUs that runs at the same time; on a DGX-A100 pair the odd GPU takes the pair's second NIC.
TEST(CustomReductionServer, NetworkFlowsUseEachGpusOwnRail) {
  for (const bool a100 : {false, true}) {
    SCOPED_TRACE(a100 ? "A100" : "H100");
    const ClusterSpec c = a100 ? testing::a100_cluster(2) : testing::h100_cluster(2);
    std::vector<int> odd;
    for (int node = 0; node < 2; ++node)
      for (int l = 1; l < 8; l += 2) odd.push_back(node * 8 + l);
    const auto comm = NcclAnalyticalModel(c, {}).communicator(GroupPlacement::of(odd, c));
    const auto dag =
        custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 20, *comm, {2, 200, 10});
    int network_flows = 0;
    for (const Flow& f : dag.flows) {
      if (f.link != LinkClass::Network || f.src.kind != FlowEndpoint::Kind::Gpu) continue;
      ++network_flows;
      const int physical = odd[static_cast<std::size_t>(f.src.index)] % 8;
      EXPECT_EQ(f.src_net, physical) << "group rank " << f.src.index;
    }
    EXPECT_GT(network_flows, 0);
  }
}

TEST(CustomReductionServer, BadSpecsThrow) {
  EXPECT_THROW(rs_us(1 << 20, context(2, 8, {-1, 100, 10})), Error);
  EXPECT_THROW(rs_us(1 << 20, context(2, 8, {0, 0, 10})), Error);
  EXPECT_THROW(rs_us(1 << 20, context(2, 8, {0, 100, -1})), Error);
  auto no_net = context(2, 8, {});
  no_net.net_bw_GBps = 0;
  EXPECT_THROW(rs_us(1 << 20, no_net), Error);
  auto no_nccl = context(2, 8, {});
  no_nccl.nccl = nullptr;
  EXPECT_THROW(rs_us(1 << 20, no_nccl), InternalError);  // the selector always gives one
  EXPECT_NO_THROW(rs_us(1 << 20, [] {
    auto c = context(2, 1, {});
    c.nccl = nullptr;
    return c;
  }()));
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 20,
                            testing::custom_comm(2, 8), {-3, 100, 10}),
               Error);
}

}  // namespace
}  // namespace trainsim
