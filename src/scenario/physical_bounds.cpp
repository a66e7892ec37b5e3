#include "scenario/physical_bounds.hpp"

#include <sstream>

namespace trainsim::scenario_detail {

namespace {

std::string num(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

void require_at_least(const Section& section, const std::string& key, double value, double minimum,
                      const std::string& unit, const std::string& why) {
  if (value >= minimum) return;
  section.fail(key, "expected at least " + num(minimum) + " " + unit + ", got " + num(value) + " (" + why + ")");
}

void require_at_most(const Section& section, const std::string& key, double value, double maximum,
                     const std::string& unit, const std::string& why) {
  if (value <= maximum) return;
  section.fail(key, "expected at most " + num(maximum) + " " + unit + ", got " + num(value) + " (" + why + ")");
}

void require_time_in_range(const Section& section, const std::string& key, double value, double seconds_per_unit) {
  const double maximum = kMaxSeconds / seconds_per_unit;
  if (value <= maximum) return;
  section.fail(key, "expected at most " + num(maximum) + (seconds_per_unit == 1 ? " s" : "") + " (" + num(kMaxSeconds) +
                        " s, 11.6 days), got " + num(value) +
                        ": longer than anything a training run simulates, and beyond the simulator's clock");
}

}  // namespace trainsim::scenario_detail
