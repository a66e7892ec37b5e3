#include "cli/tune_output.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace trainsim::cli {

using explore::Explanation;
using explore::Objective;
using explore::RankedConfig;
using explore::TuneCandidate;
using explore::TuneOutcome;

namespace {

double number_at(const nlohmann::ordered_json& j, const char* a, const char* b = nullptr) {
  const auto it = j.find(a);
  if (it == j.end()) return 0;
  if (!b) return it->is_number() ? it->get<double>() : 0;
  const auto jt = it->find(b);
  return jt != it->end() && jt->is_number() ? jt->get<double>() : 0;
}

std::size_t shown(const TuneOutcome& o, std::size_t top) { return std::min(top, o.ranked.size()); }

// Each shown configuration against the one ranked after it (the last shown against the first not
// shown, when there is one).
std::vector<Explanation> explanations(const TuneOutcome& o, const Objective& objective, std::size_t top) {
  std::vector<Explanation> out;
  for (std::size_t i = 0; i < shown(o, top) && i + 1 < o.ranked.size(); ++i)
    out.push_back(explore::explain_versus(o.ranked[i], static_cast<int>(i + 1), o.ranked[i + 1], objective.kind));
  return out;
}

std::string format_objective(explore::ObjectiveKind k, double v) {
  if (k == explore::ObjectiveKind::TokensPerS) return fmt::format("{:.0f}", v);
  return fmt::format("{:.4g}", v);
}

nlohmann::ordered_json configuration_json(const TuneCandidate& c) {
  return {{"num_gpus", c.num_gpus},
          {"tensor", c.tensor},
          {"pipeline", c.pipeline},
          {"data", c.data},
          {"context", c.context},
          {"expert", c.expert},
          {"virtual_pipeline", c.virtual_pipeline},
          {"sequence_parallel", c.sequence_parallel},
          {"zero_stage", c.zero_stage},
          {"micro_batch_size", c.micro_batch_size},
          {"recompute", to_string(c.recompute)}};
}

}  // namespace

std::string tune_counts_line(const explore::TuneCounts& c) {
  std::string line = fmt::format(
      "{} candidates: {} invalid, {} TP beyond scale-up, {} out of memory, {} dominated, "
      "{} simulated",
      c.candidates, c.invalid, c.tp_beyond_scale_up, c.out_of_memory, c.dominated, c.simulated);
  if (c.bounded > 0)
    line +=
        fmt::format(" ({} of them stopped before the engine: compute alone slower than the listed ones)", c.bounded);
  if (c.failed > 0) line += fmt::format(" ({} of them failed)", c.failed);
  return line;
}

void write_tune_text(std::ostream& out, const TuneOutcome& o, const Objective& objective, std::size_t top) {
  const explore::ObjectiveKind kind = objective.kind;
  out << fmt::format("trainsim tune: {} ({} on {}{}), objective {} ({}, {})\n", o.scenario, o.model,
                     o.varies_num_gpus ? "" : fmt::format("{} x ", o.basis.num_gpus), o.gpu, objective_name(kind),
                     explore::maximises(kind) ? "maximise" : "minimise", objective_unit(kind));
  out << tune_counts_line(o.counts) << "\n";
  if (o.counts.failed > 0) out << "  the first failed simulation: " << o.first_failure << "\n";
  if (o.ranked.empty()) return;

  const bool gpus = o.varies_num_gpus;
  out << "\n"
      << fmt::format(
             "{:>4}{}  {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>3}  {:<9}  {:>9}  {:>12}  {:>6}  "
             "{:>15}  {:>14}\n",
             "rank", gpus ? fmt::format(" {:>5}", "GPUs") : "", "TP", "PP", "DP", "CP", "EP", "VP", "SP", "ZeRO", "mbs",
             "recompute", "iter (s)", "tokens/s/GPU", "MFU", "memory GiB", objective_unit(kind));
  for (std::size_t i = 0; i < shown(o, top); ++i) {
    const RankedConfig& r = o.ranked[i];
    const TuneCandidate& c = r.candidate;
    out << fmt::format(
        "{:>4}{}  {:>3} {:>3} {:>4} {:>3} {:>3} {:>3} {:>3} {:>4} {:>3}  {:<9}  {:>9.4g}  {:>12.0f}  {:>5.1f}%  "
        "{:>15}  {:>14}\n",
        i + 1, gpus ? fmt::format(" {:>5}", c.num_gpus) : "", c.tensor, c.pipeline, c.data, c.context, c.expert,
        c.virtual_pipeline, c.sequence_parallel ? "on" : "off", c.zero_stage, c.micro_batch_size,
        to_string(c.recompute), number_at(r.result, "iteration_time_s"), number_at(r.result, "tokens_per_s_per_gpu"),
        100 * number_at(r.result, "mfu"),
        fmt::format("{:.1f} / {:.1f}", number_at(r.result, "memory", "peak"),
                    number_at(r.result, "memory", "capacity")),
        format_objective(kind, r.objective));
  }
  const std::vector<Explanation> why = explanations(o, objective, top);
  if (!why.empty()) {
    out << "\nWhy each beats the next (critical rank's time, this one minus the next):\n";
    for (const Explanation& e : why) out << "  " << e.text << "\n";
  }
}

