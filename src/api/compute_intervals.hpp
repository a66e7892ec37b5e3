#pragma once
// When a rank's compute stream was busy, so statistics can tell which part of a collective was
// hidden behind kernels and which part the rank waited for (exposed).
#include <vector>

#include "engine/engine.hpp"
#include "workload/workload.hpp"

namespace trainsim {

struct Interval {
  SimTime start, end;
};

// Compute-stream busy intervals of a rank (non-overlapping, in time order).
std::vector<Interval> compute_intervals(const RankProgram& p, const RankTimeline& t);

// Length of [a, b) covered by the sorted, disjoint intervals.
SimTime covered(const std::vector<Interval>& busy, SimTime a, SimTime b);

}  // namespace trainsim
