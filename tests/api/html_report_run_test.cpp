// The HTML report of a real run (examples/tiny-8-h100.yaml; analytical, and flow-level on two nodes with a trace): it
// fetches nothing, embeds exactly to_json(result), escapes the scenario's name and draws one breakdown bar per nonzero
// part. (tests/report/html_report_test.cpp checks the renderer on a hand-built result; the report layer's tests do not
// link the simulator.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "report/html_report.hpp"
#include "report/reports.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

Scenario tiny_with_html_in_name(const std::vector<std::string>& overrides = {}) {
  Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/tiny-8-h100.yaml", overrides);
  s.name = "tiny <script>alert('x')</script> & \"co\"";
  return s;
}

std::string between(const std::string& html, const std::string& open, const std::string& close) {
  const auto start = html.find(open);
  if (start == std::string::npos) return "";
  const auto from = start + open.size();
  return html.substr(from, html.find(close, from) - from);
}

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}

void expect_self_contained_and_faithful(const RunOutput& out, const HtmlReportExtras& extras) {
  const RunResult& r = out.result;
  const std::string html = render_html_report(r, extras);
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"//")));
  // The embedded result is to_json's, value for value and byte for byte once dumped.
  const std::string block = between(html, "<script type=\"application/json\" id=\"trainsim-result\">", "</script>");
  ASSERT_FALSE(block.empty());
  EXPECT_EQ(nlohmann::ordered_json::parse(block), to_json(r));
  EXPECT_EQ(nlohmann::ordered_json::parse(block).dump(2), to_json(r).dump(2));
  // The scenario's name, escaped wherever it appears.
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(
      html,
      HasSubstr("<h1>trainsim run: tiny &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;co&quot;</h1>"));
  // One bar per nonzero part of the breakdown.
  const Breakdown& b = r.breakdown;
  int nonzero = 0;
  for (double v : {b.compute, b.exposed_tp, b.exposed_cp, b.exposed_dp, b.exposed_pp, b.exposed_ep, b.exposed_other,
                   b.bubble, b.optimizer, b.other})
    nonzero += v > 0 ? 1 : 0;
  EXPECT_GE(nonzero, 2);
  const std::string svg = between(html, "<svg id=\"breakdown-chart\"", "</svg>");
  EXPECT_EQ(count(svg, "<rect class=\"seg\""), nonzero);
  EXPECT_THAT(html, HasSubstr(fmt::format("data-json-path=\"iteration_time_s\" data-value=\"{}\">{:.4f} s<",
                                          nlohmann::json(r.iteration_time_s).dump(), r.iteration_time_s)));
}

TEST(HtmlReportRun, TinyAnalyticalRun) {
  const RunOutput out = run_scenario(tiny_with_html_in_name());
  ASSERT_TRUE(out.result.memory.has_value());
  const std::string html = render_html_report(out.result);
  EXPECT_THAT(html, HasSubstr("The result holds the worst pipeline stage only"));
  EXPECT_THAT(html, HasSubstr("No trace was collected"));
  EXPECT_THAT(html, Not(HasSubstr("id=\"links-table\"")));
  expect_self_contained_and_faithful(out, {});
}

TEST(HtmlReportRun, TinyFlowRunWithATraceShowsLinksAndTheTimeline) {
  RunOptions o;
  o.want_trace = true;
  const RunOutput out = run_scenario(
      tiny_with_html_in_name({"simulation.network_model=flow", "cluster.gpus_per_node=4", "cluster.nics_per_node=4"}),
      o);
  ASSERT_FALSE(out.links.empty());
  HtmlReportExtras x;
  x.links = out.links;
  x.trace = out.trace;
  x.stream_names = out.stream_names;
  x.traced = true;
  const std::string html = render_html_report(out.result, x);
  EXPECT_THAT(html, HasSubstr("<table id=\"links-table\""));
  EXPECT_GT(count(between(html, "<svg id=\"timeline-chart\"", "</svg>"), "<rect class=\"span\""), 10);
  expect_self_contained_and_faithful(out, x);
}

}  // namespace
}  // namespace trainsim
