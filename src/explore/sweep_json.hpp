#pragma once
// `trainsim sweep --json`: the whole sweep as one object, what was swept and every point's outcome
// (docs/sweep.md, "JSON"):
//   {"scenario", "base_overrides": [the --set list],
//    "axes": [{"zipped": false, "keys": [{"key": "cluster.nic_gbps", "values": [100, 200, 400]}]}, ...],
//    "counts": {"points", "ok", "invalid", "out_of_memory", "failed"},
//    "points": [{"point": 0, "values": {"cluster.nic_gbps": 100, ...}, "status": "ok", "reason": "",
//                "result": {the `trainsim run --json` object, simulation.wall_s = 0} or null}, ...]}
// Values are typed as YAML reads them (400, not "400"); points are in point order. `sweep --html` embeds it.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/point_eval.hpp"
#include "explore/sweep_spec.hpp"

namespace trainsim::explore {

// `scenario`: the scenario's name (its file's stem, as in a run's result); `base_overrides`: the --set list.
nlohmann::ordered_json sweep_json(const Sweep& sweep, const std::vector<PointOutcome>& outcomes,
                                  const std::string& scenario, const std::vector<std::string>& base_overrides);

}  // namespace trainsim::explore
