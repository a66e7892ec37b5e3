#include "report/svg_chart.hpp"

#include <algorithm>
#include <cmath>
#include <iterator>

#include <fmt/format.h>

#include "report/format_utils.hpp"
#include "report/html_page.hpp"

namespace trainsim::svg {

namespace {

using html::Buffer;
using html::put;
using html::put_text;
using html::putf;

// Tableau 10: distinct on screen and in print.
constexpr const char* kColors[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                   "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr const char* kHighlight = "#1e7b34";
constexpr const char* kBar = "#7f9cc4";

constexpr double kWidth = 1000;
constexpr std::size_t kMaxCategoryLabels = 24;  // more categories: every k-th one labelled

struct Range {
  double lo, hi;
  std::vector<double> ticks;
  double step() const { return ticks.size() > 1 ? ticks[1] - ticks[0] : 1; }
  double at(double v, double from, double to) const {
    return hi > lo ? from + (to - from) * (v - lo) / (hi - lo) : from;
  }
};

// The ticks' range, widened to take in every value.
Range range_of(double lo, double hi, int count) {
  Range r{lo, hi, nice_ticks(lo, hi, count)};
  r.lo = std::min(lo, r.ticks.front());
  r.hi = std::max(hi, r.ticks.back());
  return r;
}

void put_title(Buffer& b, const std::string& title) {
  if (title.empty()) return;
  put(b, "<title>");
  put_text(b, title);
  put(b, "</title>");
}

}  // namespace

const char* series_color(std::size_t i) { return kColors[i % std::size(kColors)]; }

std::vector<double> nice_ticks(double lo, double hi, int count) {
  if (!std::isfinite(lo) || !std::isfinite(hi)) return {0, 1};
  if (hi < lo) std::swap(lo, hi);
  if (hi == lo) {  // one value: a span around it
    const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
    lo -= pad;
    hi += pad;
  }
  const double raw = (hi - lo) / std::max(1, count);
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  const double fraction = raw / power;
  const double step = (fraction <= 1 ? 1 : fraction <= 2 ? 2 : fraction <= 5 ? 5 : 10) * power;
  std::vector<double> ticks;
  const double first = std::floor(lo / step), last = std::ceil(hi / step);
  for (double k = first; k <= last + 0.5; k += 1) ticks.push_back(k * step == 0 ? 0 : k * step);  // no "-0"
  return ticks;
}

std::string tick_label(double value, double step) {
  if (!std::isfinite(value)) return fmt::format("{}", value);
  const int decimals = step > 0 ? std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9))) : 0;
  if (decimals == 0) return report_format::group_digits(value);
  return fmt::format("{:.{}f}", value, decimals);
}

