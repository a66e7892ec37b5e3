// `trainsim validate --json`: every case with its fields and errors, then the summaries.
#include <cmath>

#include "report/validation_report.hpp"

namespace trainsim {

namespace {

// NaN/inf errors (a zero measurement) dump as null anyway; say so explicitly.
nlohmann::ordered_json number_or_null(double v) {
  return std::isfinite(v) ? nlohmann::ordered_json(v) : nlohmann::ordered_json(nullptr);
}

nlohmann::ordered_json summary_json(const ValidationSummary& s) {
  nlohmann::ordered_json j;
  j["cases"] = s.cases;
  j["simulated"] = s.simulated;
  j["failed"] = s.failed;
  j["samples"] = s.samples;
  j["bias"] = s.bias;
  j["median_abs_error"] = s.median_abs_error;
  j["p90_abs_error"] = s.p90_abs_error;
  return j;
}

nlohmann::ordered_json summaries_json(const std::map<std::string, ValidationSummary>& by) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, s] : by) j[name] = summary_json(s);
  return j;
}

nlohmann::ordered_json case_json(const ValidationCase& c) {
  nlohmann::ordered_json j;
  j["name"] = c.name;
  j["group"] = c.group;
  j["gpu"] = c.gpu;
  j["generation"] = c.generation.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.generation);
  j["confidence"] = c.confidence;
  j["error"] = c.error.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.error);
  const ValidationField* h = c.error.empty() ? c.headline() : nullptr;
  j["headline"] = h ? nlohmann::ordered_json(h->field) : nlohmann::ordered_json(nullptr);
  nlohmann::ordered_json fields = nlohmann::ordered_json::array();
  const bool failed = !c.error.empty();
  for (const ValidationField& f : c.fields) {
    nlohmann::ordered_json fj;
    fj["field"] = f.field;
    fj["measured"] = f.measured;
    // A case that could not be simulated has no simulated value, whatever the struct holds.
    fj["simulated"] = failed ? nlohmann::ordered_json(nullptr) : number_or_null(f.simulated);
    fj["error"] = failed ? nlohmann::ordered_json(nullptr) : number_or_null(f.error());
    fields.push_back(std::move(fj));
  }
  j["fields"] = std::move(fields);
  // null when the memory model says the run fits (or for collective cases); else what it needs and has.
  j["over_memory"] = c.over_memory() ? nlohmann::ordered_json{{"needed_gib", c.memory_needed_gib},
                                                              {"capacity_gib", c.memory_capacity_gib}}
                                     : nlohmann::ordered_json(nullptr);
  return j;
}

}  // namespace

nlohmann::ordered_json validation_to_json(const std::vector<ValidationCase>& cases) {
  nlohmann::ordered_json j;
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const ValidationCase& c : cases) rows.push_back(case_json(c));
  j["cases"] = std::move(rows);
  nlohmann::ordered_json summary = summary_json(summarize(cases));
  summary["by_group"] = summaries_json(summarize_by_group(cases));
  summary["by_generation"] = summaries_json(summarize_by_generation(cases));
  summary["by_gpu"] = summaries_json(summarize_by_gpu(cases));
  j["summary"] = std::move(summary);
  return j;
}

}  // namespace trainsim
