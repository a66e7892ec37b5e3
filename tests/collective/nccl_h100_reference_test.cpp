// Reproduces NCCL 2.30.7's own cost-model numbers for 2 nodes × 8 H100 with 8 × 400G rail-optimised
// NICs (computed by running NCCL's host code: ncclTopoCompute, ncclTopoTuneModel, ncclTopoGetAlgoTime; see
// docs/collectives.md). Every expected value below is NCCL's, with its derivation, not from our output.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/units.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using A = NcclAlgorithm;
using P = NcclProtocol;
using F = NcclFunction;

class H100TwoNodes : public ::testing::Test {
 protected:
  ClusterSpec cluster = testing::h100_cluster(2);
  GroupPlacement world = GroupPlacement::of(testing::first_ranks(16), cluster);
  NcclAnalyticalModel with_nvls{cluster, {}};
  NcclAnalyticalModel without_nvls{cluster, {{"NCCL_NVLS_ENABLE", "0"}}};
  NcclCostEntry entry(F f, A a, P p) const { return with_nvls.tuning(world)->entry(f, a, p); }
};

// NCCL's result: ring graph 8 channels × 48 GB/s (PCIe Gen5 GPU->NIC is the bottleneck), comm->nChannels
// = 8 × 2 = 16 (no further doubling since 16 < 16 is false), nvlsChannels 16, NVLS graph 8 × 40/48.
TEST_F(H100TwoNodes, GraphsMatchNcclSearch) {
  const auto& t = with_nvls.tuning(world)->topology();
  EXPECT_EQ(t.ring.channels, 8);
  EXPECT_DOUBLE_EQ(t.ring.bw_intra, 48.0);
  EXPECT_EQ(t.comm_channels, 16);
  EXPECT_EQ(t.nvls_channels, 16);
  EXPECT_EQ(t.nvls.channels, 8);
  EXPECT_DOUBLE_EQ(t.nvls.bw_intra, 40.0);
  EXPECT_DOUBLE_EQ(t.nvls.bw_inter, 48.0);
  EXPECT_TRUE(t.tree_pattern_tree);
}

// NCCL's tuning table (lat µs / algBw GB/s). Derivations:
//   Ring/Simple AllReduce: bw = 8·48 = 384 × 16/30 = 204.8; lat = 8.4 + 28·max(3.4, 3·1.0) + 2·14 = 131.6.
//   AllGather Ring/Simple: 384 × 16/15 = 409.6; lat = 8.4 + 14·3.4 + 1·14 = 70.0.
//   Tree/LL: min(0.92·384, 8·41.4) = 331.2 -> min(331.2/3.8, 39.0) = 39.0 -> ×0.85 -> ×0.5 = 16.6;
//            lat = 6.8 + 2·(7·0.6 + 1·5.0) = 25.2.
//   NVLSTree: min(40·0.85·7/8·2, 48·2, 57.7) = 57.7 -> 8·57.7 × 16/30 = 246.2; lat = 25 + 2·1·20.9 = 66.8.
TEST_F(H100TwoNodes, CostTableMatchesSection93) {
  struct Row {
    F f;
    A a;
    P p;
    double lat, bw;
  };
  const Row rows[] = {
      {F::AllGather, A::Ring, P::LL, 23.3, 41.6},          {F::AllGather, A::Ring, P::LL128, 44.6, 313.2},
      {F::AllGather, A::Ring, P::Simple, 70.0, 409.6},     {F::ReduceScatter, A::Ring, P::Simple, 70.0, 409.6},
      {F::Broadcast, A::Ring, P::LL, 49.8, 39.0},          {F::Broadcast, A::Ring, P::LL128, 78.0, 293.6},
      {F::Broadcast, A::Ring, P::Simple, 232.4, 384.0},    {F::Reduce, A::Ring, P::Simple, 232.4, 384.0},
      {F::AllReduce, A::Tree, P::LL, 25.2, 16.6},          {F::AllReduce, A::Tree, P::LL128, 48.5, 124.8},
      {F::AllReduce, A::Tree, P::Simple, 92.4, 140.8},     {F::AllReduce, A::Ring, P::LL, 40.0, 20.8},
      {F::AllReduce, A::Ring, P::LL128, 75.2, 156.6},      {F::AllReduce, A::Ring, P::Simple, 131.6, 204.8},
      {F::AllReduce, A::NVLSTree, P::Simple, 66.8, 246.2},
  };
  for (const auto& r : rows) {
    const auto e = entry(r.f, r.a, r.p);
    SCOPED_TRACE(std::string(to_string(r.f)) + " " + to_string(r.a) + "/" + to_string(r.p));
    EXPECT_NEAR(e.latency_us, r.lat, 0.05);
    EXPECT_NEAR(e.algbw_GBps, r.bw, 0.05);
  }
  // Not applicable here: PAT needs one rank per node; plain NVLS across nodes needs CollNet.
  EXPECT_EQ(entry(F::AllGather, A::PAT, P::Simple).algbw_GBps, 0.0);
  EXPECT_EQ(entry(F::AllReduce, A::NVLS, P::Simple).algbw_GBps, 0.0);
  EXPECT_EQ(entry(F::AllGather, A::Tree, P::Simple).algbw_GBps, 0.0);
}

