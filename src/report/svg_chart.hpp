#pragma once
// Inline SVG charts for the HTML pages of sweeps and tuning: a line chart (a line per series, one mark per point,
// points without a value drawn as a cross on the x axis so that they are seen, not dropped) and a horizontal bar
// chart (one bar per item, one of them highlighted). Each mark or bar takes attributes from the caller (its JSON
// path and value, see html_page.hpp) and a tooltip. Deterministic: fixed precision, no locale.
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainsim::svg {

struct ChartMark {
  double x = 0;             // the x value, or the index of its category
  std::optional<double> y;  // none: the point has no value (it failed); drawn as a cross on the x axis
  std::string attributes;   // inserted into the mark's element as they are (` data-json-path="..."`): escaped
  std::string title;        // the tooltip, plain text
};

struct ChartSeries {
  std::string name;  // the legend's entry; "" for a lone series
  std::vector<ChartMark> marks;
};

struct LineChart {
  std::string id;                       // the <svg>'s id
  std::string x_label, y_label;         // axis titles, plain text
  std::vector<std::string> categories;  // not empty: x is categorical and a mark's x indexes this
  // A numeric x's ticks and their labels (a sweep's few values: 100, 200, 400); empty: 1-2-5 ticks over the range.
  std::vector<std::pair<double, std::string>> x_ticks;
  std::vector<ChartSeries> series;
};

// The <svg> (class "mark" on every point's element, "mark failed" on those without a value), followed by a
// legend <p class="legend" id="ID-legend"> when there is more than one series.
std::string line_chart(const LineChart& chart);

struct Bar {
  std::string label;       // left of the bar, plain text
  double value = 0;        // bars start at zero
  std::string value_text;  // at the bar's end
  std::string attributes;  // as ChartMark::attributes
  std::string title;       // the tooltip
  bool highlight = false;  // drawn in the highlight colour, class "bar best"
};

struct BarChart {
  std::string id;
  std::string value_label;  // the axis title
  std::vector<Bar> bars;    // top to bottom
};

// The <svg>: one <rect class="bar"> per bar.
std::string bar_chart(const BarChart& chart);

// Tick values 1, 2 or 5 times a power of ten apart covering [lo, hi] in about `count` steps (lo == hi: around it).
std::vector<double> nice_ticks(double lo, double hi, int count);

// A tick's label with as many decimals as the step between ticks needs; thousands grouped ("600,000", "0.25").
std::string tick_label(double value, double step);

// The colour of series i (ten, then again).
const char* series_color(std::size_t i);

}  // namespace trainsim::svg