std::string line_chart(const LineChart& c) {
  const bool categorical = !c.categories.empty();
  // Labels of many or long categories are turned to fit below the axis.
  std::size_t longest = 0;
  for (const std::string& s : c.categories) longest = std::max(longest, s.size());
  const bool turned = categorical && longest > 6;
  constexpr double kLeft = 84, kRight = 20, kTop = 16;
  const double bottom = turned ? std::min(150.0, 40 + 5.6 * static_cast<double>(longest)) : 48;
  const double height = 300 + kTop + bottom;
  // A turned label runs down and to the left of its tick (about 5.1 units a character at -35 degrees): the first
  // one must not leave the chart.
  const double left =
      turned ? std::clamp(5.1 * static_cast<double>(c.categories.front().size()) + 12, kLeft, 320.0) : kLeft;
  const double x0 = left, x1 = kWidth - kRight, y0 = kTop + 300, y1 = kTop;

  double ylo = INFINITY, yhi = -INFINITY, xlo = INFINITY, xhi = -INFINITY;
  std::size_t marks = 0;
  for (const ChartSeries& s : c.series)
    for (const ChartMark& m : s.marks) {
      ++marks;
      xlo = std::min(xlo, m.x);
      xhi = std::max(xhi, m.x);
      if (m.y && std::isfinite(*m.y)) {
        ylo = std::min(ylo, *m.y);
        yhi = std::max(yhi, *m.y);
      }
    }
  if (!(ylo <= yhi)) {  // nothing has a value: an empty axis, crosses on it
    ylo = 0;
    yhi = 1;
  }
  const double ypad = (yhi - ylo) * 0.05;
  const Range y = range_of(ylo - ypad, yhi + ypad, 6);
  Range x{0, 1, {}};
  if (categorical) {
    x.lo = -0.5;
    x.hi = static_cast<double>(c.categories.size()) - 0.5;
  } else if (marks > 0) {
    x = range_of(xlo, xhi, 8);
    if (!c.x_ticks.empty()) {  // the given ticks, and a margin so that no mark sits on the y axis
      const double pad = xhi > xlo ? (xhi - xlo) * 0.04 : 1;
      x.lo = xlo - pad;
      x.hi = xhi + pad;
    }
  }
  auto px = [&](double v) { return x.at(v, x0, x1); };
  auto py = [&](double v) { return y.at(v, y0, y1); };

  Buffer b;
  putf(b, "<svg id=\"{}\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" aria-label=\"", html_escape(c.id),
       kWidth, height);
  put_text(b, c.y_label + " against " + c.x_label);
  put(b, "\">\n");
  // Grid and y axis.
  for (double t : y.ticks) {
    if (t < y.lo - 1e-12 || t > y.hi + 1e-12) continue;
    putf(b,
         "<line class=\"grid\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.2f}\" y2=\"{2:.2f}\"></line>"
         "<text x=\"{3:.1f}\" y=\"{4:.2f}\" text-anchor=\"end\">{5}</text>\n",
         x0, x1, py(t), x0 - 6, py(t) + 4, html_escape(tick_label(t, y.step())));
  }
  putf(b,
       "<line class=\"axis\" x1=\"{0:.1f}\" x2=\"{1:.1f}\" y1=\"{2:.1f}\" y2=\"{2:.1f}\"></line>"
       "<line class=\"axis\" x1=\"{0:.1f}\" x2=\"{0:.1f}\" y1=\"{3:.1f}\" y2=\"{2:.1f}\"></line>\n",
       x0, x1, y0, y1);
  // x ticks: the categories (every k-th when there are many), or nice values.
  if (categorical) {
    const std::size_t n = c.categories.size();
    const std::size_t every = (n + kMaxCategoryLabels - 1) / kMaxCategoryLabels;
    for (std::size_t i = 0; i < n; i += every) {
      const double cx = px(static_cast<double>(i));
      putf(b, "<line class=\"axis\" x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"></line>", cx, y0,
           y0 + 4);
      if (turned)
        putf(b,
             "<text x=\"{0:.2f}\" y=\"{1:.1f}\" text-anchor=\"end\" transform=\"rotate(-35 {0:.2f} "
             "{1:.1f})\">{2}</text>\n",
             cx, y0 + 14, html_escape(c.categories[i]));
      else
        putf(b, "<text x=\"{:.2f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>\n", cx, y0 + 16,
             html_escape(c.categories[i]));
    }
  } else if (!c.x_ticks.empty()) {
    for (const auto& [t, label] : c.x_ticks)
      putf(b,
           "<line class=\"axis\" x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"></line>"
           "<text x=\"{0:.2f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
           px(t), y0, y0 + 4, y0 + 16, html_escape(label));
  } else {
    for (double t : x.ticks) {
      if (t < x.lo - 1e-12 || t > x.hi + 1e-12) continue;
      putf(b,
           "<line class=\"axis\" x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"></line>"
           "<text x=\"{0:.2f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
           px(t), y0, y0 + 4, y0 + 16, html_escape(tick_label(t, x.step())));
    }
  }
  putf(b, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">", (x0 + x1) / 2, height - 6);
  put_text(b, c.x_label);
  putf(b, "</text>\n<text x=\"14\" y=\"{0:.1f}\" text-anchor=\"middle\" transform=\"rotate(-90 14 {0:.1f})\">",
       (y0 + y1) / 2);
  put_text(b, c.y_label);
  put(b, "</text>\n");
  // A line through each series' points that have a value, then every point's mark on top.
  const double radius = marks > 200 ? 2.2 : 3.5;
  for (std::size_t s = 0; s < c.series.size(); ++s) {
    std::string points;
    for (const ChartMark& m : c.series[s].marks)
      if (m.y && std::isfinite(*m.y))
        points += fmt::format("{}{:.2f},{:.2f}", points.empty() ? "" : " ", px(m.x), py(*m.y));
    if (points.find(' ') != std::string::npos)
      putf(b, "<polyline class=\"line\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.8\" points=\"{}\"></polyline>\n",
           series_color(s), points);
  }
  for (std::size_t s = 0; s < c.series.size(); ++s)
    for (const ChartMark& m : c.series[s].marks) {
      const double cx = px(m.x);
      if (m.y && std::isfinite(*m.y)) {
        putf(b, "<circle class=\"mark\" cx=\"{:.2f}\" cy=\"{:.2f}\" r=\"{}\" fill=\"{}\"{}>", cx, py(*m.y), radius,
             series_color(s), m.attributes);
        put_title(b, m.title);
        put(b, "</circle>\n");
      } else {
        putf(b,
             "<path class=\"mark failed\" d=\"M{0:.2f} {1:.2f}L{2:.2f} {3:.2f}M{0:.2f} {3:.2f}L{2:.2f} {1:.2f}\"{4}>",
             cx - 4, y0 - 4, cx + 4, y0 + 4, m.attributes);
        put_title(b, m.title);
        put(b, "</path>\n");
      }
    }
  put(b, "</svg>\n");
  if (c.series.size() > 1) {
    putf(b, "<p class=\"legend\" id=\"{}-legend\">", html_escape(c.id));
    for (std::size_t s = 0; s < c.series.size(); ++s) {
      putf(b, "<span class=\"item\"><span class=\"swatch\" style=\"background:{}\"></span>", series_color(s));
      put_text(b, c.series[s].name);
      put(b, "</span>");
    }
    put(b, "</p>\n");
  }
  return fmt::to_string(b);
}