// NCCL, 1 GiB AllReduce. Without NVLS: Ring/Simple, 16 channels, 184.24 (= 131.6 × 1.4 ring plateau)
// + 2^30/(1000·204.8) = 5,427 µs. With NVLS: NVLSTree/Simple, 16 NVLS channels,
// 66.8 + 2^30/(1000·246.2) = 4,428 µs.
TEST_F(H100TwoNodes, OneGiBAllReduce) {
  const auto ring = without_nvls.estimate(CollKind::AllReduce, static_cast<std::int64_t>(kGiB), world);
  EXPECT_EQ(ring.algorithm, A::Ring);
  EXPECT_EQ(ring.protocol, P::Simple);
  EXPECT_EQ(ring.channels, 16);
  EXPECT_NEAR(to_microseconds(ring.time), 5427.0, 5427.0 * 0.02);

  const auto nvls = with_nvls.estimate(CollKind::AllReduce, static_cast<std::int64_t>(kGiB), world);
  EXPECT_EQ(nvls.algorithm, A::NVLSTree);
  EXPECT_EQ(nvls.protocol, P::Simple);
  EXPECT_EQ(nvls.channels, 16);
  EXPECT_NEAR(to_microseconds(nvls.time), 4428.0, 4428.0 * 0.02);
  // algbw = bytes / time; busbw = algbw · 2·15/16.
  EXPECT_NEAR(nvls.algbw_GBps, kGiB / (1000.0 * 4428.0), 5.0);
  EXPECT_NEAR(nvls.busbw_GBps, nvls.algbw_GBps * 30.0 / 16.0, 1e-9);
}

// NCCL, 8 KiB AllReduce -> Tree/LL, 25.2 + 8192/(1000·16.6·0.7) = 25.9 µs (tree correction LL[7] = 0.7);
// channels: 8192 < nc·512·8 until nc = 2.
TEST_F(H100TwoNodes, EightKiBAllReduce) {
  const auto e = with_nvls.estimate(CollKind::AllReduce, 8192, world);
  EXPECT_EQ(e.algorithm, A::Tree);
  EXPECT_EQ(e.protocol, P::LL);
  EXPECT_EQ(e.channels, 2);
  EXPECT_NEAR(to_microseconds(e.time), 25.9, 25.9 * 0.02);
}

