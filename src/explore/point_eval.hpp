#pragma once
// One point of a design-space exploration: the base scenario with some keys overridden, simulated
// (or rejected) without ever throwing, so that a sweep or a search can report every point as a row.
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/objective.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/plan.hpp"

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
  // The whole run too (the run-level objectives of sweep and tune): each simulated point's result gains a
  // `run_plan` object (run_plan_json) from plan_from_iteration. A point whose scenario cannot be planned (no storage
  // bandwidth with checkpoints, no GPU power) is invalid, naming the key.
  std::optional<PlanRequest> plan;
  std::optional<double> gpu_hour_price_usd;  // with `plan`: replaces the scenario's cost.usd_per_gpu_hour
  // A sweep's objective: each simulated point's result gains `objective` (objective_of; null when the result lacks
  // what it needs). A run-level objective needs `plan`.
  std::optional<Objective> objective;

  // Plan each point's whole run on `tokens` (> 0), its cost at `gpu_hour_price_usd` when given (else the scenario's).
  void plan_runs(double tokens, std::optional<double> gpu_hour_price_usd);
};

// The numbers of a run plan that sweeps and searches rank and tabulate: tokens, days (expected wall clock), goodput,
// failures, energy_mwh, cost_usd (null without a price).
nlohmann::ordered_json run_plan_json(const PlanResult& plan);

// Loads `scenario` (a file or YAML text) with `overrides` ("key.path=value", as `--set`) applied and simulates one
// iteration. Never throws: every failure becomes a status and a reason. Deterministic: the
// simulation's wall time is zeroed so the same point gives the same bytes on every run. `reuse` (one per
// thread), when given, keeps the workload for the next point that differs only in keys the network reads.
PointOutcome evaluate_point(const ScenarioSource& scenario, const std::vector<std::string>& overrides,
                            const PointOptions& options = {},
                            double give_up_above_s = std::numeric_limits<double>::infinity(),
                            PreparedJobCache* reuse = nullptr);

}  // namespace trainsim::explore
