#include "explore/sweep_html.hpp"

#include <optional>

#include <fmt/format.h>

#include "report/format_utils.hpp"
#include "report/html_page.hpp"
#include "report/svg_chart.hpp"

namespace trainsim::explore {

namespace {

using Json = nlohmann::ordered_json;
using html::put;
using html::put_text;
using html::putf;
namespace rf = report_format;

constexpr std::size_t kMaxValueTicks = 16;  // a numeric key with more values gets 1-2-5 ticks
// The table of keys lists the first 20 and the last 3 values of a key with more than 24.
constexpr std::size_t kMaxListedValues = 24, kListedHead = 20, kListedTail = 3;

std::string point_path(std::size_t p) { return fmt::format("points[{}]", p); }

// A number of a point's result, when the point simulated and its result has one.
std::optional<double> result_number(const Json& point, const char* field, const char* sub = nullptr) {
  const Json& r = point["result"];
  if (!r.is_object() || !r.contains(field)) return std::nullopt;
  const Json& v = sub ? (r[field].is_object() && r[field].contains(sub) ? r[field][sub] : Json()) : r[field];
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

// "100" with one key, "(1, 16, 16)" with several: a point's values in key order.
std::string point_label(const Sweep& sweep, std::size_t p) {
  std::string label;
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k)
      label += (label.empty() ? "" : ", ") + sweep.value(p, a, k).text;
  return sweep.key_count() > 1 ? "(" + label + ")" : label;
}

// "cluster.nic_gbps=100, parallelism.tensor=2"
std::string point_settings(const Sweep& sweep, std::size_t p) {
  std::string text;
  for (std::size_t a = 0; a < sweep.axes.size(); ++a)
    for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k)
      text += (text.empty() ? "" : ", ") + sweep.axes[a].keys[k].key + "=" + sweep.value(p, a, k).text;
  return text;
}

// Where each point goes on the charts. One or two --vary keys: x is the first key (its values, or its categories
// when they are not all numbers), a line per value of the second. A zipped axis or three keys and more: x is the
// point, labelled with its values, one line through the points in point order.
struct ChartShape {
  bool by_first_key = false;
  std::string x_label;
  std::vector<std::string> categories;
  std::vector<std::pair<double, std::string>> x_ticks;  // a numeric key's values, when few
  std::vector<std::string> series_names;
  std::vector<double> x;               // per point
  std::vector<std::size_t> series_of;  // per point
};

ChartShape chart_shape(const Sweep& sweep) {
  ChartShape s;
  const std::size_t n = sweep.size();
  bool zipped = false;
  for (const SweepAxis& axis : sweep.axes) zipped = zipped || axis.zipped;
  s.by_first_key = !zipped && sweep.axes.size() <= 2;
  s.x.resize(n);
  s.series_of.assign(n, 0);
  if (s.by_first_key) {
    const SweepKey& first = sweep.axes[0].first();
    s.x_label = first.key;
    const bool numeric = first.numeric();
    for (const SweepValue& v : first.values) {
      if (!numeric)
        s.categories.push_back(v.text);
      else if (first.values.size() <= kMaxValueTicks)
        s.x_ticks.emplace_back(*v.number, v.text);
    }
    for (std::size_t p = 0; p < n; ++p) {
      const std::size_t i = sweep.value_index(p, 0);
      s.x[p] = numeric ? *first.values[i].number : static_cast<double>(i);
    }
    if (sweep.axes.size() == 2) {
      const SweepKey& second = sweep.axes[1].first();
      for (const SweepValue& v : second.values) s.series_names.push_back(second.key + "=" + v.text);
      for (std::size_t p = 0; p < n; ++p) s.series_of[p] = sweep.value_index(p, 1);
    } else {
      s.series_names.push_back("");
    }
    return s;
  }
  std::string keys;
  for (const SweepAxis& axis : sweep.axes)
    for (const SweepKey& k : axis.keys) keys += (keys.empty() ? "" : ", ") + k.key;
  s.x_label = "point (" + keys + ")";
  for (std::size_t p = 0; p < n; ++p) {
    s.categories.push_back(point_label(sweep, p));
    s.x[p] = static_cast<double>(p);
  }
  s.series_names.push_back("");
  return s;
}

// One chart of a result field against the shape's x: one mark per point.
std::string metric_chart(const html::Page& page, const Sweep& sweep, const ChartShape& shape, const char* id,
                         const char* field, const std::string& y_label, std::string (*format)(double)) {
  const Json& points = page.block()["points"];
  svg::LineChart chart;
  chart.id = id;
  chart.x_label = shape.x_label;
  chart.y_label = y_label;
  chart.categories = shape.categories;
  chart.x_ticks = shape.x_ticks;
  for (const std::string& name : shape.series_names) chart.series.push_back({name, {}});
  for (std::size_t p = 0; p < points.size(); ++p) {
    const Json& point = points[p];
    svg::ChartMark m;
    m.x = shape.x[p];
    m.y = result_number(point, field);
    const std::string at = point_path(p);
    m.attributes = fmt::format(" data-point=\"{}\"", p) + page.data(m.y ? at + ".result." + field : at + ".status");
    m.title = fmt::format("point {}: {}: ", p, point_settings(sweep, p));
    if (m.y)
      m.title += format(*m.y);
    else
      m.title += point["status"].get<std::string>() +
                 (point["reason"].get<std::string>().empty() ? "" : ": " + point["reason"].get<std::string>());
    chart.series[shape.series_of[p]].marks.push_back(std::move(m));
  }
  return svg::line_chart(chart);
}

std::string gib(double v) { return fmt::format("{:.2f}", v); }
std::string per_second(double v) { return rf::group_digits(v) + " tokens/s/GPU"; }

void write_header(html::Page& page, const Sweep& sweep, const std::string& scenario_path) {
  const Json& j = page.block();
  html::Buffer& b = page.b;
  put(b, "<header>\n<h1>trainsim sweep: ");
  put_text(b, j["scenario"].get<std::string>());
  put(b, "</h1>\n<p class=\"meta\">scenario <code>");
  put_text(b, scenario_path);
  putf(b, "</code> &middot; {} key{} on {} ax{}</p>\n", sweep.key_count(), sweep.key_count() == 1 ? "" : "s",
       sweep.axes.size(), sweep.axes.size() == 1 ? "is" : "es");
  page.base_overrides_line("at every point");
  put(b, "</header>\n<section id=\"swept\">\n<h2>What was swept</h2>\n<div class=\"cards\">\n");
  const auto card = [&](const char* label, const char* key, const char* cls) {
    putf(b, "<div class=\"card\"><div class=\"label\">{}</div>", label);
    page.num("div", fmt::format("counts.{}", key), fmt::format("{}", j["counts"][key].get<std::size_t>()),
             html::kResultBlock, cls);
    put(b, "</div>\n");
  };
  card("points", "points", "value num");
  card("simulated", "ok", "value num ok");
  for (const auto& [label, key] :
       {std::pair{"invalid", "invalid"}, std::pair{"out of memory", "out_of_memory"}, std::pair{"failed", "failed"}})
    card(label, key, j["counts"][key].get<std::size_t>() > 0 ? "value num bad" : "value num");
  put(b,
      "</div>\n<table id=\"axes-table\">\n<thead><tr><th>axis</th><th class=\"l\">key</th><th>count</th>"
      "<th class=\"l\">values</th></tr></thead>\n<tbody>\n");
  for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
    const SweepAxis& axis = sweep.axes[a];
    for (std::size_t k = 0; k < axis.keys.size(); ++k) {
      putf(b, "<tr><td>{}{}</td><td class=\"l\"><code>", a + 1, axis.zipped ? " (zipped)" : "");
      put_text(b, axis.keys[k].key);
      putf(b, "</code></td><td>{}</td><td class=\"l wrap\">", axis.size());
      // A long list is cut in the middle (the JSON and the points table have every value).
      const std::size_t n = axis.keys[k].values.size();
      for (std::size_t i = 0; i < n; ++i) {
        if (n > kMaxListedValues && i == kListedHead) {
          putf(b, ", ... ({} more) ...", n - kListedHead - kListedTail);
          i = n - kListedTail;
        }
        if (i) put(b, ", ");
        page.num("span", fmt::format("axes[{}].keys[{}].values[{}]", a, k, i), axis.keys[k].values[i].text);
      }
      put(b, "</td></tr>\n");
    }
  }
  put(b, "</tbody>\n</table>\n<p class=\"note\">");
  if (sweep.axes.size() > 1) put(b, "Points are every combination of the axes, the first varying slowest; ");
  put(b, "each is simulated as <code>trainsim run</code> would with the --set list and its values.</p>\n</section>\n");
}

