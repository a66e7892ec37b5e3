// The shell every HTML page shares (report/html_page.hpp): paths into the embedded JSON, the blocks no string can
// close, the numbers' attributes, and the SVG charts of the sweep and tune pages (report/svg_chart.hpp).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "html_page_checks.hpp"
#include "report/html_page.hpp"
#include "report/svg_chart.hpp"

namespace trainsim {
namespace {

using html::Json;
using html_checks::count;
using ::testing::DoubleNear;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pointwise;

const Json kDoc = Json::parse(R"({"a": {"b": [10, {"c": 2.5}]}, "values": {"cluster.nic_gbps": 400, "x[1]": "y",
                                   "q\"k": true}, "s": "<\/script>&"})");

TEST(HtmlPage, PathsReachKeysIndicesAndQuotedKeys) {
  ASSERT_NE(html::resolve_path(kDoc, "a.b[0]"), nullptr);
  EXPECT_EQ(*html::resolve_path(kDoc, "a.b[0]"), 10);
  EXPECT_EQ(*html::resolve_path(kDoc, "a.b[1].c"), 2.5);
  EXPECT_EQ(*html::resolve_path(kDoc, "values[\"cluster.nic_gbps\"]"), 400);  // a key with a dot
  EXPECT_EQ(*html::resolve_path(kDoc, "values[\"x[1]\"]"), "y");
  EXPECT_EQ(*html::resolve_path(kDoc, "values[\"q\\\"k\"]"), true);  // a quote, JSON-escaped
  // Nothing there, or not a path: no value rather than a wrong one.
  for (const char* bad : {"a.c", "a.b[2]", "a.b[x]", "a.b[]", "values.cluster.nic_gbps", "values[\"nope\"]",
                          "values[\"cluster.nic_gbps\"", "a[0]", "s.t"})
    EXPECT_EQ(html::resolve_path(kDoc, bad), nullptr) << bad;
}

TEST(HtmlPage, PathKeyQuotesOnlyKeysTheReaderWouldSplit) {
  EXPECT_EQ(html::path_key("iteration_time_s"), ".iteration_time_s");
  EXPECT_EQ(html::path_key("iteration_time_s", true), "iteration_time_s");
  EXPECT_EQ(html::path_key("cluster.nic_gbps"), "[\"cluster.nic_gbps\"]");
  EXPECT_EQ(html::path_key("q\"k"), "[\"q\\\"k\"]");
  // What path_key writes, resolve_path and the tests' own reader both follow.
  for (const char* key : {"cluster.nic_gbps", "x[1]", "q\"k"}) {
    const std::string path = "values" + html::path_key(key);
    ASSERT_NE(html::resolve_path(kDoc, path), nullptr) << path;
    EXPECT_EQ(kDoc.at(html_checks::pointer_of(path)), *html::resolve_path(kDoc, path)) << path;
  }
}

TEST(HtmlPage, ScriptJsonCannotCloseItsBlockAndParsesBack) {
  const std::string text = html::script_json(kDoc);
  EXPECT_THAT(text, Not(HasSubstr("<")));
  EXPECT_THAT(text, Not(HasSubstr(">")));
  EXPECT_THAT(text, Not(HasSubstr("&")));
  EXPECT_THAT(text, HasSubstr("\\u003c/script\\u003e\\u0026"));
  EXPECT_EQ(Json::parse(text), kDoc);
  EXPECT_THAT(text, HasSubstr("\n  \"a\": {"));  // indented by 2, as --json prints it
  const std::string one_line = html::script_json(kDoc, -1);
  EXPECT_THAT(one_line, Not(HasSubstr("\n")));
  EXPECT_THAT(one_line, Not(HasSubstr("<")));
  EXPECT_EQ(Json::parse(one_line), kDoc);
}

