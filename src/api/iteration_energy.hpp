#pragma once
// Energy of one iteration (RunResult::energy): the power block's values, else data/power.yaml's.
#include <optional>
#include <string>

#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace trainsim {

// nullopt, with the reason in `why_not`, when the GPU's power is not known (not in data/power.yaml, no rated
// power in the catalog, and not given in the power block).
std::optional<IterationEnergy> iteration_energy(const Scenario& s, const RunResult& r, std::string& why_not);

}  // namespace trainsim