void write_charts(html::Page& page, const Sweep& sweep) {
  html::Buffer& b = page.b;
  const ChartShape shape = chart_shape(sweep);
  put(b, "<section id=\"charts\">\n<h2>Iteration time</h2>\n");
  put(b, metric_chart(page, sweep, shape, "sweep-iteration-chart", "iteration_time_s", "iteration time, s",
                      rf::human_duration));
  put(b, "<h2>Throughput</h2>\n");
  put(b, metric_chart(page, sweep, shape, "sweep-throughput-chart", "tokens_per_s_per_gpu", "tokens/s per GPU",
                      per_second));
  put(b,
      "<p class=\"note\">One mark per point (hover for its values); a red cross on the x axis is a point that did "
      "not simulate, with its status in the table below.</p>\n</section>\n");
}

void write_points(html::Page& page, const Sweep& sweep) {
  const Json& points = page.block()["points"];
  html::Buffer& b = page.b;
  put(b,
      "<section id=\"points\">\n<h2>Every point</h2>\n<div class=\"scroll\">\n<table id=\"points-table\" "
      "class=\"sortable\">\n<thead><tr>"
      "<th>#</th>");
  for (const SweepAxis& axis : sweep.axes)
    for (const SweepKey& k : axis.keys) {
      put(b, "<th class=\"l\">");
      put_text(b, k.key);
      put(b, "</th>");
    }
  put(b,
      "<th>iteration</th><th>tokens/s/GPU</th><th>MFU</th><th>peak GiB</th><th class=\"l\">status</th>"
      "<th class=\"l\">reason</th></tr></thead>\n<tbody>\n");
  for (std::size_t p = 0; p < points.size(); ++p) {
    const Json& point = points[p];
    const std::string at = point_path(p);
    const bool ok = point["status"] == "ok";
    put(b, ok ? "<tr>" : "<tr class=\"failed\">");
    page.num("td", at + ".point", fmt::format("{}", p));
    for (std::size_t a = 0; a < sweep.axes.size(); ++a)
      for (std::size_t k = 0; k < sweep.axes[a].keys.size(); ++k)
        page.num("td", at + ".values" + html::path_key(sweep.axes[a].keys[k].key), sweep.value(p, a, k).text,
                 html::kResultBlock, "num l");
    const auto cell = [&](const char* field, const char* sub, std::string (*format)(double)) {
      const std::optional<double> v = result_number(point, field, sub);
      if (!v) {
        put(b, "<td>-</td>");
        return;
      }
      page.num("td", at + ".result." + field + (sub ? std::string(".") + sub : ""), format(*v));
    };
    cell("iteration_time_s", nullptr, rf::human_duration);
    cell("tokens_per_s_per_gpu", nullptr, [](double v) { return rf::group_digits(v); });
    cell("mfu", nullptr, rf::percent);
    cell("memory", "peak", gib);
    page.num("td", at + ".status", point["status"].get<std::string>(), html::kResultBlock, ok ? "l ok" : "l bad");
    put(b, "<td class=\"l wrap\">");
    put_text(b, point["reason"].get<std::string>());
    put(b, "</td></tr>\n");
  }
  put(b, "</tbody>\n</table>\n</div>\n</section>\n");
}

}  // namespace

std::string render_sweep_html(const Sweep& sweep, const Json& json, const std::string& scenario_path) {
  html::Page page(json, -1);  // the block on one line: a thousand results are 5 MB indented, 3 MB not
  page.begin("trainsim sweep: " + json["scenario"].get<std::string>());
  write_header(page, sweep, scenario_path);
  write_charts(page, sweep);
  write_points(page, sweep);
  return page.finish("The sweep as JSON (the same as <code>trainsim sweep --json</code>)");
}

}  // namespace trainsim::explore
