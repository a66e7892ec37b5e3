#pragma once
// Import and export of other simulators' workload files: each format in its own folder (chakra/: MLCommons Chakra
// execution traces, docs/chakra.md).
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace trainsim {

enum class WorkloadFileFormat { Aicb, Chakra };

// "aicb" / "chakra"; nullopt for others (the CLI lists the known names in its error).
std::optional<WorkloadFileFormat> workload_file_format_named(std::string_view name);
std::vector<std::string> workload_file_format_names();

// Writes trainsim's own workload for the scenario (AICB: one file; Chakra: a directory, one trace per rank).
// Chakra: every compute op's kernel must be KernelKind::FixedDuration (export_workload prices them).
void write_workload_file(WorkloadFileFormat f, const Scenario& s, const Workload& wl, const std::string& path);

// Reads an AICB file or a Chakra trace directory (detected: a directory = Chakra) into the Workload IR the engine
// runs on the scenario's cluster. Throws Error with "FILE:LINE: what" (AICB) or "FILE: node N: what" (Chakra).
Workload read_workload_file(const std::string& path, const Scenario& s);

}  // namespace trainsim
