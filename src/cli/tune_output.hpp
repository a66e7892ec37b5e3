#pragma once
// What `trainsim tune` prints: the pruning counts, the top configurations as a table, and why each
// beats the next (docs/tune.md, "Output"). The JSON object is explore/tune_json.hpp's.
#include <cstddef>
#include <ostream>
#include <string>

#include "trainsim/explore.hpp"

namespace trainsim::cli {

// "312 candidates: 120 invalid, 40 TP beyond scale-up, 80 out of memory, 30 dominated, 42 simulated"
std::string tune_counts_line(const explore::TuneCounts& counts);

void write_tune_text(std::ostream& out, const explore::TuneOutcome& outcome, const explore::Objective& objective,
                     std::size_t top);

}  // namespace trainsim::cli
