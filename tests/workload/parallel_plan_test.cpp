// Rank mapping and groups follow Megatron's RankGenerator with order tp-cp-dp-pp
// (parallel_state.py; worked example of docs/moe.md §2: 64 GPUs, t=4, c=2, p=2, D=4).
#include <gtest/gtest.h>

#include "workload/grad_buckets.hpp"
#include "workload/parallel_plan.hpp"

using namespace trainsim;

TEST(ParallelPlan, WorkedExampleGroups) {
  ParallelPlan plan(4, 2, 4, 2);
  ASSERT_EQ(plan.world_size(), 64);
  EXPECT_EQ(plan.group_members(GroupKind::TP, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(plan.group_members(GroupKind::TP, 5), (std::vector<int>{4, 5, 6, 7}));
  EXPECT_EQ(plan.group_members(GroupKind::CP, 1), (std::vector<int>{1, 5}));
  // Megatron's gradient group is dp x cp: [0,4,8,...,28].
  EXPECT_EQ(plan.group_members(GroupKind::DP, 0), (std::vector<int>{0, 4, 8, 12, 16, 20, 24, 28}));
  EXPECT_EQ(plan.group_members(GroupKind::PP, 1), (std::vector<int>{1, 33}));
  EXPECT_EQ(plan.group_members(GroupKind::Embedding, 32), (std::vector<int>{0, 32}));
  EXPECT_EQ(plan.group_members(GroupKind::World, 3).size(), 64u);
}

TEST(ParallelPlan, CoordinatesRoundTrip) {
  ParallelPlan plan(8, 1, 16, 8);
  for (int r = 0; r < plan.world_size(); r += 37) EXPECT_EQ(plan.rank_of(plan.coord_of(r)), r);
  const RankCoord c = plan.coord_of(8 * 16 * 3 + 8 * 5 + 2);
  EXPECT_EQ(c.tp, 2);
  EXPECT_EQ(c.dp, 5);
  EXPECT_EQ(c.pp, 3);
}

// Buckets close as soon as they reach the size; the last one takes the rest.
TEST(GradBuckets, CloseAtSizeInBackpropOrder) {
  std::vector<ParamItem> items = {{-1, 10}, {3, 30}, {2, 30}, {1, 30}, {0, 30}, {-1, 5}};
  const auto b = make_buckets(items, 40);
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0].last_item, 1);  // 10 + 30 = 40
  EXPECT_EQ(b[1].last_item, 3);  // 30 + 30
  EXPECT_EQ(b[2].last_item, 5);  // 30 + 5
  EXPECT_DOUBLE_EQ(b[0].params + b[1].params + b[2].params, 135);
  EXPECT_EQ(make_buckets(items, 0).size(), 1u);  // no bucketing: one bucket
}
