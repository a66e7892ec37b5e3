#pragma once
// What `trainsim sweep` varies: the `--vary key=values` arguments and the grid of points they span.
// Every value is checked (syntax, known key, parses as YAML) before anything is simulated, so a typo
// fails in milliseconds rather than after an hour of simulated points that all say "invalid".
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "explore/parallel_eval.hpp"

namespace trainsim::explore {

struct SweepValue {
  std::string text;              // what the override gets, parsed as YAML like `--set`: "400", "H100-SXM"
  std::optional<double> number;  // set when the value is a plain number (numeric plot axis)
};

struct SweepAxis {
  std::string key;                // "cluster.nic_gbps"
  std::vector<SweepValue> values;  // in the order given, ranges expanded
  bool numeric() const;            // every value is a number
};

// The cartesian product of the axes, first axis varying slowest (row-major), so point
// p = i0 * stride(0) + i1 * stride(1) + ... with the last axis's stride 1.
struct Sweep {
  std::vector<SweepAxis> axes;

  std::size_t size() const;                             // number of points
  std::size_t stride(std::size_t axis) const;           // product of the sizes of the later axes
  std::size_t value_index(std::size_t point, std::size_t axis) const;
  const SweepValue& value(std::size_t point, std::size_t axis) const;
  // Per point: `base` (the `--set` list) followed by "key=value" for every axis.
  std::vector<Overrides> overrides(const std::vector<std::string>& base = {}) const;
};

// Upper bounds that keep a typo such as `1:1e9:1` from eating the machine.
inline constexpr std::size_t kMaxValuesPerAxis = 100000;
inline constexpr std::size_t kMaxSweepPoints = 1000000;

// One `--vary` argument: "key=v1,v2,..." where an item may be a range "a:b:step" (inclusive end;
// integers stay integers). Commas inside [..], {..} or quotes do not split. Throws trainsim::Error
// naming `--vary` and the offending text.
SweepAxis parse_vary(const std::string& text);

// Every `--vary` argument (at least one, no key twice) and the grid they span.
Sweep make_sweep(const std::vector<std::string>& vary_texts);

// Rejects a `--set` of a key that a `--vary` also sets: one of the two would silently lose.
void check_no_set_conflict(const Sweep& sweep, const std::vector<std::string>& sets);

}  // namespace trainsim::explore
