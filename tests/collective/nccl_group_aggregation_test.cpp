// Group aggregation (NCCL src/enqueue.cc ncclPrepareTasks, ncclTopoGetAlgoTime's latCount): equal calls in one
// NCCL group are chosen on the aggregate's bytes, and the latency counts latCount = numPipeOps (Ring) or
// ceil(numPipeOps / 8) (others) times, numPipeOps = ceil(#calls / nChannels). On the example cluster (2 × 8 H100,
// comm->nChannels 16) with NCCL's table entries: Ring/Simple AllReduce lat 131.6 µs (×1.4 ring plateau = 184.24),
// bw 204.8 GB/s; Tree/Simple lat 92.4 µs, bw 140.8 GB/s.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/units.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

class GroupAggregation : public ::testing::Test {
 protected:
  ClusterSpec cluster = testing::h100_cluster(2);
  GroupPlacement world = GroupPlacement::of(testing::first_ranks(16), cluster);
};

TEST_F(GroupAggregation, RingLatencyCountsEveryPipeOp) {
  const NcclAnalyticalModel m{cluster, {{"NCCL_ALGO", "Ring"}, {"NCCL_PROTO", "Simple"}}};
  const auto t = m.tuning(world);
  // Lone 1 GiB call: 184.24 + 2^30 / 204,800 = 5,427.12 µs.
  EXPECT_NEAR(t->choose(NcclFunction::AllReduce, kGiB).time_us, 184.24 + kGiB / 204800.0, 1e-6);
  // 32 calls of 32 MiB: numPipeOps = ceil(32/16) = 2 -> 2 × 184.24 + the same bandwidth term.
  const CollectiveEstimate g = m.estimate_group(CollKind::AllReduce, 32 << 20, 32, world);
  EXPECT_NEAR(to_microseconds(g.time), 2 * 184.24 + kGiB / 204800.0, 1e-3);
  EXPECT_EQ(g.algorithm, NcclAlgorithm::Ring);
}

TEST_F(GroupAggregation, TreeSharesItsLatencyOverEightPipeOps) {
  const NcclAnalyticalModel m{cluster, {{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "Simple"}}};
  const NcclCostEntry e = m.tuning(world)->entry(NcclFunction::AllReduce, NcclAlgorithm::Tree, NcclProtocol::Simple);
  ASSERT_NEAR(e.latency_us, 92.4, 1e-9);
  ASSERT_NEAR(e.algbw_GBps, 140.8, 0.05);  // NCCL prints it rounded
  // 64 calls of 16 MiB = 1 GiB: numPipeOps 4 -> latCount ceil(4/8) = 1; 1 GiB is past the tree
  // correction table (index 24).
  EXPECT_NEAR(to_microseconds(m.estimate_group(CollKind::AllReduce, 16 << 20, 64, world).time),
              92.4 + kGiB / (1000.0 * e.algbw_GBps), 1e-3);
  // 256 calls of 4 MiB: numPipeOps 16 -> latCount 2.
  EXPECT_NEAR(to_microseconds(m.estimate_group(CollKind::AllReduce, 4 << 20, 256, world).time),
              2 * 92.4 + kGiB / (1000.0 * e.algbw_GBps), 1e-3);
}

// Aggregating small calls lets NCCL pick the algorithm of the aggregate's size, so a group costs
// far less than its calls one after another; a group of one is a lone call.
TEST_F(GroupAggregation, SmallCallsAggregateAndChooseForTheTotal) {
  const NcclAnalyticalModel m{cluster, {}};
  const CollectiveEstimate one = m.estimate(CollKind::AllReduce, 8192, world);
  EXPECT_EQ(m.estimate_group(CollKind::AllReduce, 8192, 1, world).time, one.time);
  const CollectiveEstimate eight = m.estimate_group(CollKind::AllReduce, 8192, 8, world);
  EXPECT_LT(eight.time, 8 * one.time / 4);
  const CollectiveEstimate as_one_call = m.estimate(CollKind::AllReduce, 8 * 8192, world);
  EXPECT_EQ(eight.algorithm, as_one_call.algorithm);
  EXPECT_EQ(eight.time, as_one_call.time);  // 8 calls < 16 channels: numPipeOps 1
}

// p2p groups are not aggregated by the cost model: calls run back to back.
TEST_F(GroupAggregation, AllToAllGroupsAddUp) {
  const NcclAnalyticalModel m{cluster, {}};
  const CollectiveEstimate one = m.estimate(CollKind::AllToAll, 1 << 20, world);
  EXPECT_EQ(m.estimate_group(CollKind::AllToAll, 1 << 20, 3, world).time, 3 * one.time);
}

}  // namespace
}  // namespace trainsim
