#pragma once
// What sweeps and searches rank configurations by: the iteration's throughput, or its cost, time or energy over a
// token budget, the run-level ones from the whole run's plan (docs/tune.md, "Objectives").
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace trainsim::explore {

enum class ObjectiveKind {
  TokensPerS,   // tokens/s of the whole job, maximised
  Cost,         // USD per million tokens, minimised (of the whole run when a token budget is given)
  TimeToTrain,  // hours of training on a token budget at the simulated speed, minimised
  Days,         // days of wall clock to train on a token budget, failures and checkpoints included, minimised
  Energy,       // MWh to train on a token budget, failures and checkpoints included, minimised
};

struct Objective {
  ObjectiveKind kind = ObjectiveKind::TokensPerS;
  double gpu_hour_price_usd = 0;  // cost: price of one GPU for one hour (0: the scenario's cost block, run-level)
  double tokens = 0;              // time_to_train, days, energy (and cost of the whole run): tokens to train on
  // Ranked by the whole run (`trainsim plan`'s expectation: failures, restarts, checkpoints, stragglers): days,
  // energy, and cost with a token budget. The others by the iteration alone.
  bool run_level() const {
    return kind == ObjectiveKind::Days || kind == ObjectiveKind::Energy || (kind == ObjectiveKind::Cost && tokens > 0);
  }
};

// The names a front end gives the objective's settings in its errors: the CLI's flags, the Python keywords.
struct ObjectiveFlags {
  const char* objective = "--objective";
  const char* gpu_hour_price = "--gpu-hour-price";
  const char* tokens = "--tokens";
};
// "tokens_per_s" | "cost" | "time_to_train" | "days" | "energy"; throws ScenarioError naming flags.objective otherwise.
ObjectiveKind parse_objective_kind(const std::string& text, const ObjectiveFlags& flags = {});
const char* objective_name(ObjectiveKind k);
// The unit of the objective's value, for headers: "tokens/s", "USD/M tokens", "hours", "days", "MWh".
const char* objective_unit(ObjectiveKind k);
bool maximises(ObjectiveKind k);
// Throws Error naming --gpu-hour-price (cost of the iteration) or --tokens (time_to_train, days, energy) when the
// companion value is missing, not positive or not finite.
void check_objective(const Objective& o, const ObjectiveFlags& flags = {});
// The objective from what the user gave: its name, a GPU-hour price, a token count as text ("15T"). A setting the
// objective does not read is an error naming it, as is a malformed one; then check_objective.
Objective read_objective(const std::string& kind, std::optional<double> gpu_hour_price,
                         const std::optional<std::string>& tokens, const ObjectiveFlags& flags = {});

// A token count: a number ("1e12", "300000000") with an optional decimal suffix K, M, B or G, T
// ("1T", "2.5B"). nullopt when malformed, not finite or not positive.
std::optional<double> parse_token_count(const std::string& text);

// The objective of a configuration that processes `tokens_per_s` (the whole job's) on `num_gpus` GPUs:
//   tokens_per_s;  cost = num_gpus x price / 3600 / tokens_per_s x 1e6;  time_to_train = tokens / tokens_per_s / 3600;
//   days = tokens / tokens_per_s / 86400, the run at full goodput: a lower bound of the run-level days. Energy has no
//   such form (it needs the run plan): NaN.
double objective_value(const Objective& o, double tokens_per_s, int num_gpus);
// The objective of a simulated configuration from its `trainsim run --json` result: objective_value of its
// tokens_per_s, or for a run-level objective the result's `run_plan` (days, energy_mwh, cost_usd per million
// tokens). nullopt when the result lacks the number (no throughput; a run cost without any price).
std::optional<double> objective_of(const Objective& o, const nlohmann::ordered_json& result, int num_gpus);

}  // namespace trainsim::explore