// NCCL_NTHREADS lowers the threads per channel, so topoGetAlgoInfo's reduction keeps more channels:
// 8192 >= nc · 64 threads · 8 B holds up to nc = 16 (LL); LL128 threads follow NCCL_LL128_NTHREADS.
TEST_F(H100TwoNodes, ThreadCountsSetTheChannelsOfSmallCalls) {
  const NcclAnalyticalModel few_threads{cluster, {{"NCCL_NTHREADS", "64"}}};
  EXPECT_EQ(few_threads.estimate(CollKind::AllReduce, 8192, world).channels, 16);
  const NcclAnalyticalModel ll128_threads{cluster, {{"NCCL_LL128_NTHREADS", "160"}}};
  const auto tuning = ll128_threads.tuning(world);
  EXPECT_EQ(tuning->channels_for(A::Tree, P::LL128, 64 * 1024), 16);                   // 16 · 160 · 8 <= 64 KiB
  EXPECT_EQ(with_nvls.tuning(world)->channels_for(A::Tree, P::LL128, 64 * 1024), 12);  // 12 · 640 · 8 <= 64 KiB
}

// NCCL, 64 MiB AllGather (total output) -> Ring/Simple, 16 channels, 70.0 + 2^26/(1000·409.6) = 233.8 µs.
TEST_F(H100TwoNodes, SixtyFourMiBAllGather) {
  const auto e = with_nvls.estimate(CollKind::AllGather, static_cast<std::int64_t>(64 * kMiB), world);
  EXPECT_EQ(e.algorithm, A::Ring);
  EXPECT_EQ(e.protocol, P::Simple);
  EXPECT_EQ(e.channels, 16);
  EXPECT_NEAR(to_microseconds(e.time), 233.8, 233.8 * 0.02);
  // nccl-tests busbw for all-gather: algbw · 15/16.
  EXPECT_NEAR(e.busbw_GBps, e.algbw_GBps * 15.0 / 16.0, 1e-9);
}

// NCCL's "selection by size" rows (winner and time; NVLS available / not available).
TEST_F(H100TwoNodes, SelectionBySize) {
  struct Case {
    const NcclAnalyticalModel* m;
    CollKind k;
    double bytes;
    A a;
    P p;
    double us;
  };
  const Case cases[] = {
      {&with_nvls, CollKind::AllReduce, 64 * 1024.0, A::Tree, P::LL, 31.8},
      {&with_nvls, CollKind::AllReduce, kMiB, A::Tree, P::LL128, 62.5},
      {&with_nvls, CollKind::AllReduce, 8 * kMiB, A::NVLSTree, P::Simple, 100.9},
      {&without_nvls, CollKind::AllReduce, 8 * kMiB, A::Tree, P::LL128, 123.2},
      {&with_nvls, CollKind::AllReduce, 64 * kMiB, A::NVLSTree, P::Simple, 339.4},
      {&without_nvls, CollKind::AllReduce, 64 * kMiB, A::Ring, P::LL128, 503.8},
      {&with_nvls, CollKind::AllReduce, 256 * kMiB, A::NVLSTree, P::Simple, 1157.0},
      {&without_nvls, CollKind::AllReduce, 256 * kMiB, A::Ring, P::Simple, 1495.0},
      {&with_nvls, CollKind::AllGather, 8192, A::Ring, P::LL, 23.5},
      {&with_nvls, CollKind::AllGather, kMiB, A::Ring, P::LL128, 47.9},
      {&with_nvls, CollKind::AllGather, 8 * kMiB, A::Ring, P::LL128, 71.4},
      {&with_nvls, CollKind::AllGather, kGiB, A::Ring, P::Simple, 2691.0},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(to_string(c.k)) + " " + std::to_string(c.bytes));
    const auto e = c.m->estimate(c.k, static_cast<std::int64_t>(c.bytes), world);
    EXPECT_EQ(e.algorithm, c.a);
    EXPECT_EQ(e.protocol, c.p);
    EXPECT_NEAR(to_microseconds(e.time), c.us, c.us * 0.02);
  }
}

}  // namespace
}  // namespace trainsim
