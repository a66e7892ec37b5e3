#pragma once
// What `trainsim sweep` varies: the `--vary key=values` and `--zip key=values` arguments and the grid
// of points they span. Every value is checked (syntax, known key, parses as YAML) before anything is
// simulated, so a typo fails in milliseconds rather than after an hour of simulated points that all
// say "invalid".
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

// One key and its values, as one `--vary` or `--zip` argument gives them.
struct SweepKey {
  std::string key;                 // "cluster.nic_gbps"
  std::vector<SweepValue> values;  // in the order given, ranges expanded
  bool numeric() const;            // every value is a number
};

// One dimension of the grid. A `--vary` axis has one key; the zipped axis has every `--zip` key (in
// command-line order), all with the same number of values, and its i-th point sets each of them to
// its i-th value: keys that change together, such as pipeline stages and the global batch.
struct SweepAxis {
  std::vector<SweepKey> keys;
  bool zipped = false;

  std::size_t size() const { return keys.front().values.size(); }  // points along the axis
  const SweepKey& first() const { return keys.front(); }           // what the plot's x axis shows
  std::string name() const;  // "cluster.nic_gbps"; zipped: "parallelism.pipeline + training.global_batch_size"
  std::string step_label(std::size_t i) const;  // "400"; zipped: "(4, 64)"
  const char* flag() const { return zipped ? "--zip" : "--vary"; }
};

// The cartesian product of the axes, first axis varying slowest (row-major), so point
// p = i0 * stride(0) + i1 * stride(1) + ... with the last axis's stride 1.
struct Sweep {
  std::vector<SweepAxis> axes;

  std::size_t size() const;                    // number of points
  std::size_t key_count() const;               // keys over all axes: the CSV's key columns
  std::size_t stride(std::size_t axis) const;  // product of the sizes of the later axes
  std::size_t value_index(std::size_t point, std::size_t axis) const;
  // The value that point `point` gives to key `key` of axis `axis`.
  const SweepValue& value(std::size_t point, std::size_t axis, std::size_t key = 0) const;
  // Per point: `base` (the `--set` list) followed by "key=value" for every key of every axis.
  std::vector<Overrides> overrides(const std::vector<std::string>& base = {}) const;
};

// Upper bounds that keep a typo such as `1:1e9:1` from eating the machine.
inline constexpr std::size_t kMaxValuesPerAxis = 100000;
inline constexpr std::size_t kMaxSweepPoints = 1000000;

// One `--vary` argument: "key=v1,v2,..." where an item may be a range "a:b:step" (inclusive end;
// integers stay integers). Commas inside [..], {..} or quotes do not split. Throws trainsim::Error
// naming `--vary` and the offending text; a value given twice is an error.
SweepKey parse_vary(const std::string& text);

// One `--zip` argument: the syntax of `--vary`, errors naming `--zip`. A value may repeat (the TP
// size may grow while the GPU count stays put); only whole zipped points must differ.
SweepKey parse_zip(const std::string& text);

// Every `--vary` argument and every `--zip` argument (at least one of either, no key twice) and the
// grid they span. The `--zip` keys form one axis, placed before the `--vary` axis number
// `zip_position` (0: the first axis; the `--vary` count or more: the last). Errors name the flag.
Sweep make_sweep(const std::vector<std::string>& vary_texts, const std::vector<std::string>& zip_texts = {},
                 std::size_t zip_position = 0);

// Rejects a `--set` of a key that a `--vary` or `--zip` also sets: one of the two would silently lose.
void check_no_set_conflict(const Sweep& sweep, const std::vector<std::string>& sets);

}  // namespace trainsim::explore
