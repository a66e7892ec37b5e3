#pragma once
// An AICB/SimAI layer table as trainsim's workload IR on the scenario's cluster: each pipeline stage's table cut
// into the lines before the micro-batches, one piece per micro-batch (and model chunk) and the lines after; the
// pieces replayed in trainsim's pipeline schedule with the pipeline transfers the header's pp_comm gives. The
// rules (which collective waits for what) are in docs/workload-files.md.
#include "scenario/scenario.hpp"
#include "workload/aicb/aicb_table.hpp"
#include "workload/generator.hpp"
#include "workload/workload.hpp"

namespace trainsim {

// Throws Error "FILE:LINE: what" when the file does not fit the scenario's cluster or cannot be cut into micro-batches.
Workload import_aicb(const AicbFile& f, const Scenario& s, const WorkloadOptions& o = {});

}  // namespace trainsim