TEST(HtmlPage, NumbersCarryPathAndValueAndAMissingPathIsAnInternalError) {
  html::Page page(kDoc);
  page.add_block("extra", Json{{"n", 1}});
  EXPECT_EQ(page.data("a.b[1].c"), R"( data-json-path="a.b[1].c" data-value="2.5")");
  EXPECT_EQ(page.data("values[\"cluster.nic_gbps\"]"),
            R"( data-json-path="values[&quot;cluster.nic_gbps&quot;]" data-value="400")");
  EXPECT_EQ(page.data("s"), R"( data-json-path="s" data-value="&quot;&lt;/script&gt;&amp;&quot;")");
  EXPECT_EQ(page.data("n", "extra"), R"( data-json-path="n" data-json-block="extra" data-value="1")");
  EXPECT_THROW(page.data("a.nothing"), InternalError);
  EXPECT_THROW(page.data("a.b"), InternalError);  // an array is not a number to show
  EXPECT_THROW(page.data("n", "no-such-block"), InternalError);
}

TEST(HtmlPage, APageIsSelfContainedWithEveryBlockAndTheChecker) {
  html::Page page(kDoc);
  page.add_block("extra", Json{{"n", 1}});
  page.begin("t<i>tle");
  page.num("span", "a.b[0]", "10 <ms>");
  const std::string html = page.finish("The <code>JSON</code>");
  EXPECT_THAT(html, ::testing::StartsWith("<!DOCTYPE html>"));
  EXPECT_THAT(html, HasSubstr("<title>t&lt;i&gt;tle</title>"));
  EXPECT_THAT(html, HasSubstr(R"(<span class="num" data-json-path="a.b[0]" data-value="10">10 &lt;ms&gt;</span>)"));
  EXPECT_THAT(html, HasSubstr("<summary>The <code>JSON</code></summary>"));
  EXPECT_EQ(Json::parse(html_checks::json_block(html, "trainsim-result")), kDoc);
  EXPECT_EQ(Json::parse(html_checks::json_block(html, "extra")), (Json{{"n", 1}}));
  EXPECT_EQ(count(html, "<script"), 3);
  for (const char* external : {"http://", "https://", "<link", "@import", "url(", "src="})
    EXPECT_THAT(html, Not(HasSubstr(external))) << external;
  EXPECT_THAT(html, ::testing::EndsWith("</html>\n"));
}

TEST(SvgChart, TicksAreOneTwoOrFiveTimesAPowerOfTenAndCoverTheRange) {
  const auto near = [](std::vector<double> want) { return Pointwise(DoubleNear(1e-9), want); };
  EXPECT_THAT(svg::nice_ticks(0, 1, 5), near({0, 0.2, 0.4, 0.6, 0.8, 1}));
  EXPECT_THAT(svg::nice_ticks(6.66, 7.72, 6), near({6.6, 6.8, 7, 7.2, 7.4, 7.6, 7.8}));  // step 0.2 (1.06 / 6 = 0.18)
  EXPECT_THAT(svg::nice_ticks(100, 400, 8), near({100, 150, 200, 250, 300, 350, 400}));  // step 50 (300 / 8 = 37.5)
  const auto one = svg::nice_ticks(5, 5, 4);                                             // one value: a span around it
  EXPECT_LE(one.front(), 4.5);
  EXPECT_GE(one.back(), 5.5);
  EXPECT_EQ(svg::tick_label(600000, 100000), "600,000");
  EXPECT_EQ(svg::tick_label(0.25, 0.05), "0.25");
  EXPECT_EQ(svg::tick_label(7.0000000001, 0.2), "7.0");
  EXPECT_EQ(svg::tick_label(0, 0.2), "0.0");
}

svg::LineChart two_series_chart() {
  svg::LineChart c;
  c.id = "chart";
  c.x_label = "cluster.nic_gbps";
  c.y_label = "iteration time, s";
  c.series = {{"tensor=1",
               {{100, 2.0, " data-point=\"0\"", "p0"},
                {200, std::nullopt, " data-point=\"1\"", "p1 <oom>"},
                {400, 1.5, " data-point=\"2\"", "p2"}}},
              {"tensor=<2>", {{100, 1.8, " data-point=\"3\"", "p3"}, {200, 1.6, " data-point=\"4\"", "p4"}}}};
  return c;
}

