// Copies of a communicator that run each collective at the same time (group_replicas.hpp), on
// tp 2 × cp 1 × dp 4 × pp 2 = 16 ranks: rank = tp + 2·(dp + 4·pp).
#include <gtest/gtest.h>

#include "workload/group_replicas.hpp"

namespace trainsim {
namespace {

const ParallelPlan tp2_dp4_pp2(2, 1, 4, 2);

TEST(GroupReplicas, TensorGroupsOfOneStage) {
  const auto r = group_replicas(tp2_dp4_pp2.group_members(GroupKind::TP, 0), tp2_dp4_pp2);
  const std::vector<std::vector<int>> want = {{0, 1}, {2, 3}, {4, 5}, {6, 7}};  // dp 0..3 of stage 0
  EXPECT_EQ(r, want);
}

TEST(GroupReplicas, DataGroupsOfOneStage) {
  const auto r = group_replicas(tp2_dp4_pp2.group_members(GroupKind::DP, 8), tp2_dp4_pp2);  // stage 1
  const std::vector<std::vector<int>> want = {{8, 10, 12, 14}, {9, 11, 13, 15}};
  EXPECT_EQ(r, want);
}

TEST(GroupReplicas, PipelinePairsForEveryTensorAndDataRank) {
  const auto r = group_replicas({0, 8}, tp2_dp4_pp2);
  ASSERT_EQ(r.size(), 8u);
  for (const auto& pair : r) {
    ASSERT_EQ(pair.size(), 2u);
    EXPECT_EQ(pair[1] - pair[0], 8);  // the same stage pair
  }
  EXPECT_EQ(r.front(), (std::vector<int>{0, 8}));
  EXPECT_EQ(r.back(), (std::vector<int>{7, 15}));
}

TEST(GroupReplicas, WorldIsItsOnlyCopy) {
  EXPECT_EQ(group_replicas(tp2_dp4_pp2.group_members(GroupKind::World, 0), tp2_dp4_pp2).size(), 1u);
  EXPECT_TRUE(group_replicas({}, tp2_dp4_pp2).empty());
}

}  // namespace
}  // namespace trainsim
