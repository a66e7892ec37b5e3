#include "explore/sweep_json.hpp"

#include "explore/sweep_table.hpp"

namespace trainsim::explore {

nlohmann::ordered_json sweep_json(const Sweep& sweep, const std::vector<PointOutcome>& outcomes,
                                  const std::string& scenario, const std::vector<std::string>& base_overrides) {
  using JsonValue = nlohmann::ordered_json;
  JsonValue j;
  j["scenario"] = scenario;
  j["base_overrides"] = base_overrides;
  JsonValue axes = JsonValue::array();
  for (const SweepAxis& axis : sweep.axes) {
    JsonValue keys = JsonValue::array();
    for (const SweepKey& k : axis.keys) {
      JsonValue values = JsonValue::array();
      for (const SweepValue& v : k.values) values.push_back(sweep_value_json(v));
      keys.push_back({{"key", k.key}, {"values", std::move(values)}});
    }
    axes.push_back({{"zipped", axis.zipped}, {"keys", std::move(keys)}});
  }
  j["axes"] = std::move(axes);
  // Every status a sweep gives (Bounded belongs to tune's search), zero or not, so readers find each key.
  JsonValue counts = {{"points", outcomes.size()}};
  for (PointStatus s : {PointStatus::Ok, PointStatus::Invalid, PointStatus::OutOfMemory, PointStatus::Failed})
    counts[to_string(s)] = std::size_t{0};
  JsonValue points = JsonValue::array();
  for (std::size_t p = 0; p < outcomes.size(); ++p) {
    const PointOutcome& o = outcomes[p];
    JsonValue& count = counts[to_string(o.status)];
    count = (count.is_null() ? 0 : count.get<std::size_t>()) + 1;
    JsonValue values = JsonValue::object();
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k)
        values[sweep.axes[a].keys[k].key] = sweep_value_json(sweep.value(p, a, k));
    points.push_back({{"point", p},
                      {"values", std::move(values)},
                      {"status", to_string(o.status)},
                      {"reason", o.reason},
                      {"result", o.status == PointStatus::Ok ? o.result : JsonValue()}});
  }
  j["counts"] = std::move(counts);
  j["points"] = std::move(points);
  return j;
}

}  // namespace trainsim::explore