nlohmann::ordered_json tune_json(const TuneOutcome& o, const Objective& objective, std::size_t top) {
  nlohmann::ordered_json j;
  j["scenario"] = o.scenario;
  j["model"] = o.model;
  j["gpu"] = o.gpu;
  nlohmann::ordered_json obj = {{"name", objective_name(objective.kind)},
                                {"goal", explore::maximises(objective.kind) ? "maximise" : "minimise"},
                                {"unit", objective_unit(objective.kind)}};
  if (objective.kind == explore::ObjectiveKind::Cost) obj["gpu_hour_price_usd"] = objective.gpu_hour_price_usd;
  if (objective.kind == explore::ObjectiveKind::TimeToTrain) obj["tokens"] = objective.tokens;
  j["objective"] = obj;
  j["base_overrides"] = o.base_overrides;
  const explore::TuneCounts& c = o.counts;
  j["counts"] = {{"candidates", c.candidates},
                 {"invalid", c.invalid},
                 {"tp_beyond_scale_up", c.tp_beyond_scale_up},
                 {"out_of_memory", c.out_of_memory},
                 {"dominated", c.dominated},
                 {"simulated", c.simulated},
                 {"bounded", c.bounded},
                 {"failed", c.failed}};
  if (c.failed > 0) j["first_failure"] = o.first_failure;
  j["top"] = top;
  j["ranked"] = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < shown(o, top); ++i) {
    const RankedConfig& r = o.ranked[i];
    j["ranked"].push_back({{"rank", i + 1},
                           {"configuration", configuration_json(r.candidate)},
                           {"overrides", r.candidate.overrides(o.basis.reset_stage_keys)},
                           {"objective", r.objective},
                           {"result", r.result}});
  }
  j["explanations"] = nlohmann::ordered_json::array();
  for (const Explanation& e : explanations(o, objective, top)) {
    nlohmann::ordered_json diffs = nlohmann::ordered_json::array();
    for (const auto& d : e.largest)
      diffs.push_back({{"component", d.component}, {"label", d.label}, {"seconds", d.seconds}});
    j["explanations"].push_back({{"rank", e.rank},
                                 {"versus", e.versus},
                                 {"iteration_time_s", e.iteration_time_s},
                                 {"versus_iteration_time_s", e.versus_iteration_time_s},
                                 {"largest_differences", diffs},
                                 {"text", e.text}});
  }
  if (o.ranked.empty() && o.closest_miss) {
    const auto& m = *o.closest_miss;
    j["closest_out_of_memory"] = {{"configuration", configuration_json(m.candidate)},
                                  {"peak_gib", m.peak_gib},
                                  {"capacity_gib", m.capacity_gib},
                                  {"shortfall_gib", m.peak_gib - m.capacity_gib}};
  }
  return j;
}

std::string tune_nothing_ranked_message(const TuneOutcome& o) {
  if (o.closest_miss) {
    const auto& m = *o.closest_miss;
    return fmt::format(
        "no configuration fits in memory; the closest, {}, needs {:.2f} GiB per GPU of {:.2f} GiB "
        "({:.2f} GiB short). Try more GPUs, a GPU with more memory, or widen the space (--space)",
        m.candidate.label(o.varies_num_gpus), m.peak_gib, m.capacity_gib, m.peak_gib - m.capacity_gib);
  }
  if (o.counts.simulated > 0 && !o.first_failure.empty())
    return "every simulation failed; the first: " + o.first_failure;
  if (!o.first_invalid.empty()) return "no valid configuration in the space; the first: " + o.first_invalid;
  if (o.counts.tp_beyond_scale_up > 0)
    return "every configuration has tensor beyond the scale-up domain (--allow-tp-beyond-scale-up to keep them)";
  return "the space is empty";
}

}  // namespace trainsim::cli
