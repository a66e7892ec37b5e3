#pragma once
// trainsim's workload as an AICB/SimAI layer table: one table per pipeline stage (its simulated rank), each cut into
// the lines before the first micro-batch, one piece per micro-batch (and model chunk) tagged name@mbM[.cC], and the
// lines after the last backward; each line's compute time the time the kernels it stands for ran in trainsim's own
// simulation. The rules: docs/workload-files.md.
#include <vector>

#include "core/time.hpp"
#include "scenario/scenario.hpp"
#include "workload/aicb/aicb_table.hpp"
#include "workload/workload.hpp"

namespace trainsim {

// Per simulated rank (Workload::ranks order), per op: how long the op ran.
using OpDurations = std::vector<std::vector<SimTime>>;

// Throws Error when the job has what the format cannot say (context parallelism, an expert-TP size of its own).
AicbFile export_aicb(const Scenario& s, const Workload& wl, const OpDurations& durations);

}  // namespace trainsim
