// Halving-doubling (Rabenseifner; Thakur, Rabenseifner & Gropp 2005): closed forms, link classes
// per step, non-power-of-two folding, and byte conservation of the flow DAG.
#include <gtest/gtest.h>

#include <cmath>

#include "collective/algorithms/custom_algorithms.hpp"
#include "collective/algorithms/halving_doubling_plan.hpp"
#include "core/error.hpp"
#include "custom_test_support.hpp"

namespace trainsim {
namespace {

using testing::custom_context;
using testing::kIntraBw;
using testing::kIntraLat;
using testing::kNetBw;
using testing::kNetLat;

double hd_us(CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx) {
  return to_microseconds(estimate_custom(CollectiveAlgorithm::HalvingDoubling, kind, bytes, ctx).time);
}

double msg(double bytes, double lat, double bw) { return lat + bytes / (1000.0 * bw); }

// One node of 8: 2·log2(8)·lat + 2·(7/8)·S/bw (Thakur et al. 2005, eq. for Rabenseifner's algorithm).
TEST(CustomHalvingDoubling, SingleNodeAllReduceClosedForm) {
  const double S = 1 << 30;
  const double expected = 2 * 3 * kIntraLat + 2.0 * 7.0 / 8.0 * S / (1000.0 * kIntraBw);
  EXPECT_NEAR(hd_us(CollKind::AllReduce, 1 << 30, custom_context(1, 8)), expected, 1e-3);
}

// 4 nodes × 8: steps at distance 1, 2, 4 stay on the node (S/2, S/4, S/8 over NVLink), distance 8
// and 16 cross nodes (S/16, S/32 over the network); the all-gather mirrors them.
TEST(CustomHalvingDoubling, StepsUseIntraOrNetworkLinksByPartnerDistance) {
  const double S = 1 << 30;
  const double expected =
      2 * (msg(S / 2, kIntraLat, kIntraBw) + msg(S / 4, kIntraLat, kIntraBw) + msg(S / 8, kIntraLat, kIntraBw) +
           msg(S / 16, kNetLat, kNetBw) + msg(S / 32, kNetLat, kNetBw));
  EXPECT_NEAR(hd_us(CollKind::AllReduce, 1 << 30, custom_context(4, 8)), expected, 1e-3);
}

// With ppn = 1 every step is a network message: the latency term is 2·log2(n)·lat.
TEST(CustomHalvingDoubling, LatencyGrowsWithLog2OfRanks) {
  double previous = 0;
  for (int n = 2; n <= 1024; n *= 2) {
    const double t = hd_us(CollKind::AllReduce, 8, custom_context(n, 1));
    const double log2n = std::log2(static_cast<double>(n));
    EXPECT_NEAR(t, 2 * log2n * kNetLat, 0.01) << n;  // 8 bytes: the bandwidth term is negligible
    EXPECT_GT(t, previous);
    previous = t;
  }
}

TEST(CustomHalvingDoubling, ReduceScatterAndAllGatherAreTheHalves) {
  const auto ctx = custom_context(4, 8);
  const std::int64_t S = 1 << 28;
  const double rs = hd_us(CollKind::ReduceScatter, S, ctx), ag = hd_us(CollKind::AllGather, S, ctx);
  EXPECT_NEAR(rs, ag, 1e-6);
  EXPECT_NEAR(rs + ag, hd_us(CollKind::AllReduce, S, ctx), 1e-5);
}

// 6 ranks on one node: p = 4, ranks 0, 2 send S to 1, 3 first and get S back at the end.
TEST(CustomHalvingDoubling, NonPowerOfTwoFoldsExtraRanks) {
  const double S = 1 << 20;
  const double steps = 2 * (msg(S / 2, kIntraLat, kIntraBw) + msg(S / 4, kIntraLat, kIntraBw));
  const double folds = 2 * msg(S, kIntraLat, kIntraBw);
  EXPECT_NEAR(hd_us(CollKind::AllReduce, 1 << 20, custom_context(1, 6)), steps + folds, 1e-4);
  // ReduceScatter folds S in and only the extra rank's S/n block out; AllGather the reverse.
  EXPECT_NEAR(hd_us(CollKind::ReduceScatter, 1 << 20, custom_context(1, 6)),
              steps / 2 + msg(S, kIntraLat, kIntraBw) + msg(S / 6, kIntraLat, kIntraBw), 1e-4);
  EXPECT_NEAR(hd_us(CollKind::AllGather, 1 << 20, custom_context(1, 6)),
              steps / 2 + msg(S, kIntraLat, kIntraBw) + msg(S / 6, kIntraLat, kIntraBw), 1e-4);
}

// 3 nodes of 6 (n = 18, p = 16, r = 2): ranks 0, 2 fold into 1, 3; survivors are ranks 1, 3, 4..17.
// Distance 1 pairs survivors (2i, 2i+1) = ranks (1,3), (4,5), (6,7), ... (16,17): all on one node.
// Distance 2 pairs survivors 8 and 10 = ranks 10 (node 1) and 12 (node 2): the step crosses nodes
// although 2 < ppn, so the whole step is priced on the network.
TEST(CustomHalvingDoubling, UnevenNodeSizesCheckEveryPair) {
  const HalvingDoublingPlan plan(18);
  EXPECT_EQ(plan.p, 16);
  EXPECT_EQ(plan.extras, 2);
  EXPECT_EQ(plan.rank_of(0), 1);
  EXPECT_EQ(plan.rank_of(2), 4);
  EXPECT_EQ(plan.survivor_of(0), -1);
  EXPECT_EQ(plan.survivor_of(17), 15);
  const double S = 1 << 20;
  // Distance 1: pairs (2i, 2i+1) of survivors = ranks (1,3), (4,5), (6,7), ... (16,17) -> all intra.
  // Distance 2 and up cross nodes (survivors 9/11 = ranks 11/13 straddle nodes 1 and 2).
  const double expected = 2 * msg(S, kIntraLat, kIntraBw) +  // folds: (0,1), (2,3) on node 0
                          2 * (msg(S / 2, kIntraLat, kIntraBw) + msg(S / 4, kNetLat, kNetBw) +
                               msg(S / 8, kNetLat, kNetBw) + msg(S / 16, kNetLat, kNetBw));
  EXPECT_NEAR(hd_us(CollKind::AllReduce, 1 << 20, custom_context(3, 6)), expected, 1e-4);
}

TEST(CustomHalvingDoubling, MissingBandwidthIsAnError) {
  auto ctx = custom_context(2, 8);
  ctx.net_bw_GBps = 0;
  EXPECT_THROW(hd_us(CollKind::AllReduce, 1 << 20, ctx), Error);
  EXPECT_NO_THROW(hd_us(CollKind::AllReduce, 1 << 20, custom_context(1, 8)));
}

// Power-of-two n: every rank sends and receives 2(p-1)/p·S in an AllReduce, (p-1)/p·S in RS or AG.
TEST(CustomHalvingDoubling, FlowBytesAreConserved) {
  const auto comm = testing::custom_comm(2, 8);
  const std::int64_t S = 16 * 1024;
  const auto ar = custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::AllReduce, S, comm, {});
  testing::expect_well_formed(ar);
  const auto t = testing::tally(ar, FlowEndpoint::Kind::Gpu, 16);
  for (int r = 0; r < 16; ++r) {
    EXPECT_EQ(t.sent[r], 2 * 15 * S / 16) << r;
    EXPECT_EQ(t.received[r], 2 * 15 * S / 16) << r;
  }
  EXPECT_EQ(ar.flows.size(), 2u * 4u * 16u);
  EXPECT_EQ(testing::dag_depth(ar), 8);  // 2·log2(16) sequential steps
  EXPECT_EQ(ar.algorithm, NcclAlgorithm::HalvingDoubling);
  for (const auto kind : {CollKind::ReduceScatter, CollKind::AllGather}) {
    const auto half = custom_flows(CollectiveAlgorithm::HalvingDoubling, kind, S, comm, {});
    testing::expect_well_formed(half);
    const auto h = testing::tally(half, FlowEndpoint::Kind::Gpu, 16);
    for (int r = 0; r < 16; ++r) EXPECT_EQ(h.sent[r], 15 * S / 16) << r;
    EXPECT_EQ(testing::dag_depth(half), 4);
  }
}

// Uneven byte counts: blocks of 251, 251, 251, 250 bytes. Reduce-scatter sends every block but the
// one kept (disjoint halves) and receives the kept halves; all-gather the reverse. So each rank sends
// what it receives, within a byte per step of 2·(3/4)·S.
TEST(CustomHalvingDoubling, FlowBytesOfUnevenBuffers) {
  const auto comm = testing::custom_comm(1, 4);
  const std::int64_t S = 1003;
  const auto t = testing::tally(custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::AllReduce, S, comm, {}),
                                FlowEndpoint::Kind::Gpu, 4);
  for (int r = 0; r < 4; ++r) {
    EXPECT_EQ(t.sent[r], t.received[r]) << r;
    EXPECT_NEAR(static_cast<double>(t.sent[r]), 2 * 0.75 * S, 4.0) << r;
  }
  const auto rs =
      testing::tally(custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::ReduceScatter, S, comm, {}),
                     FlowEndpoint::Kind::Gpu, 4);
  std::int64_t kept = 0;
  for (int r = 0; r < 4; ++r) kept += S - rs.sent[r];
  EXPECT_EQ(kept, S);  // the kept blocks partition the buffer
}

