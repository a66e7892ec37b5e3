#include "explore/tune_rank.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim::explore {

bool ranks_before(const RankedConfig& a, const RankedConfig& b, ObjectiveKind kind) {
  if (a.objective != b.objective) return maximises(kind) ? a.objective > b.objective : a.objective < b.objective;
  return key_less(a.candidate, b.candidate);
}

void rank_configs(std::vector<RankedConfig>& configs, ObjectiveKind kind) {
  std::sort(configs.begin(), configs.end(),
            [kind](const RankedConfig& a, const RankedConfig& b) { return ranks_before(a, b, kind); });
}

namespace {

double number_at(const nlohmann::ordered_json& j, const char* a, const char* b = nullptr) {
  const auto it = j.find(a);
  if (it == j.end()) return 0;
  if (!b) return it->is_number() ? it->get<double>() : 0;
  const auto jt = it->find(b);
  return jt != it->end() && jt->is_number() ? jt->get<double>() : 0;
}

struct Component {
  const char* name;
  const char* label;
  const char* group;  // key under breakdown.exposed_comm_by_group, or nullptr for breakdown.<name>
};
// The order in which equal differences are listed.
constexpr Component kComponents[] = {
    {"compute", "compute", nullptr},
    {"tp", "exposed TP communication", "tp"},
    {"cp", "exposed CP communication", "cp"},
    {"dp", "exposed DP communication", "dp"},
    {"pp", "exposed PP communication", "pp"},
    {"ep", "exposed EP communication", "ep"},
    {"other_comm", "other exposed communication", "other"},
    {"bubble", "pipeline bubble", nullptr},
    {"optimizer", "optimizer", nullptr},
    {"other", "other", nullptr},
};

double component_seconds(const nlohmann::ordered_json& result, const Component& c) {
  const auto bd = result.find("breakdown");
  if (bd == result.end()) return 0;
  return c.group ? number_at(*bd, "exposed_comm_by_group", c.group) : number_at(*bd, c.name);
}

}  // namespace

std::vector<ComponentDiff> breakdown_differences(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b) {
  std::vector<ComponentDiff> out;
  for (const Component& c : kComponents)
    out.push_back({c.name, c.label, component_seconds(a, c) - component_seconds(b, c)});
  std::stable_sort(out.begin(), out.end(), [](const ComponentDiff& x, const ComponentDiff& y) {
    return std::abs(x.seconds) > std::abs(y.seconds);
  });
  return out;
}

std::string format_seconds(double seconds) {
  const double s = std::abs(seconds);
  if (s >= 1) return fmt::format("{:.2f} s", s);
  if (s >= 1e-3) return fmt::format("{:.1f} ms", s * 1e3);
  return fmt::format("{:.0f} us", s * 1e6);
}

Explanation explain_versus(const RankedConfig& a, int rank, const RankedConfig& b, ObjectiveKind kind,
                           std::size_t max_items) {
  Explanation e;
  e.rank = rank;
  e.versus = rank + 1;
  e.iteration_time_s = number_at(a.result, "iteration_time_s");
  e.versus_iteration_time_s = number_at(b.result, "iteration_time_s");
  for (const ComponentDiff& d : breakdown_differences(a.result, b.result)) {
    if (e.largest.size() >= max_items || std::abs(d.seconds) < 0.5e-6) break;  // below what format_seconds shows
    e.largest.push_back(d);
  }
  std::string text = fmt::format("#{} vs #{}: ", e.rank, e.versus);
  if (a.objective == b.objective) text += fmt::format("same {} (ranked first by key order); ", objective_name(kind));
  text += fmt::format("{:.4g} vs {:.4g} s per iteration", e.iteration_time_s, e.versus_iteration_time_s);
  if (a.candidate.num_gpus != b.candidate.num_gpus)
    text += fmt::format(" on {} vs {} GPUs", a.candidate.num_gpus, b.candidate.num_gpus);
  if (e.largest.empty()) {
    text += "; no component of the breakdown differs";
  } else {
    for (std::size_t i = 0; i < e.largest.size(); ++i) {
      const ComponentDiff& d = e.largest[i];
      text += fmt::format("{}{} {} {}", i == 0 ? "; " : ", ", format_seconds(d.seconds),
                          d.seconds < 0 ? "less" : "more", d.label);
    }
  }
  e.text = text;
  return e;
}

}  // namespace trainsim::explore
