#pragma once
// Checks that need more than one block (spec/scenario.md: "A configuration that cannot run ...
// gives a clear error"). Each error names the key to change and the numbers that disagree.
#include <cstdint>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim::scenario_detail {

// An integer in a validation message, as the user wrote it (no digit grouping).
inline std::string str(std::int64_t v) { return std::to_string(v); }

// Resolves parallelism.data and normalises flags that have no effect, then checks the training
// job against the model and cluster (validation.cpp).
void validate_job(Scenario& s);

// How the model's layers fall on the pipeline stages, and full-recompute layer counts
// (pipeline_validation.cpp). Returns the number of layers of each pipeline stage.
std::vector<int> validate_pipeline_split(const Scenario& s);
// parallelism.pipeline_layout expanded into one string per (virtual) stage and checked against the model
// (pipeline_layout.cpp); resolve_pipeline_layout stores it and the virtual_pipeline it implies.
std::vector<std::string> parse_pipeline_layout(const Scenario& s);
void resolve_pipeline_layout(Scenario& s);
// training.recompute_modules against the granularity and the model (pipeline_validation.cpp).
void validate_recompute_modules(const Scenario& s);
void validate_recompute_layers(const Scenario& s, const std::vector<int>& stage_layers);

// Fault events refer to nodes, NICs and ranks that exist (validation.cpp).
void validate_faults(const Scenario& s);

}  // namespace trainsim::scenario_detail
