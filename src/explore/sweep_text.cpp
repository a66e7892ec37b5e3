#include "explore/sweep_text.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "report/format_utils.hpp"

namespace trainsim::explore {

namespace {

namespace rf = report_format;

struct TextTable {
  std::vector<std::string> header;
  std::vector<bool> right_aligned;
  std::vector<std::vector<std::string>> rows;

  // Columns padded to their widest cell; the last column is never padded (reasons can be long).
  void write(std::ostream& out, const std::string& indent = "") const {
    std::vector<std::size_t> width(header.size());
    for (std::size_t c = 0; c < header.size(); ++c) {
      width[c] = header[c].size();
      for (const auto& r : rows) width[c] = std::max(width[c], r[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = indent;
      for (std::size_t c = 0; c < cells.size(); ++c) {
        if (c) s += "  ";
        const bool last = c + 1 == cells.size();
        if (right_aligned[c])
          s += fmt::format("{:>{}}", cells[c], width[c]);
        else
          s += last ? cells[c] : fmt::format("{:<{}}", cells[c], width[c]);
      }
      while (!s.empty() && s.back() == ' ') s.pop_back();
      out << s << "\n";
    };
    line(header);
    for (const auto& r : rows) line(r);
  }
};

std::string one_line(std::string s) {
  std::replace(s.begin(), s.end(), '\n', ' ');
  std::replace(s.begin(), s.end(), '\r', ' ');
  return s;
}

std::optional<double> field(const SweepTable& t, std::size_t row, const std::string& name) {
  const auto c = t.column(name);
  if (!c || !t.ok[row]) return std::nullopt;
  return t.number(row, *c);
}

std::string or_dash(const std::optional<double>& v, std::string (*format)(double)) { return v ? format(*v) : "-"; }

std::string gib(double v) { return fmt::format("{:.2f}", v); }
std::string tokens(double v) { return rf::group_digits(v); }

}  // namespace

std::optional<double> iteration_time_change(const SweepTable& table, std::size_t from, std::size_t to) {
  const auto a = field(table, from, "iteration_time_s"), b = field(table, to, "iteration_time_s");
  if (!a || !b || *a <= 0) return std::nullopt;
  return (*b - *a) / *a;
}

std::string other_keys_label(const Sweep& sweep, std::size_t point) {
  std::string label;
  for (std::size_t a = 1; a < sweep.axes.size(); ++a)
    for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k)
      label += (label.empty() ? "" : ", ") + sweep.axes[a].keys[k].key + "=" + sweep.value(point, a, k).text;
  return label;
}

void write_sweep_text(std::ostream& out, const Sweep& sweep, const SweepTable& table) {
  TextTable points;
  for (const auto& axis : sweep.axes)
    for (const auto& k : axis.keys) {
      points.header.push_back(k.key);
      points.right_aligned.push_back(false);
    }
  for (const char* h : {"iteration", "tokens/s/GPU", "MFU", "peak GiB"}) {
    points.header.push_back(h);
    points.right_aligned.push_back(true);
  }
  points.header.push_back("status");
  points.right_aligned.push_back(false);

  const std::size_t status_col = *table.column("status"), reason_col = *table.column("reason");
  for (std::size_t p = 0; p < table.rows.size(); ++p) {
    std::vector<std::string> row;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k) row.push_back(sweep.value(p, a, k).text);
    row.push_back(or_dash(field(table, p, "iteration_time_s"), rf::human_duration));
    row.push_back(or_dash(field(table, p, "tokens_per_s_per_gpu"), tokens));
    row.push_back(or_dash(field(table, p, "mfu"), rf::percent));
    row.push_back(or_dash(field(table, p, "memory.peak"), gib));
    std::string status = table.rows[p][status_col].get<std::string>();
    const std::string reason = table.rows[p][reason_col].get<std::string>();
    if (!reason.empty()) status += ": " + one_line(reason);
    row.push_back(std::move(status));
    points.rows.push_back(std::move(row));
  }
  points.write(out);

  // Marginal gain: each step of the first axis (all its keys together when zipped), the other keys
  // fixed. With the first axis slowest, the previous value's point is `stride` points earlier.
  const SweepAxis& first = sweep.axes.front();
  if (first.size() < 2) return;
  const std::size_t stride = sweep.stride(0);
  TextTable steps;
  const bool labelled = sweep.axes.size() > 1;
  if (labelled) {
    steps.header.push_back("other keys");
    steps.right_aligned.push_back(false);
  }
  steps.header.insert(steps.header.end(), {"step", "iteration time"});
  steps.right_aligned.insert(steps.right_aligned.end(), {false, true});
  for (std::size_t rest = 0; rest < stride; ++rest)
    for (std::size_t i = 1; i < first.size(); ++i) {
      const std::size_t from = (i - 1) * stride + rest, to = i * stride + rest;
      std::vector<std::string> row;
      if (labelled) row.push_back(other_keys_label(sweep, to));
      row.push_back(first.step_label(i - 1) + " -> " + first.step_label(i));
      const auto change = iteration_time_change(table, from, to);
      row.push_back(change ? rf::signed_percent(*change) : "n/a");
      steps.rows.push_back(std::move(row));
    }
  const std::string what = first.keys.size() > 1 ? "(" + first.name() + ")" : first.name();
  out << "\nChange in iteration time at each step of " << what << (labelled ? " (other keys fixed)" : "") << ":\n";
  steps.write(out, "  ");
}

}  // namespace trainsim::explore
