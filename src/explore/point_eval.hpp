#pragma once
// One point of a design-space exploration: the base scenario with some keys overridden, simulated
// (or rejected) without ever throwing, so that a sweep or a search can report every point as a row.
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario_loader.hpp"

namespace trainsim {
class PreparedJobCache;  // trainsim/trainsim.hpp
}

namespace trainsim::explore {

enum class PointStatus {
  Ok,           // simulated
  Invalid,      // the scenario with these overrides is not valid (ScenarioError: names the key)
  OutOfMemory,  // valid, but a pipeline stage does not fit in GPU memory
  Failed,       // the simulation itself failed (deadlock, internal error)
  Bounded,      // not simulated: its compute alone is slower than the search's limit (result: compute_lower_bound_s)
};
const char* to_string(PointStatus s);

struct PointOutcome {
  PointStatus status = PointStatus::Failed;
  std::string reason;             // empty when Ok; the error message otherwise
  nlohmann::ordered_json result;  // `trainsim run --json` object when Ok (simulation.wall_s = 0)
};

struct PointOptions {
  bool allow_oom = false;  // simulate points that do not fit (their memory block says fits: false)
  // A search's limits, by point index (evaluate_points): a point whose compute kernels alone take longer than its
  // limit (seconds per iteration, RunOptions::give_up_above_s) is not simulated but reported Bounded. Empty =
  // simulate every point.
  std::vector<double> give_up_above_s;
};

// Loads `scenario` (a file or YAML text) with `overrides` ("key.path=value", as `--set`) applied and simulates one
// iteration. Never throws: every failure becomes a status and a reason. Deterministic: the
// simulation's wall time is zeroed so the same point gives the same bytes on every run. `reuse` (one per
// thread), when given, keeps the workload for the next point that differs only in keys the network reads.
PointOutcome evaluate_point(const ScenarioSource& scenario, const std::vector<std::string>& overrides,
                            const PointOptions& options = {},
                            double give_up_above_s = std::numeric_limits<double>::infinity(),
                            PreparedJobCache* reuse = nullptr);

}  // namespace trainsim::explore
