#pragma once
// `trainsim tune --html FILE`: one self-contained page of a search (docs/html-report.md, "Tuning"): the best
// configuration and the `trainsim run ... --set ...` command that reproduces it, the listed configurations' objective
// as a bar chart (the best highlighted) and as a sortable table, why each beats the next, and how many candidates
// each pruning rule discarded and why. The `tune --json` object (tune_json.hpp) is embedded (html_page.hpp) and every
// number shown carries its path in it.
#include <cstddef>
#include <string>

#include "explore/tune_search.hpp"

namespace trainsim::explore {

// `top`: the configurations listed, as for tune_json; `scenario_path`: the scenario file as given (the command the
// page suggests runs it).
std::string render_tune_html(const TuneOutcome& outcome, const Objective& objective, std::size_t top,
                             const std::string& scenario_path);

// `text` as one word of a POSIX shell command line: as it is when it holds only characters no shell treats
// specially, else in single quotes ("it's" -> 'it'\''s').
std::string shell_word(const std::string& text);

}  // namespace trainsim::explore
