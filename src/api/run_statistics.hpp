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

// Splits [0, iteration_end) of rank `ri` into compute, exposed communication (by communicator,
// priority TP > CP > PP > EP > DP > other when several overlap), pipeline bubble (idle before its last
// forward/backward kernel ends, the pipeline fill included), optimizer and other.
Breakdown compute_breakdown(const Workload& wl, const SimulationOutput& out, std::size_t ri, SimTime iteration_end);

// One row per (collective kind, communicator kind) of rank `ri`.
std::vector<CommStat> compute_comm_table(const Workload& wl, const SimulationOutput& out, std::size_t ri);

}  // namespace trainsim