// 2 nodes × 8: steps at distance 1, 2, 4 stay on NVLink; distance 8 uses the network through the
// GPU's rail NIC (local index), and each step's flows depend on the rank's previous step.
TEST(CustomHalvingDoubling, FlowLinksNicsAndDependencies) {
  const auto comm = testing::custom_comm(2, 8);
  const auto dag = custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::AllReduce, 1 << 20, comm, {});
  int net = 0;
  for (const Flow& f : dag.flows) {
    const bool crosses = comm.node_of[f.src.index] != comm.node_of[f.dst.index];
    EXPECT_EQ(f.link == LinkClass::Network, crosses);
    if (crosses) {
      ++net;
      EXPECT_EQ(f.src_net, comm.local_of[f.src.index]);
      EXPECT_EQ(f.dst_net, comm.local_of[f.dst.index]);
      EXPECT_EQ(f.src.index % 8, f.dst.index % 8);  // partner at distance 8: same rail
    } else {
      EXPECT_EQ(f.src_net, -1);
    }
  }
  EXPECT_EQ(net, 2 * 16);  // one network step in each phase
  // First step flows have no dependencies, later ones depend on the rank's own send and receive.
  EXPECT_EQ(dag.flows[0].dep_end - dag.flows[0].dep_begin, 0u);
  EXPECT_EQ(dag.flows[16].dep_end - dag.flows[16].dep_begin, 2u);
  // Latency: 3 NVLink and 1 network step per phase at NCCL's Ring/Simple hwLat (3.4 / 14 µs).
  EXPECT_NEAR(dag.latency_us, 2 * (3 * 3.4 + 14.0), 1e-9);
}

