#include "explore/tune_json.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace trainsim::explore {

namespace {

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

std::size_t listed_count(const TuneOutcome& o, std::size_t top) { return std::min(top, o.ranked.size()); }

std::vector<Explanation> listed_explanations(const TuneOutcome& o, const Objective& objective, std::size_t top) {
  std::vector<Explanation> out;
  for (std::size_t i = 0; i < listed_count(o, top) && i + 1 < o.ranked.size(); ++i)
    out.push_back(explain_versus(o.ranked[i], static_cast<int>(i + 1), o.ranked[i + 1], objective.kind));
  return out;
}

nlohmann::ordered_json tune_json(const TuneOutcome& o, const Objective& objective, std::size_t top) {
  nlohmann::ordered_json j;
  j["scenario"] = o.scenario;
  j["model"] = o.model;
  j["gpu"] = o.gpu;
  nlohmann::ordered_json obj = {{"name", objective_name(objective.kind)},
                                {"goal", maximises(objective.kind) ? "maximise" : "minimise"},
                                {"unit", objective_unit(objective.kind)}};
  if (objective.kind == ObjectiveKind::Cost && objective.gpu_hour_price_usd > 0)
    obj["gpu_hour_price_usd"] = objective.gpu_hour_price_usd;
  if (objective.tokens > 0) obj["tokens"] = objective.tokens;
  obj["run_level"] = objective.run_level();
  j["objective"] = obj;
  j["base_overrides"] = o.base_overrides;
  const TuneCounts& c = o.counts;
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
  for (std::size_t i = 0; i < listed_count(o, top); ++i) {
    const RankedConfig& r = o.ranked[i];
    j["ranked"].push_back({{"rank", i + 1},
                           {"configuration", configuration_json(r.candidate)},
                           {"overrides", r.candidate.overrides(o.basis.reset_stage_keys)},
                           {"objective", r.objective},
                           {"result", r.result}});
  }
  j["explanations"] = nlohmann::ordered_json::array();
  for (const Explanation& e : listed_explanations(o, objective, top)) {
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

}  // namespace trainsim::explore
