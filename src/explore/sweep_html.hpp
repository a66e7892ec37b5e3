#pragma once
// `trainsim sweep --html FILE`: one self-contained page of a sweep (docs/html-report.md, "Sweeps"): what was swept
// (the base scenario, its --set list, each key and its values), the iteration time and the tokens/s per GPU of every
// point as SVG line charts, and a sortable table of every point with the text report's columns. Points that did not
// simulate are a row with their status and reason and a cross on the charts' x axis. The `sweep --json` object is
// embedded (html_page.hpp) and every number shown carries its path in it.
#include <string>

#include <nlohmann/json.hpp>

#include "explore/sweep_spec.hpp"

namespace trainsim::explore {

// `json`: sweep_json() of this sweep (what `--json` prints); `scenario_path`: the scenario file as given.
std::string render_sweep_html(const Sweep& sweep, const nlohmann::ordered_json& json, const std::string& scenario_path);

}  // namespace trainsim::explore