TEST(SvgChart, LineChartHasOneMarkPerPointAndAFailedPointIsACrossOnTheAxis) {
  const std::string html = svg::line_chart(two_series_chart());
  const std::string svg = html_checks::element(html, "svg", "chart");
  EXPECT_EQ(count(svg, "class=\"mark"), 5);
  EXPECT_EQ(count(svg, "class=\"mark failed\""), 1);
  EXPECT_THAT(svg, HasSubstr("<path class=\"mark failed\""));
  for (int p = 0; p < 5; ++p) EXPECT_EQ(count(svg, "data-point=\"" + std::to_string(p) + "\""), 1) << p;
  // A line per series through its points with a value: the failed one is left out of it.
  EXPECT_EQ(count(svg, "<polyline"), 2);
  EXPECT_THAT(svg, HasSubstr("<title>p1 &lt;oom&gt;</title>"));
  // Two series: a legend, names escaped.
  EXPECT_THAT(html, HasSubstr("<p class=\"legend\" id=\"chart-legend\">"));
  EXPECT_THAT(html, HasSubstr("tensor=&lt;2&gt;"));
  EXPECT_THAT(html, Not(HasSubstr("<2>")));
}

TEST(SvgChart, HigherValuesAreHigherOnTheChartAndXFollowsTheValues) {
  svg::LineChart c;
  c.id = "c";
  c.series = {{"", {{100, 1.0, "", ""}, {400, 2.0, "", ""}}}};
  const std::string svg = svg::line_chart(c);
  EXPECT_THAT(svg, Not(HasSubstr("legend")));  // one series: no legend
  const std::regex circle(R"re(<circle class="mark" cx="([0-9.]+)" cy="([0-9.]+)")re");
  std::vector<std::pair<double, double>> at;
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it)
    at.emplace_back(std::stod((*it)[1]), std::stod((*it)[2]));
  ASSERT_EQ(at.size(), 2u);
  EXPECT_LT(at[0].first, at[1].first);
  EXPECT_GT(at[0].second, at[1].second);  // SVG's y grows downwards
}

TEST(SvgChart, ManyCategoriesAreLabelledEveryKthAndLongOnesTurned) {
  svg::LineChart c;
  c.id = "c";
  for (int i = 0; i < 100; ++i) {
    c.categories.push_back("(" + std::to_string(i) + ", 16, 16)");
    c.series.resize(1);
    c.series[0].marks.push_back({static_cast<double>(i), 1.0 + i, "", ""});
  }
  const std::string svg = svg::line_chart(c);
  EXPECT_EQ(count(svg, "class=\"mark\""), 100);
  EXPECT_EQ(count(svg, "transform=\"rotate(-35"), 20);  // every 5th of 100, at most 24 labels
  EXPECT_THAT(svg, HasSubstr(">(95, 16, 16)</text>"));
  EXPECT_THAT(svg, Not(HasSubstr(">(96, 16, 16)</text>")));
}

TEST(SvgChart, BarChartHasOneBarPerItemAndHighlightsOne) {
  svg::BarChart c;
  c.id = "bars";
  c.value_label = "tokens/s";
  c.bars = {{"#1 <best>", 600, "600", " data-rank=\"1\"", "first", true},
            {"#2", 300, "300", " data-rank=\"2\"", "", false}};
  const std::string svg = svg::bar_chart(c);
  EXPECT_EQ(count(svg, "<rect class=\"bar"), 2);
  EXPECT_EQ(count(svg, "class=\"bar best\""), 1);
  EXPECT_THAT(svg, HasSubstr("#1 &lt;best&gt;"));
  // Bars from zero in proportion: the second is half the first.
  const std::regex width(R"re(<rect class="bar[^"]*" x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)")re");
  std::vector<double> w;
  for (std::sregex_iterator it(svg.begin(), svg.end(), width), end; it != end; ++it) w.push_back(std::stod((*it)[1]));
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[1] / w[0], 0.5, 1e-3);
}

}  // namespace
}  // namespace trainsim
