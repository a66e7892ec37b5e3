#pragma once
// The identical copies of a communicator that run the same collective at the same time.
//
// Without --per-rank the engine simulates one rank per pipeline stage (tp = cp = dp = 0); its
// timeline stands for every rank of that stage, so each collective it joins also happens, at the
// same moment, on every other group of the same kind in that stage: a TP all-gather on all dp·cp
// TP groups of the stage, a DP reduce-scatter on all tp DP groups, a pipeline send on every
// (tp, cp, dp) pair, an EP all-to-all on every EP group of the stage. The flow-level network runs
// all copies, so that they compete for the fabric as they do on the real cluster.
#include <vector>

#include "workload/parallel_plan.hpp"

namespace trainsim {

// The copies of the group `members` (global ranks, sorted), `members` first, each sorted, without knowing
// its kind. A group inside one pipeline stage is tiled over the stage: its pattern (offsets from its lowest
// rank) shifted to each lowest uncovered rank of the stage — for every group Megatron's dense or expert rank
// generator builds this is exactly the other groups of its kind (group_replicas.cpp says why). A group
// spanning stages (pipeline pairs, embedding, tp x pp, world) gets its translates by tp, cp and dp offsets
// (mod their sizes, the stages kept); a coordinate it spans completely adds no copies. O(ranks of a stage).
std::vector<std::vector<int>> group_replicas(const std::vector<int>& members, const ParallelPlan& plan);

// The copies of a group of `kind`: for the expert kinds (EP, expert-TP, etp x ep, expert-DP) the
// groups of that kind containing each rank of the members' pipeline stage, built with the plan's
// expert view and deduplicated, `members` first, the others by their lowest rank; for every other
// kind the translates above. O(ranks of the stage).
std::vector<std::vector<int>> group_replicas(GroupKind kind, const std::vector<int>& members, const ParallelPlan& plan);

}  // namespace trainsim
