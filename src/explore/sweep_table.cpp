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

SweepTable make_sweep_table(const Sweep& sweep, const std::vector<PointOutcome>& outcomes) {
  SweepTable t;
  // A column per key, zipped keys included, in axis order: the order of the overrides.
  t.key_columns = sweep.key_count();
  for (const auto& axis : sweep.axes)
    for (const auto& k : axis.keys) t.columns.push_back(k.key);
  t.columns.push_back("status");
  t.columns.push_back("reason");

  std::vector<std::vector<std::pair<std::string, nlohmann::ordered_json>>> fields(outcomes.size());
  std::map<std::string, std::size_t> index_of;
  for (std::size_t p = 0; p < outcomes.size(); ++p) {
    if (outcomes[p].status != PointStatus::Ok) continue;
    fields[p] = flatten_scalars(outcomes[p].result);
    for (const auto& [name, value] : fields[p])
      if (index_of.emplace(name, t.columns.size()).second) t.columns.push_back(name);
  }

  for (std::size_t p = 0; p < outcomes.size(); ++p) {
    std::vector<nlohmann::ordered_json> row(t.columns.size());
    std::size_t c = 0;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k) row[c++] = sweep.value(p, a, k).text;
    row[t.key_columns] = to_string(outcomes[p].status);
    row[t.key_columns + 1] = outcomes[p].reason;
    for (auto& [name, value] : fields[p]) row[index_of.at(name)] = std::move(value);
    t.rows.push_back(std::move(row));
    t.ok.push_back(outcomes[p].status == PointStatus::Ok);
  }
  return t;
}

std::string csv_cell(const nlohmann::ordered_json& cell) {
  if (cell.is_null()) return "";
  if (cell.is_string()) return report_format::csv_field(cell.get_ref<const std::string&>());
  return report_format::csv_field(cell.dump());
}

void write_sweep_csv(std::ostream& out, const SweepTable& table) {
  std::string text;
  for (std::size_t c = 0; c < table.columns.size(); ++c)
    text += (c ? "," : "") + report_format::csv_field(table.columns[c]);
  text += "\n";
  for (const auto& row : table.rows) {
    for (std::size_t c = 0; c < row.size(); ++c) text += (c ? "," : "") + csv_cell(row[c]);
    text += "\n";
  }
  out << text;
}

}  // namespace trainsim::explore
