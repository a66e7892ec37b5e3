#pragma once
// Evaluating many points at once on every core of one machine. Results come back in the order of
// the points whatever the thread count or the order in which points finish, so a sweep's output is
// byte-identical with 1 or 64 threads.
#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "explore/point_eval.hpp"

namespace trainsim::explore {

using Overrides = std::vector<std::string>;  // "key.path=value", as `--set`

// Called after each finished point with (done, total), from whichever worker finished it, one call
// at a time (serialised by the evaluator).
using ProgressFn = std::function<void(std::size_t done, std::size_t total)>;
// Called with each finished point's index (into `points`) and outcome, before the progress call,
// serialised the same way; finishing order depends on the threads, so a caller that writes must
// order by index (SweepCsvStream).
using OutcomeFn = std::function<void(std::size_t point, const PointOutcome& outcome)>;

// Number of worker threads to use: `requested` if > 0, else the hardware's concurrency (>= 1).
int resolve_threads(int requested);

// Evaluates points[i] for every i in `indices` with `threads` workers (an MPI rank passes its share
// of the indices); out[j] is the outcome of points[indices[j]].
std::vector<PointOutcome> evaluate_points(const ScenarioSource& scenario, const std::vector<Overrides>& points,
                                          const std::vector<std::size_t>& indices, int threads,
                                          const PointOptions& options = {}, const ProgressFn& progress = {},
                                          const OutcomeFn& on_outcome = {});

// Convenience: every point, in order.
std::vector<PointOutcome> evaluate_all(const ScenarioSource& scenario, const std::vector<Overrides>& points,
                                       int threads, const PointOptions& options = {}, const ProgressFn& progress = {});

}  // namespace trainsim::explore
