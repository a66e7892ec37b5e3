#pragma once
// Import and export of other simulators' workload files: SimAI/AICB layer tables (workload/aicb/) and Chakra
// execution traces (workload/chakra/). docs/workload-files.md describes each format as trainsim reads and writes it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/time.hpp"
#include "scenario/scenario.hpp"
#include "workload/generator.hpp"
#include "workload/workload.hpp"

namespace trainsim {

enum class WorkloadFileFormat { Aicb, Chakra };

// "aicb" / "chakra"; nullopt for others (the CLI lists the known names in its error).
std::optional<WorkloadFileFormat> workload_file_format_named(std::string_view name);
std::vector<std::string> workload_file_format_names();

// Per simulated rank (Workload::ranks order), per op: how long the op ran in trainsim's simulation. Both formats
// state compute times, not shapes, so their export needs them.
using WorkloadOpDurations = std::vector<std::vector<SimTime>>;

// Writes trainsim's own workload for the scenario (AICB: one file; Chakra: a directory, one trace per rank), each
// compute op with the time it ran in `durations` (alone or beside collectives: what a profiler would have measured).
void write_workload_file(WorkloadFileFormat f, const Scenario& s, const Workload& wl, const std::string& path,
                         const WorkloadOpDurations& durations);

// Reads an AICB file or a Chakra trace directory (detected: a directory = Chakra) into the Workload IR the
// engine runs on the scenario's cluster. Throws Error with "FILE:LINE: what" (AICB) or "FILE: node N: what" (Chakra).
Workload read_workload_file(const std::string& path, const Scenario& s, const WorkloadOptions& o = {});

}  // namespace trainsim
