#pragma once
// What `trainsim tune` prints: the pruning counts, the top configurations as a table, and why each
// beats the next; or the same as one JSON object (docs/tune.md, "Output").
#include <cstddef>
#include <ostream>
#include <string>

#include <nlohmann/json.hpp>

#include "explore/tune_search.hpp"

namespace trainsim::cli {

// "312 candidates: 120 invalid, 40 TP beyond scale-up, 80 out of memory, 30 dominated, 42 simulated"
std::string tune_counts_line(const explore::TuneCounts& counts);

void write_tune_text(std::ostream& out, const explore::TuneOutcome& outcome, const explore::Objective& objective,
                     std::size_t top);
nlohmann::ordered_json tune_json(const explore::TuneOutcome& outcome, const explore::Objective& objective,
                                 std::size_t top);

// Why nothing was ranked: the smallest memory shortfall seen, else the first invalid configuration's
// error, else the first failed simulation's.
std::string tune_nothing_ranked_message(const explore::TuneOutcome& outcome);

}  // namespace trainsim::cli
