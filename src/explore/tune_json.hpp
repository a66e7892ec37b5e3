#pragma once
// `trainsim tune`'s outcome as data: the configurations listed, why each beats the next, and the whole of it as
// the JSON object `tune --json` prints (docs/tune.md, "Output"). The CLI's table and the Python module's
// `trainsim.tune` read these, so all three agree.
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/tune_search.hpp"

namespace trainsim::explore {

// How many ranked configurations are listed: `top`, or fewer when fewer ranked.
std::size_t listed_count(const TuneOutcome& outcome, std::size_t top);

// Each listed configuration against the one ranked after it (the last listed against the first not listed, when
// there is one).
std::vector<Explanation> listed_explanations(const TuneOutcome& outcome, const Objective& objective, std::size_t top);

// The `tune --json` object: scenario, objective, counts, the listed configurations ("ranked": rank,
// configuration, overrides, objective, result) and the explanations.
nlohmann::ordered_json tune_json(const TuneOutcome& outcome, const Objective& objective, std::size_t top);

// Why nothing was ranked: the smallest memory shortfall seen, else the first invalid configuration's
// error, else the first failed simulation's.
std::string tune_nothing_ranked_message(const TuneOutcome& outcome);

}  // namespace trainsim::explore
