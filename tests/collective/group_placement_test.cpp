#include <gtest/gtest.h>

#include "collective/collective_model.hpp"
#include "core/error.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using testing::h100_cluster;

// All 16 ranks of two 8-GPU nodes: 2 nodes, 8 per node, uniform.
TEST(GroupPlacement, TwoFullNodes) {
  const auto g = GroupPlacement::of(testing::first_ranks(16), h100_cluster(2));
  EXPECT_EQ(g.size, 16);
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.max_per_node, 8);
  EXPECT_TRUE(g.uniform);
}

// A data-parallel group with TP=8: ranks 0, 8, 16, 24 sit on four different nodes, one each.
TEST(GroupPlacement, OneRankPerNode) {
  const auto g = GroupPlacement::of({0, 8, 16, 24}, h100_cluster(4));
  EXPECT_EQ(g.nodes, 4);
  EXPECT_EQ(g.max_per_node, 1);
  EXPECT_TRUE(g.uniform);
}

// 3 ranks on node 0 and 1 on node 1: fullest node has 3, not uniform.
TEST(GroupPlacement, NonUniform) {
  const auto g = GroupPlacement::of({0, 1, 2, 8}, h100_cluster(2));
  EXPECT_EQ(g.nodes, 2);
  EXPECT_EQ(g.max_per_node, 3);
  EXPECT_FALSE(g.uniform);
}

// NVL72-style: 4 GPUs per host, scale-up domain of 72. NCCL (MNNVL) treats the domain as one node,
// so 72 ranks on 18 hosts count as 1 node; ranks 0 and 72 are in different domains.
TEST(GroupPlacement, ScaleUpDomainSpanningHostsIsOneNode) {
  ClusterSpec c = h100_cluster(1);
  c.gpus_per_node = 4;
  c.num_gpus = 144;
  c.scale_up = {ScaleUpKind::NVSwitch, 900, 72};
  EXPECT_EQ(GroupPlacement::of(testing::first_ranks(72), c).nodes, 1);
  EXPECT_EQ(GroupPlacement::of(testing::first_ranks(72), c).max_per_node, 72);
  EXPECT_EQ(GroupPlacement::of({0, 72}, c).nodes, 2);
}

// Copies placed alike count once; the slowest copy's estimate is taken whatever the order.
TEST(GroupPlacement, CopiesAndTheSlowestOfThem) {
  const ClusterSpec c = h100_cluster(2);
  const auto placements = GroupPlacement::of_copies({{0, 1, 2, 3}, {4, 5, 6, 7}, {6, 7, 8, 9}, {8, 9, 10, 11}}, c);
  ASSERT_EQ(placements.size(), 2u);  // one node (GPUs 0-3 and 4-7 alike), two nodes (6, 7 | 8, 9)
  EXPECT_EQ(placements[0].nodes, 1);
  EXPECT_EQ(placements[0].local_ranks, (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(placements[1].nodes, 2);
  const auto model = make_nccl_analytical_model(c, {});
  const std::int64_t bytes = 256 << 20;
  const SimTime inside = model->estimate(CollKind::AllGather, bytes, placements[0]).time;
  const SimTime across = model->estimate(CollKind::AllGather, bytes, placements[1]).time;
  ASSERT_GT(across, inside);
  EXPECT_EQ(slowest_copy_estimate(*model, CollKind::AllGather, bytes, placements).time, across);
  EXPECT_EQ(slowest_copy_estimate(*model, CollKind::AllGather, bytes, {placements[1], placements[0]}).time, across);
  EXPECT_EQ(slowest_copy_estimate(*model, CollKind::AllGather, bytes, {placements[0]}).time, inside);
  EXPECT_THROW(slowest_copy_estimate(*model, CollKind::AllGather, bytes, {}), InternalError);
}

TEST(GroupPlacement, RankOutsideClusterIsAnError) {
  EXPECT_THROW(GroupPlacement::of({0, 16}, h100_cluster(2)), Error);
  EXPECT_THROW(GroupPlacement::of({-1}, h100_cluster(2)), Error);
}

}  // namespace
}  // namespace trainsim
