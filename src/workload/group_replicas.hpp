#pragma once
// The identical copies of a communicator that run the same collective at the same time.
//
// Without --per-rank the engine simulates one rank per pipeline stage (tp = cp = dp = 0); its
// timeline stands for every rank of that stage, so each collective it joins also happens, at the
// same moment, on every translate of its group across the tensor, context and data coordinates:
// a TP all-gather on all dp·cp TP groups of the stage, a DP reduce-scatter on all tp DP groups, a
// pipeline send on every (tp, cp, dp) pair. The flow-level network runs all copies, so that they
// compete for the fabric as they do on the real cluster.
#include <vector>

#include "workload/parallel_plan.hpp"

namespace trainsim {

// Every distinct translate of `members` (global ranks, sorted) by offsets in the tp, cp and dp
// coordinates (mod their sizes, the pipeline stage kept), `members` first, each sorted. A
// coordinate the group already spans completely adds no copies.
std::vector<std::vector<int>> group_replicas(const std::vector<int>& members, const ParallelPlan& plan);

}  // namespace trainsim