// Fewer NICs than GPUs: local % nics.
TEST(CustomHalvingDoubling, SharedNicsUseLocalModuloNics) {
  const auto comm = testing::custom_comm(2, 8, 2);
  const auto dag = custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::AllGather, 1 << 20, comm, {});
  for (const Flow& f : dag.flows) {
    if (f.link == LinkClass::Network) { EXPECT_EQ(f.src_net, comm.local_of[f.src.index] % 2); }
  }
}

// n = 12: ranks 0, 2, 4, 6 fold into 1, 3, 5, 7: they send S and receive S, nothing else.
TEST(CustomHalvingDoubling, FoldedRanksSendAndReceiveTheWholeBuffer) {
  const auto comm = testing::custom_comm(3, 4);
  const std::int64_t S = 8 * 1024;
  const auto dag = custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::AllReduce, S, comm, {});
  testing::expect_well_formed(dag);
  const auto t = testing::tally(dag, FlowEndpoint::Kind::Gpu, 12);
  for (int r : {0, 2, 4, 6}) {
    EXPECT_EQ(t.sent[r], S);
    EXPECT_EQ(t.received[r], S);
  }
  for (int r : {1, 3, 5, 7}) EXPECT_EQ(t.sent[r], 2 * 7 * S / 8 + S);  // p = 8 steps plus the fold-out
  for (int r = 8; r < 12; ++r) EXPECT_EQ(t.sent[r], 2 * 7 * S / 8);
  EXPECT_EQ(testing::dag_depth(dag), 2 * 3 + 2);
}

}  // namespace
}  // namespace trainsim
