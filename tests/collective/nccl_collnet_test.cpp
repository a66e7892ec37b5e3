// CollNet (SHARP in-network reduction; NCCL src/graph/search.cc, src/tuning, src/enqueue.cc topoGetAlgoInfo)
// on the docs/collectives.md example cluster (2 nodes × 8 H100, 8 × 400G NICs) with NCCL_COLLNET_ENABLE=1.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using A = NcclAlgorithm;
using P = NcclProtocol;
using F = NcclFunction;

class CollNetH100 : public ::testing::Test {
 protected:
  ClusterSpec cluster = testing::h100_cluster(2);
  GroupPlacement world = GroupPlacement::of(testing::first_ranks(16), cluster);
  NcclAnalyticalModel collnet{cluster, {{"NCCL_COLLNET_ENABLE", "1"}}};
  NcclAnalyticalModel plain{cluster, {}};
  const NcclTopology& topo() const { return collnet.tuning(world)->topology(); }
  NcclCostEntry entry(F f, A a, P p) const { return collnet.tuning(world)->entry(f, a, p); }
};

// The chain (TREE pattern) is searched with the ring's 8 channels and the direct graph finds one head
// per GPU (8 ≤ NCCL_MAX_DIRECT_ARITY + 1), both at the ring's 48 GB/s (PCIe Gen5 to the NIC). The
// chain's bwIntra is not above its bwInter, so ncclTopoPostset's CollNet +50 % does not apply: 16 channels.
TEST_F(CollNetH100, GraphsAndHeads) {
  const auto& t = topo();
  EXPECT_TRUE(t.collnet_supported);
  EXPECT_TRUE(t.collnet_direct_supported);
  EXPECT_EQ(t.collnet_chain.channels, 8);
  EXPECT_EQ(t.collnet_direct.channels, 8);
  EXPECT_DOUBLE_EQ(t.collnet_chain.bw_intra, 48.0);
  EXPECT_DOUBLE_EQ(t.collnet_direct.bw_intra, 48.0);
  EXPECT_EQ(t.collnet_heads, 8);
  EXPECT_EQ(t.comm_channels, 16);
}

// ncclTopoTuneModel by hand (ppn 8, SM90, CollNet bandwidth always bwIntra):
//   CollNetDirect: busBw = 8·48 = 384; factor = ppn/nCh = 1 -> 1; ×0.85 = 326.4; ×0.5 = 163.2 GB/s;
//                  lat = 2·(min(1,7)·3.7 + 7·0.4) + 31 = 44.0 µs.
//   CollNetChain:  busBw = 384 × 0.5 = 192 GB/s; lat = 2·7·2.8 + 30 = 69.2 µs.
//   NVLS (multi-node, allowed by CollNet): min(40·0.85·7/8·2, 48) = 48 × 8 = 384 × 16/30 = 204.8;
//                  lat = 25 + 18 = 43 µs (no base latency).
TEST_F(CollNetH100, CostEntries) {
  struct Row {
    A a;
    double lat, bw;
  };
  for (const Row& r :
       {Row{A::CollNetDirect, 44.0, 163.2}, Row{A::CollNetChain, 69.2, 192.0}, Row{A::NVLS, 43.0, 204.8}}) {
    SCOPED_TRACE(to_string(r.a));
    const auto e = entry(F::AllReduce, r.a, P::Simple);
    EXPECT_NEAR(e.latency_us, r.lat, 1e-9);
    EXPECT_NEAR(e.algbw_GBps, r.bw, 1e-9);
  }
  // CollNet is Simple only, AllReduce only (the plugin has no iallgather/ireducescatter), and that
  // also keeps AllGather off multi-node NVLS.
  EXPECT_EQ(entry(F::AllReduce, A::CollNetDirect, P::LL).algbw_GBps, 0.0);
  EXPECT_EQ(entry(F::AllReduce, A::CollNetChain, P::LL128).algbw_GBps, 0.0);
  EXPECT_EQ(entry(F::AllGather, A::CollNetDirect, P::Simple).algbw_GBps, 0.0);
  EXPECT_EQ(entry(F::AllGather, A::NVLS, P::Simple).algbw_GBps, 0.0);
  // Without the plugin none of them exists.
  EXPECT_EQ(plain.tuning(world)->entry(F::AllReduce, A::CollNetDirect, P::Simple).algbw_GBps, 0.0);
  EXPECT_EQ(plain.tuning(world)->entry(F::AllReduce, A::NVLS, P::Simple).algbw_GBps, 0.0);
}

// 4 MiB AllReduce: NVLS 43 + 4,194,304/(1000·204.8) = 63.48 µs beats NVLSTree 66.8 + 17.04 = 83.84 µs.
// CollNetDirect channels (topoGetAlgoInfo): from 16, below 16·640·8·512 -> down to 12 (threshold
// halves to 256) ... 9 -> 8 (switch point); then 8, 7, 6 (threshold 128), 5: 5·640·8·128 = 3.28 MB
// < 4 MiB stops at 5.
TEST_F(CollNetH100, FourMiBChoosesNvlsAndDirectChannels) {
  const auto m = collnet.tuning(world);
  const auto c = m->choose(F::AllReduce, 4194304.0);
  EXPECT_EQ(c.algorithm, A::NVLS);
  EXPECT_NEAR(c.time_us, 63.48, 1e-6);
  EXPECT_EQ(m->channels_for(A::CollNetDirect, P::Simple, 4194304.0), 5);
  EXPECT_EQ(m->channels_for(A::CollNetDirect, P::Simple, 1e12), 16);
  EXPECT_EQ(m->channels_for(A::CollNetDirect, P::Simple, 8192.0), 1);
  // CollNetChain uses the generic loop with 640 threads and the CollNet threshold 512.
  EXPECT_EQ(m->channels_for(A::CollNetChain, P::Simple, 4194304.0), 12);  // 4,194,304 / (640·512) = 12.8
}

// One node, or more than 8 local ranks, or the plugin off: no CollNet.
TEST(CollNetSupport, NeedsTwoNodesAndAtMostEightLocalRanks) {
  const ClusterSpec two = testing::h100_cluster(2);
  NcclAnalyticalModel m{two, {{"NCCL_COLLNET_ENABLE", "1"}}};
  const auto one_node = GroupPlacement::of(testing::first_ranks(8), two);
  EXPECT_FALSE(m.tuning(one_node)->topology().collnet_supported);
  EXPECT_EQ(m.tuning(one_node)->entry(F::AllReduce, A::CollNetChain, P::Simple).algbw_GBps, 0.0);
  ClusterSpec wide = testing::h100_cluster(2);
  wide.gpus_per_node = 16;
  wide.num_gpus = 32;
  wide.scale_up.domain_size = 16;
  wide.nics_per_node = 16;
  NcclAnalyticalModel w{wide, {{"NCCL_COLLNET_ENABLE", "1"}}};
  const auto all = GroupPlacement::of(testing::first_ranks(32), wide);
  EXPECT_FALSE(w.tuning(all)->topology().collnet_supported);
}

}  // namespace
}  // namespace trainsim
