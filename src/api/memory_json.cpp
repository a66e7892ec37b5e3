#include "trainsim/memory.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim {

const StageMemory& worst_stage(const Scenario& s, const std::vector<StageMemory>& stages) {
  if (stages.empty()) throw Error(s.file + ": the memory model returned no pipeline stage");
  const StageMemory* worst = &stages.front();
  for (const auto& st : stages)
    if (st.total_gib() > worst->total_gib()) worst = &st;
  return *worst;
}

nlohmann::ordered_json memory_json(const Scenario& s, const std::vector<StageMemory>& stages) {
  const double cap = s.cluster.gpu.memory_gib;
  nlohmann::ordered_json j;
  j["scenario"] = s.name;
  j["gpu"] = s.cluster.gpu.name;
  j["capacity_gib"] = cap;
  j["stages"] = nlohmann::ordered_json::array();
  for (const auto& st : stages)
    j["stages"].push_back({{"stage", st.stage},
                           {"layers", st.layers},
                           {"recomputed_layers", st.recomputed_layers},
                           {"in_flight_micro_batches", st.in_flight_micro_batches},
                           {"activations_per_micro_batch", st.activations_per_micro_batch_gib},
                           {"weights", st.weights_gib},
                           {"grads", st.grads_gib},
                           {"optimizer", st.optimizer_gib},
                           {"activations", st.activations_gib},
                           {"other", st.other_gib},
                           {"total", st.total_gib()},
                           {"fits", st.total_gib() <= cap}});
  const StageMemory& w = worst_stage(s, stages);
  j["worst_stage"] = w.stage;
  j["peak"] = w.total_gib();
  j["fits"] = w.total_gib() <= cap;
  return j;
}

bool memory_fits(const Scenario& s, const std::vector<StageMemory>& stages) {
  return worst_stage(s, stages).total_gib() <= s.cluster.gpu.memory_gib;
}

std::string memory_does_not_fit_message(const Scenario& s, const std::vector<StageMemory>& stages) {
  const StageMemory& w = worst_stage(s, stages);
  return fmt::format("{}: does not fit: pipeline stage {} needs {:.1f} GiB per GPU of {:.1f} GiB", s.file, w.stage,
                     w.total_gib(), s.cluster.gpu.memory_gib);
}

}  // namespace trainsim
