#pragma once
// Chakra execution traces (MLCommons) <-> trainsim's workload IR; docs/chakra.md has the mapping.
#include <string>

#include "workload/workload.hpp"

namespace trainsim::chakra {

// The file name prefix of the traces trainsim writes: DIR/trainsim.<rank>.et (ASTRA-sim:
// --workload-configuration=DIR/trainsim), and the process groups for ASTRA-sim's --comm-group-configuration.
inline constexpr const char* kTracePrefix = "trainsim";
inline constexpr const char* kCommGroupFile = "comm_group.json";

// Writes one trace per simulated rank of `wl` into `dir` (created if missing), and DIR/comm_group.json. Every
// compute op's kernel must be KernelKind::FixedDuration (its duration is what the trace records; the API prices
// them before calling this). Throws Error naming a file that cannot be written.
void write_traces(const Workload& wl, const std::string& dir);

// Reads every <prefix>.<rank>.et of `dir` (one prefix) and DIR/comm_group.json when present into the IR the engine
// runs on a cluster of `world_size` GPUs. Throws Error "FILE: what" or "FILE: node N: what" (N counts the file's
// nodes from 0) for anything malformed.
Workload read_traces(const std::string& dir, int world_size);

}  // namespace trainsim::chakra
