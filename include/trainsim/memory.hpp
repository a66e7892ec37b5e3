#pragma once
// `trainsim memory`: the memory model's table of every pipeline stage, without simulating (docs/memory-model.md),
// as the object `memory --json` prints. The CLI and the Python module's `trainsim.memory` give the same.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scenario/scenario.hpp"
#include "workload/memory_model.hpp"

namespace trainsim {

// The stage that needs the most memory per GPU (the first of equals). Throws Error, naming the scenario's file,
// when `stages` is empty.
const StageMemory& worst_stage(const Scenario& s, const std::vector<StageMemory>& stages);

// The `memory --json` object: scenario, gpu, capacity_gib, stages (one object per stage, GiB per GPU, and whether it
// fits), worst_stage, peak, fits.
nlohmann::ordered_json memory_json(const Scenario& s, const std::vector<StageMemory>& stages);

// Whether the worst stage fits in the GPU's memory, and what to say when it does not:
// "FILE: does not fit: pipeline stage 2 needs 90.1 GiB per GPU of 80.0 GiB".
bool memory_fits(const Scenario& s, const std::vector<StageMemory>& stages);
std::string memory_does_not_fit_message(const Scenario& s, const std::vector<StageMemory>& stages);

}  // namespace trainsim
