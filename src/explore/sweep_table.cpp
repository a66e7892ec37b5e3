#include "explore/sweep_table.hpp"

#include <charconv>
#include <cmath>
#include <map>

#include "report/format_utils.hpp"

namespace trainsim::explore {

namespace {

void flatten_into(const nlohmann::ordered_json& node, const std::string& prefix,
                  std::vector<std::pair<std::string, nlohmann::ordered_json>>& out) {
  for (const auto& [name, value] : node.items()) {
    const std::string path = prefix.empty() ? name : prefix + "." + name;
    if (value.is_object())
      flatten_into(value, path, out);
    else if (!value.is_array() && path != "simulation.wall_s" && path != "simulation.compute_model")
      out.emplace_back(path, value);  // wall time varies run to run; the model description is prose
  }
}

}  // namespace

std::vector<std::pair<std::string, nlohmann::ordered_json>> flatten_scalars(const nlohmann::ordered_json& result) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> out;
  if (result.is_object()) flatten_into(result, "", out);
  return out;
}

std::optional<std::size_t> SweepTable::column(const std::string& name) const {
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (columns[c] == name) return c;
  return std::nullopt;
}

std::optional<double> SweepTable::number(std::size_t row, std::size_t col) const {
  const auto& cell = rows.at(row).at(col);
  if (cell.is_number()) return cell.get<double>();
  // Varied values are kept as the text the user gave; a numeric one still counts as a number.
  if (col < key_columns && cell.is_string()) {
    const std::string& s = cell.get_ref<const std::string&>();
    const char* first = s.data() + (s.starts_with('+') ? 1 : 0);
    const char* last = s.data() + s.size();
    double v = 0;
    const auto [end, ec] = std::from_chars(first, last, v);
    if (ec == std::errc() && end == last && first != last && std::isfinite(v)) return v;
  }
  return std::nullopt;
}

std::vector<std::string> SweepTable::numeric_columns() const {
  std::vector<std::string> out;
  for (std::size_t c = 0; c < columns.size(); ++c)
    for (std::size_t r = 0; r < rows.size(); ++r)
      if (ok[r] && number(r, c)) {
        out.push_back(columns[c]);
        break;
      }
  return out;
}

SweepTable empty_sweep_table(const Sweep& sweep) {
  SweepTable t;
  // A column per key, zipped keys included, in axis order: the order of the overrides.
  t.key_columns = sweep.key_count();
  for (const auto& axis : sweep.axes)
    for (const auto& k : axis.keys) t.columns.push_back(k.key);
  t.columns.push_back("status");
  t.columns.push_back("reason");
  return t;
}

bool add_sweep_row(SweepTable& t, const Sweep& sweep, std::size_t point, const PointOutcome& outcome) {
  std::vector<std::pair<std::string, nlohmann::ordered_json>> fields;
  if (outcome.status == PointStatus::Ok) fields = flatten_scalars(outcome.result);
  std::vector<std::size_t> where;
  where.reserve(fields.size());
  const std::size_t before = t.columns.size();
  for (const auto& [name, value] : fields) {
    const auto [it, fresh] = t.result_columns.emplace(name, t.columns.size());
    if (fresh) t.columns.push_back(name);
    where.push_back(it->second);
  }
  const bool grew = t.columns.size() != before;
  if (grew)
    for (auto& row : t.rows) row.resize(t.columns.size());  // earlier rows: empty cells
  std::vector<nlohmann::ordered_json> row(t.columns.size());
  std::size_t c = 0;
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k) row[c++] = sweep.value(point, a, k).text;
  row[t.key_columns] = to_string(outcome.status);
  row[t.key_columns + 1] = outcome.reason;
  for (std::size_t f = 0; f < fields.size(); ++f) row[where[f]] = std::move(fields[f].second);
  t.rows.push_back(std::move(row));
  t.ok.push_back(outcome.status == PointStatus::Ok);
  return grew;
}

SweepTable make_sweep_table(const Sweep& sweep, const std::vector<PointOutcome>& outcomes) {
  SweepTable t = empty_sweep_table(sweep);
  for (std::size_t p = 0; p < outcomes.size(); ++p) add_sweep_row(t, sweep, p, outcomes[p]);
  return t;
}

nlohmann::ordered_json sweep_value_json(const SweepValue& v) {
  if (!v.number) return v.text;
  std::int64_t integer = 0;
  const char* end = v.text.data() + v.text.size();
  const auto [ptr, ec] = std::from_chars(v.text.data(), end, integer);
  if (ec == std::errc() && ptr == end) return integer;
  return *v.number;
}

nlohmann::ordered_json sweep_rows_json(const Sweep& sweep, const SweepTable& table) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    nlohmann::ordered_json row = nlohmann::ordered_json::object();
    std::size_t c = 0;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k, ++c)
        row[table.columns[c]] = sweep_value_json(sweep.value(r, a, k));
    // A result field named like a key (the result repeats parallelism.tensor) keeps the key's cell: the same value.
    for (; c < table.columns.size(); ++c)
      if (!row.contains(table.columns[c])) row[table.columns[c]] = table.rows[r][c];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string csv_cell(const nlohmann::ordered_json& cell) {
  if (cell.is_null()) return "";
  if (cell.is_string()) return report_format::csv_field(cell.get_ref<const std::string&>());
  return report_format::csv_field(cell.dump());
}

std::string sweep_csv_header(const SweepTable& table) {
  std::string text;
  for (std::size_t c = 0; c < table.columns.size(); ++c)
    text += (c ? "," : "") + report_format::csv_field(table.columns[c]);
  return text + "\n";
}

std::string sweep_csv_row(const SweepTable& table, std::size_t row) {
  std::string text;
  const auto& cells = table.rows.at(row);
  for (std::size_t c = 0; c < cells.size(); ++c) text += (c ? "," : "") + csv_cell(cells[c]);
  return text + "\n";
}

void write_sweep_csv(std::ostream& out, const SweepTable& table) {
  std::string text = sweep_csv_header(table);
  for (std::size_t r = 0; r < table.rows.size(); ++r) text += sweep_csv_row(table, r);
  out << text;
}

}  // namespace trainsim::explore
