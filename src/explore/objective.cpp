#include "explore/objective.hpp"

#include <cmath>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim::explore {

const char* objective_name(ObjectiveKind k) {
  switch (k) {
    case ObjectiveKind::TokensPerS: return "tokens_per_s";
    case ObjectiveKind::Cost: return "cost";
    case ObjectiveKind::TimeToTrain: return "time_to_train";
    case ObjectiveKind::Days: return "days";
    case ObjectiveKind::Energy: return "energy";
  }
  return "";
}

const char* objective_unit(ObjectiveKind k) {
  switch (k) {
    case ObjectiveKind::TokensPerS: return "tokens/s";
    case ObjectiveKind::Cost: return "USD/M tokens";
    case ObjectiveKind::TimeToTrain: return "hours";
    case ObjectiveKind::Days: return "days";
    case ObjectiveKind::Energy: return "MWh";
  }
  return "";
}

bool maximises(ObjectiveKind k) { return k == ObjectiveKind::TokensPerS; }

namespace {

// A setting's error names the setting as a key, as a scenario key's would (the service answers 400 with it).
[[noreturn]] void refuse(const char* setting, const std::string& detail) { throw ScenarioError("", setting, detail); }

}  // namespace

ObjectiveKind parse_objective_kind(const std::string& text, const ObjectiveFlags& flags) {
  for (const ObjectiveKind k : {ObjectiveKind::TokensPerS, ObjectiveKind::Cost, ObjectiveKind::TimeToTrain,
                                ObjectiveKind::Days, ObjectiveKind::Energy})
    if (text == objective_name(k)) return k;
  refuse(flags.objective, "expected tokens_per_s, cost, time_to_train, days or energy, got '" + text + "'");
}

void check_objective(const Objective& o, const ObjectiveFlags& f) {
  const auto positive = [](double v) { return std::isfinite(v) && v > 0; };
  if (o.kind == ObjectiveKind::Cost && !o.run_level() && !positive(o.gpu_hour_price_usd))
    refuse(f.gpu_hour_price,
           fmt::format("{1} cost needs the price of one GPU-hour in USD, a positive number (e.g. {0} 2.5), or {2} "
                       "for the cost of the whole run at the scenario's cost.* prices",
                       f.gpu_hour_price, f.objective, f.tokens));
  if (o.gpu_hour_price_usd != 0 && !positive(o.gpu_hour_price_usd))
    refuse(f.gpu_hour_price, "expected the USD price of one GPU-hour, a positive number");
  const bool needs_tokens =
      o.kind == ObjectiveKind::TimeToTrain || o.kind == ObjectiveKind::Days || o.kind == ObjectiveKind::Energy;
  if (needs_tokens && !positive(o.tokens))
    refuse(f.tokens, fmt::format("{1} {2} needs the number of tokens to train on, a positive number (e.g. {0} 15T or "
                                 "{0} 1.5e13)",
                                 f.tokens, f.objective, objective_name(o.kind)));
}

Objective read_objective(const std::string& kind, std::optional<double> gpu_hour_price,
                         const std::optional<std::string>& tokens, const ObjectiveFlags& flags) {
  Objective o;
  o.kind = parse_objective_kind(kind, flags);
  if (gpu_hour_price) {
    if (o.kind != ObjectiveKind::Cost)
      refuse(flags.gpu_hour_price, fmt::format("only used with {} cost (the objective is {})", flags.objective, kind));
    if (!std::isfinite(*gpu_hour_price) || !(*gpu_hour_price > 0))
      refuse(flags.gpu_hour_price,
             fmt::format("expected the USD price of one GPU-hour, a positive number, got {}", *gpu_hour_price));
    o.gpu_hour_price_usd = *gpu_hour_price;
  }
  if (tokens) {
    if (o.kind == ObjectiveKind::TokensPerS)
      refuse(flags.tokens,
             fmt::format("not used with {} tokens_per_s (it ranks by the iteration's throughput)", flags.objective));
    const std::optional<double> count = parse_token_count(*tokens);
    if (!count)
      refuse(flags.tokens, "expected a positive token count such as 1e12, 15T or 300B, got '" + *tokens + "'");
    o.tokens = *count;
  }
  check_objective(o, flags);
  return o;
}

std::optional<double> parse_token_count(const std::string& text) {
  if (text.empty()) return std::nullopt;
  double scale = 1;
  std::string number = text;
  switch (text.back()) {
    case 'K':
    case 'k': scale = 1e3; break;
    case 'M':
    case 'm': scale = 1e6; break;
    case 'B':
    case 'b':
    case 'G':
    case 'g': scale = 1e9; break;
    case 'T':
    case 't': scale = 1e12; break;
    default: break;
  }
  if (scale != 1) number.pop_back();
  if (number.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size()) return std::nullopt;
  const double tokens = v * scale;
  if (!std::isfinite(tokens) || !(tokens > 0)) return std::nullopt;
  return tokens;
}

double objective_value(const Objective& o, double tokens_per_s, int num_gpus) {
  switch (o.kind) {
    case ObjectiveKind::TokensPerS: return tokens_per_s;
    case ObjectiveKind::Cost: return num_gpus * o.gpu_hour_price_usd / 3600.0 / tokens_per_s * 1e6;
    case ObjectiveKind::TimeToTrain: return o.tokens / tokens_per_s / 3600.0;
    case ObjectiveKind::Days: return o.tokens / tokens_per_s / 86400.0;
    case ObjectiveKind::Energy: break;
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::optional<double> objective_of(const Objective& o, const nlohmann::ordered_json& result, int num_gpus) {
  if (!o.run_level()) {
    const double tokens_per_s = result.value("tokens_per_s", 0.0);
    if (!(tokens_per_s > 0)) return std::nullopt;
    return objective_value(o, tokens_per_s, num_gpus);
  }
  const auto plan = result.find("run_plan");
  if (plan == result.end() || !plan->is_object()) return std::nullopt;
  const char* field = o.kind == ObjectiveKind::Days     ? "days"
                      : o.kind == ObjectiveKind::Energy ? "energy_mwh"
                                                        : "cost_usd";
  const auto v = plan->find(field);
  if (v == plan->end() || !v->is_number()) return std::nullopt;
  const double x = v->get<double>();
  return o.kind == ObjectiveKind::Cost ? x / o.tokens * 1e6 : x;
}

}  // namespace trainsim::explore
