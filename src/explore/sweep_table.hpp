#pragma once
// A sweep's results as one table: a row per point, the varied and zipped keys first (a column
// each), then status and reason, then every scalar field of the `trainsim run --json` object
// flattened with dotted names. The CSV output and the plot both read this table, so they always agree.
#include <cstddef>
#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "explore/point_eval.hpp"
#include "explore/sweep_spec.hpp"

namespace trainsim::explore {

// The scalar fields of a result, in the JSON's order, named by their dotted path
// ("breakdown.compute"). Arrays (the comm table) are left out, and so is simulation.wall_s: it is
// zero in a sweep and would only look like a measurement.
std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_scalars(const nlohmann::ordered_json& result);

struct SweepTable {
  std::size_t key_columns = 0;                            // the first columns are the keys of the axes, in axis order
  std::vector<std::string> columns;                       // key paths, "status", "reason", result fields
  std::vector<std::vector<nlohmann::ordered_json>> rows;  // a cell per column; null = empty
  std::vector<bool> ok;                                   // per row: the point simulated
  // Result field -> its column (a field named like a key column still gets a column of its own).
  std::map<std::string, std::size_t> result_columns;

  // Index of `name` in `columns`, if any.
  std::optional<std::size_t> column(const std::string& name) const;
  // The cell as a number (null for text, booleans and empty cells).
  std::optional<double> number(std::size_t row, std::size_t column) const;
  // Columns holding a number in at least one simulated row (what `--y` may name).
  std::vector<std::string> numeric_columns() const;
};

// Result columns are the union of the simulated points' fields, in point order and first-seen
// order, so the column set depends only on the outcomes, never on threads or ranks.
SweepTable make_sweep_table(const Sweep& sweep, const std::vector<PointOutcome>& outcomes);

// The same table built a row at a time, in point order (make_sweep_table is exactly this): the key,
// status and reason columns, then add_sweep_row for points 0, 1, 2... Returns true when the point
// brought result columns the table lacked (earlier rows then get empty cells there).
SweepTable empty_sweep_table(const Sweep& sweep);
bool add_sweep_row(SweepTable& table, const Sweep& sweep, std::size_t point, const PointOutcome& outcome);

// A key's value as YAML reads it: an integer, a float, else the text ("H100-SXM", "[4, 0]").
nlohmann::ordered_json sweep_value_json(const SweepValue& v);

// The table as one JSON object per point, in point order: column name -> cell (an empty cell is null), so every
// object has every column (a result field named like a key is that key's column). A key's cell is the value as
// YAML reads it (a number stays a number: 400, not "400"), as a data frame wants it. `trainsim.sweep` in Python
// returns this.
nlohmann::ordered_json sweep_rows_json(const Sweep& sweep, const SweepTable& table);

// The cell as CSV text: strings RFC 4180-quoted when needed, numbers as nlohmann prints them
// (shortest text that reads back to the same double), booleans true/false, null empty.
std::string csv_cell(const nlohmann::ordered_json& cell);

// Header row, then one row per point in point order; lines end with '\n'.
void write_sweep_csv(std::ostream& out, const SweepTable& table);
// Its lines one at a time: the header, and row `row`.
std::string sweep_csv_header(const SweepTable& table);
std::string sweep_csv_row(const SweepTable& table, std::size_t row);

}  // namespace trainsim::explore
