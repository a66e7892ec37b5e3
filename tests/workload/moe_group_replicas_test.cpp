// The expert view of Megatron's rank generator (parallel_state.py::RankGenerator; docs/moe.md §2) and the concurrent
// copies of expert communicators the flow-level network runs (group_replicas.hpp): an EP group covers part of
// the dp range, so its copies are the other EP groups of the stage, not tp/cp/dp translates.
#include <gtest/gtest.h>

#include <set>

#include "core/error.hpp"
#include "workload/group_replicas.hpp"

namespace trainsim {
namespace {

// docs/moe.md §2 worked example: 64 GPUs, t=4, c=2, p=2 (D=4); e=8, t_e=2 (D_e=2).
TEST(ExpertPlan, WorkedExampleGroups) {
  const ParallelPlan plan(4, 2, 4, 2, 8, 2);
  EXPECT_EQ(plan.expert_data(), 2);
  EXPECT_EQ(plan.group_members(GroupKind::ExpertTP, 0), (std::vector<int>{0, 1}));
  EXPECT_EQ(plan.group_members(GroupKind::ExpertTP, 3), (std::vector<int>{2, 3}));
  EXPECT_EQ(plan.group_members(GroupKind::EP, 0), (std::vector<int>{0, 2, 4, 6, 8, 10, 12, 14}));
  EXPECT_EQ(plan.group_members(GroupKind::EP, 1), (std::vector<int>{1, 3, 5, 7, 9, 11, 13, 15}));
  EXPECT_EQ(plan.group_members(GroupKind::ExpertDP, 0), (std::vector<int>{0, 16}));
  EXPECT_EQ(plan.group_members(GroupKind::ExpertDP, 1), (std::vector<int>{1, 17}));
  EXPECT_EQ(plan.group_members(GroupKind::ExpertTPxEP, 5),
            (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}));
  // The second stage holds the same pattern shifted by 32 (pp is outermost in both views).
  EXPECT_EQ(plan.group_members(GroupKind::ExpertDP, 33), (std::vector<int>{33, 49}));
  // global_rank = etp + t_e*(ep + e*(edp + D_e*pp)).
  const ExpertCoord c = plan.expert_coord_of(2 * 5 + 16 * 1 + 32 * 1 + 1);
  EXPECT_EQ(c.etp, 1);
  EXPECT_EQ(c.ep, 5);
  EXPECT_EQ(c.edp, 1);
  EXPECT_EQ(c.pp, 1);
  EXPECT_EQ(plan.expert_rank_of(c), 59);
}

TEST(ExpertPlan, ExpertRanksMustTileAStage) {
  EXPECT_THROW(ParallelPlan(2, 1, 6, 2, 4, 2), Error);  // 2 x 4 does not divide 12
  EXPECT_NO_THROW(ParallelPlan(2, 1, 6, 2, 3, 2));
  EXPECT_EQ(ParallelPlan(2, 1, 8, 1, 4).expert_tensor(), 2);  // default t_e = t
}

// tp 2 x dp 8 x pp 2 = 32 ranks, e = 4, t_e = 2 -> D_e = 2. The EP group of rank 0 is {0, 2, 4, 6}; the stage's
// 16 ranks hold 4 EP groups. Translating it by dp offsets would give groups like {2, 4, 6, 8}, which no rank has.
TEST(GroupReplicas, ExpertParallelCopiesAreTheStagesOtherEpGroups) {
  const ParallelPlan plan(2, 1, 8, 2, 4, 2);
  const std::vector<std::vector<int>> want = {{0, 2, 4, 6}, {1, 3, 5, 7}, {8, 10, 12, 14}, {9, 11, 13, 15}};
  const auto members = plan.group_members(GroupKind::EP, 0);
  EXPECT_EQ(group_replicas(GroupKind::EP, members, plan), want);
  EXPECT_EQ(group_replicas(members, plan), want);  // the kind-less overload tiles the stage the same way
  const std::vector<std::vector<int>> stage1 = {{24, 26, 28, 30}, {16, 18, 20, 22}, {17, 19, 21, 23}, {25, 27, 29, 31}};
  EXPECT_EQ(group_replicas(GroupKind::EP, plan.group_members(GroupKind::EP, 24), plan), stage1);
}

TEST(GroupReplicas, ExpertDataParallelAndExpertTensorCopies) {
  const ParallelPlan plan(2, 1, 8, 2, 4, 2);
  const auto edp = group_replicas(GroupKind::ExpertDP, plan.group_members(GroupKind::ExpertDP, 0), plan);
  ASSERT_EQ(edp.size(), 8u);  // t_e * e groups of D_e = 2 per stage
  std::set<int> covered;
  for (const auto& g : edp) {
    ASSERT_EQ(g.size(), 2u);
    EXPECT_EQ(g[1] - g[0], 8);  // stride t_e * e
    covered.insert(g.begin(), g.end());
  }
  EXPECT_EQ(covered.size(), 16u);
  EXPECT_EQ(*covered.rbegin(), 15);  // stage 0 only
  EXPECT_EQ(group_replicas(plan.group_members(GroupKind::ExpertDP, 0), plan), edp);
  // expert_tensor 1 inside tensor 2: ETP groups are single ranks; t_e 1 x e 4 groups are stride 1.
  const ParallelPlan narrow(2, 1, 8, 2, 4, 1);
  EXPECT_EQ(narrow.group_members(GroupKind::EP, 0), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(group_replicas(GroupKind::EP, narrow.group_members(GroupKind::EP, 5), narrow).size(), 4u);
}

// Dense groups keep their copies whichever overload is used.
TEST(GroupReplicas, DenseKindsUnchangedByTheKindAwareOverload) {
  const ParallelPlan plan(2, 1, 4, 2);
  for (GroupKind k : {GroupKind::TP, GroupKind::DP})
    EXPECT_EQ(group_replicas(k, plan.group_members(k, 8), plan), group_replicas(plan.group_members(k, 8), plan));
  EXPECT_EQ(group_replicas(GroupKind::PP, {0, 8}, plan).size(), 8u);
}

}  // namespace
}  // namespace trainsim
