#pragma once
// A sweep's whole-run columns and its objective (docs/sweep.md, "The whole run"): --tokens plans each point's run,
// --objective adds an `objective` column and names the best point. The CLI and the service read them alike.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/objective.hpp"
#include "explore/point_eval.hpp"

namespace trainsim::explore {

struct SweepObjective {
  std::optional<Objective> objective;    // none: no objective column
  std::optional<double> tokens;          // plan each point's run on this many tokens
  std::optional<double> gpu_hour_price;  // with tokens: replaces the scenario's cost.usd_per_gpu_hour
};

// From what the user gave (`objective` empty: none), checked as tune checks them (read_objective); without an
// objective, a malformed token count or a price (which only --objective cost reads) is an error naming it.
SweepObjective read_sweep_objective(const std::string& objective, std::optional<double> gpu_hour_price,
                                    const std::optional<std::string>& tokens, const ObjectiveFlags& flags = {});

// The point options that produce the run_plan and objective fields.
void apply_sweep_objective(const SweepObjective& o, PointOptions& options);

// The simulated point with the best `objective` field (ties: the first); outcomes.size() when none has one.
std::size_t best_point(const std::vector<PointOutcome>& outcomes, const Objective& objective);

// The sweep JSON's "objective" object: name, goal, unit, run_level, best_point (best_point's answer; null when it
// found none, i.e. best == points).
nlohmann::ordered_json sweep_objective_json(const Objective& objective, std::size_t best, std::size_t points);

}  // namespace trainsim::explore
