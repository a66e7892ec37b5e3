#pragma once
// From an executed workload to the numbers users read: the critical rank, its time breakdown and
// the per-collective table.
#include "engine/engine.hpp"
#include "report/result.hpp"
#include "workload/workload.hpp"

namespace trainsim {

// The critical rank: the one that waits least on other stages (bubble, exposed pipeline p2p and other idle time),
// i.e. the pipeline's bottleneck stage; ties (and --per-rank runs over 128 ranks) go to the rank whose last op
// finishes last. With its breakdown over [0, makespan), worked out on the way.
struct CriticalRank {
  std::size_t index = 0;  // into wl.ranks
  Breakdown breakdown;
};
CriticalRank find_critical_rank(const Workload& wl, const SimulationOutput& out);

// The engine options under which the engine keeps each rank's RankActivity for breakdown_of: exposed communication
// split by communicator, TP > CP > PP > EP > DP > other where several overlap (EngineOptions::exposed_class).
void keep_activity(const Workload& wl, EngineOptions& options);

// How rank `ri` spends [0, makespan): compute, exposed communication by communicator, pipeline bubble (idle before
// its last forward/backward kernel ends, the pipeline fill included), optimizer and other; from the engine's
// RankActivity, so the run must have been given keep_activity (an internal error otherwise).
Breakdown breakdown_of(const SimulationOutput& out, std::size_t ri);

// One row per (collective kind, communicator kind) of rank `ri`.
std::vector<CommStat> compute_comm_table(const Workload& wl, const SimulationOutput& out, std::size_t ri);

}  // namespace trainsim
