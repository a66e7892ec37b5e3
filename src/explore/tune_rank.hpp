#pragma once
// Ranking the simulated configurations of `trainsim tune` and saying why each beats the next
// (docs/tune.md, "Objectives" and "Why it beats the next").
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/objective.hpp"
#include "explore/tune_space.hpp"

namespace trainsim::explore {

// A simulated configuration: its `trainsim run --json` result and objective value.
struct RankedConfig {
  TuneCandidate candidate;
  nlohmann::ordered_json result;
  double objective = 0;
};

// True when `a` ranks before `b`: better objective, or equal objective and smaller key (key_less), so
// the ranking is a total order that depends only on the configurations and their results.
bool ranks_before(const RankedConfig& a, const RankedConfig& b, ObjectiveKind kind);
// Sorts best first.
void rank_configs(std::vector<RankedConfig>& configs, ObjectiveKind kind);

// One component of the critical rank's time, a's seconds minus b's.
struct ComponentDiff {
  std::string component;  // "compute", "tp", "cp", "dp", "pp", "ep", "other_comm", "bubble", "optimizer", "other"
  std::string label;      // in the user's words: "exposed TP communication", "pipeline bubble"
  double seconds = 0;
};
// Every component of the results' `breakdown` (compute, exposed communication by group, bubble,
// optimizer, other), a minus b, largest magnitude first; equal magnitudes keep the order above.
std::vector<ComponentDiff> breakdown_differences(const nlohmann::ordered_json& a, const nlohmann::ordered_json& b);

// "Why #rank beats #rank+1": the components that differ most.
struct Explanation {
  int rank = 0;
  int versus = 0;
  double iteration_time_s = 0;
  double versus_iteration_time_s = 0;
  std::vector<ComponentDiff> largest;  // at most max_items, each at least a microsecond
  std::string text;                    // "#1 vs #2: 5.21 vs 5.33 s per iteration; 1.90 s less pipeline bubble, ..."
};
Explanation explain_versus(const RankedConfig& a, int rank, const RankedConfig& b, ObjectiveKind kind,
                           std::size_t max_items = 3);

// "1.90 s", "12.3 ms", "45 us" (magnitude only; callers say more or less).
std::string format_seconds(double seconds);

}  // namespace trainsim::explore
