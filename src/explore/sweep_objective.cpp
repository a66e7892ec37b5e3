#include "explore/sweep_objective.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim::explore {

SweepObjective read_sweep_objective(const std::string& objective, std::optional<double> gpu_hour_price,
                                    const std::optional<std::string>& tokens, const ObjectiveFlags& flags) {
  SweepObjective out;
  if (!objective.empty()) {
    out.objective = read_objective(objective, gpu_hour_price, tokens, flags);
  } else if (gpu_hour_price) {
    throw ScenarioError("", flags.gpu_hour_price, fmt::format("only used with {} cost", flags.objective));
  }
  if (tokens) {
    const std::optional<double> count = parse_token_count(*tokens);
    if (!count)
      throw ScenarioError("", flags.tokens,
                          "expected a positive token count such as 1e12, 15T or 300B, got '" + *tokens + "'");
    out.tokens = count;
    out.gpu_hour_price = gpu_hour_price;
  }
  return out;
}

void apply_sweep_objective(const SweepObjective& o, PointOptions& options) {
  options.objective = o.objective;
  if (o.tokens) options.plan_runs(*o.tokens, o.gpu_hour_price);
}

std::size_t best_point(const std::vector<PointOutcome>& outcomes, const Objective& objective) {
  std::size_t best = outcomes.size();
  double value = 0;
  for (std::size_t i = 0; i < outcomes.size(); ++i) {
    const PointOutcome& p = outcomes[i];
    if (p.status != PointStatus::Ok) continue;
    const auto v = p.result.find("objective");
    if (v == p.result.end() || !v->is_number()) continue;
    const double x = v->get<double>();
    if (best == outcomes.size() || (maximises(objective.kind) ? x > value : x < value)) {
      best = i;
      value = x;
    }
  }
  return best;
}

nlohmann::ordered_json sweep_objective_json(const Objective& objective, std::size_t best, std::size_t points) {
  return {{"name", objective_name(objective.kind)},
          {"goal", maximises(objective.kind) ? "maximise" : "minimise"},
          {"unit", objective_unit(objective.kind)},
          {"run_level", objective.run_level()},
          {"best_point", best < points ? nlohmann::ordered_json(best) : nlohmann::ordered_json()}};
}

}  // namespace trainsim::explore