std::string bar_chart(const BarChart& c) {
  constexpr double kLabel = 330, kRow = 24, kTop = 30, kValue = 110;
  constexpr std::size_t kMaxLabel = 48;
  const double height = kTop + kRow * static_cast<double>(c.bars.size()) + 8;
  double most = 0;
  for (const Bar& bar : c.bars)
    if (std::isfinite(bar.value)) most = std::max(most, bar.value);
  const Range x = range_of(0, most > 0 ? most : 1, 6);
  const double x0 = kLabel, x1 = kWidth - kValue;
  Buffer b;
  putf(b, "<svg id=\"{}\" viewBox=\"0 0 {:.0f} {:.0f}\" width=\"100%\" role=\"img\" aria-label=\"", html_escape(c.id),
       kWidth, height);
  put_text(b, c.value_label);
  put(b, "\">\n");
  for (double t : x.ticks) {
    const double tx = x.at(t, x0, x1);
    putf(b,
         "<line class=\"grid\" x1=\"{0:.2f}\" x2=\"{0:.2f}\" y1=\"{1:.1f}\" y2=\"{2:.1f}\"></line>"
         "<text x=\"{0:.2f}\" y=\"{3:.1f}\" text-anchor=\"middle\">{4}</text>\n",
         tx, kTop - 4, height - 4, kTop - 8, html_escape(tick_label(t, x.step())));
  }
  put(b, "<text x=\"4\" y=\"12\">");
  put_text(b, c.value_label);
  put(b, "</text>\n");
  for (std::size_t i = 0; i < c.bars.size(); ++i) {
    const Bar& bar = c.bars[i];
    const double y = kTop + kRow * static_cast<double>(i);
    const double w = std::isfinite(bar.value) && bar.value > 0 ? x.at(bar.value, x0, x1) - x0 : 0;
    putf(b, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\"{}>", x0 - 8, y + 16,
         bar.highlight ? " font-weight=\"bold\"" : "");
    // About 6.5 units a character: a longer label is cut rather than drawn over the chart's left edge.
    put_text(b, bar.label.size() > kMaxLabel ? bar.label.substr(0, kMaxLabel - 3) + "..." : bar.label);
    putf(b, "</text><rect class=\"bar{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.0f}\" fill=\"{}\"{}>",
         bar.highlight ? " best" : "", x0, y + 3, w, kRow - 6, bar.highlight ? kHighlight : kBar, bar.attributes);
    put_title(b, bar.title);
    putf(b, "</rect><text x=\"{:.2f}\" y=\"{:.1f}\"{}>", x0 + w + 6, y + 16,
         bar.highlight ? " font-weight=\"bold\"" : "");
    put_text(b, bar.value_text);
    put(b, "</text>\n");
  }
  put(b, "</svg>\n");
  return fmt::to_string(b);
}

}  // namespace trainsim::svg
