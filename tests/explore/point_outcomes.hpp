#pragma once
// Point outcomes for the sweep tests (tables, CSV, plots), built by hand instead of simulated.
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "explore/point_eval.hpp"

namespace trainsim::explore::test {

// A simulated point whose `trainsim run --json` object is `result`.
inline PointOutcome ok_outcome(nlohmann::ordered_json result) {
  PointOutcome o;
  o.status = PointStatus::Ok;
  o.result = std::move(result);
  return o;
}

// A simulated point whose result is only its iteration time.
inline PointOutcome ok_with_time(double iteration_time_s) {
  return ok_outcome(nlohmann::ordered_json{{"iteration_time_s", iteration_time_s}});
}

// A point that was not simulated (Invalid, OutOfMemory, Failed, ...) for `reason`.
inline PointOutcome not_run_outcome(PointStatus status, std::string reason) {
  PointOutcome o;
  o.status = status;
  o.reason = std::move(reason);
  return o;
}

}  // namespace trainsim::explore::test
