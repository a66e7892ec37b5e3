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

// covered() for a run of calls whose starts come in time order, as the ops of one stream do: the first interval
// that can overlap is found from where the last call's was, galloping forward, not searched for from the start
// (the collective table of a rank with tens of thousands of calls spent most of its time in those searches). A start
// earlier than the last one's is searched for from the start: the result is covered()'s either way.
class CoveredScan {
 public:
  explicit CoveredScan(const std::vector<Interval>& busy) : busy_(&busy) {}
  SimTime operator()(SimTime a, SimTime b);

 private:
  const std::vector<Interval>* busy_;
  std::size_t first_ = 0;  // the first interval ending after the last call's start
  SimTime last_start_ = 0;
};

}  // namespace trainsim
