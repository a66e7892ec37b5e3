// render_html_report on the hand-built sample result (tests/api/html_report_run_test.cpp renders a real run): one
// self-contained page that fetches nothing, escapes every text it inserts, embeds the result as to_json writes it,
// and carries each number's JSON path and full-precision value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "html_page_checks.hpp"
#include "report/html_report.hpp"
#include "report/reports.hpp"
#include "sample_result.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using html_checks::count;
using html_checks::element;
using html_checks::json_block;

RunResult hostile_result() {
  RunResult r = test::sample_result();
  r.scenario = "a<b>&\"c'</script><script>alert(1)</script>";
  r.model_name = "<img src=x onerror=alert(2)>";
  r.comm[0].group = "<tp>";
  r.warnings.push_back({"training.<x>", "a & b < c"});
  return r;
}

TEST(HtmlReport, FetchesNothing) {
  const std::string html = render_html_report(test::sample_result());
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("src=\"//")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  EXPECT_THAT(html, ::testing::StartsWith("<!DOCTYPE html>"));
}

TEST(HtmlReport, EmbeddedJsonIsTheJsonResult) {
  const RunResult r = hostile_result();
  const std::string html = render_html_report(r);
  const std::string block = json_block(html, "trainsim-result");
  ASSERT_FALSE(block.empty());
  EXPECT_THAT(block, Not(HasSubstr("<")));  // the scenario's "</script>" cannot end the block
  EXPECT_EQ(nlohmann::ordered_json::parse(block), to_json(r));
  EXPECT_EQ(nlohmann::ordered_json::parse(block).dump(2), to_json(r).dump(2));
}

TEST(HtmlReport, TextFromTheScenarioIsEscaped) {
  const std::string html = render_html_report(hostile_result());
  EXPECT_THAT(html, Not(HasSubstr("<script>alert")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("<tp>")));
  EXPECT_THAT(html, Not(HasSubstr("<b>")));
  EXPECT_THAT(
      html, HasSubstr("trainsim run: a&lt;b&gt;&amp;&quot;c&#39;&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_THAT(html, HasSubstr("&lt;img src=x onerror=alert(2)&gt;"));
  EXPECT_THAT(html, HasSubstr("a &amp; b &lt; c"));
  // The page's own scripts: the two JSON blocks and the checker.
  EXPECT_EQ(count(html, "<script"), 3);
  EXPECT_EQ(count(html, "</script>"), 3);
}

TEST(HtmlReport, BreakdownHasOneBarPerNonzeroCategory) {
  RunResult r = test::sample_result();
  // Sample: compute, tp, dp, pp, comm other, bubble, optimizer, other are nonzero; cp and ep are 0.
  std::string svg = element(render_html_report(r), "svg", "breakdown-chart");
  EXPECT_EQ(count(svg, "class=\"seg\""), 8);
  for (const char* c : {"compute", "tp", "dp", "pp", "comm-other", "bubble", "optimizer", "other"})
    EXPECT_EQ(count(svg, std::string("data-category=\"") + c + "\""), 1) << c;
  EXPECT_EQ(count(svg, "data-category=\"cp\""), 0);
  r.breakdown.bubble = 0;
  r.breakdown.exposed_tp = 0;
  svg = element(render_html_report(r), "svg", "breakdown-chart");
  EXPECT_EQ(count(svg, "class=\"seg\""), 6);
  // The bars fill the chart's width in proportion: compute is 9 of 12.5 s.
  EXPECT_THAT(element(render_html_report(test::sample_result()), "svg", "breakdown-chart"),
              HasSubstr("data-category=\"compute\" data-json-path=\"breakdown.compute\" data-value=\"9.0\" x=\"0.000\" "
                        "y=\"4\" width=\"720.000\""));
}

// Every number element carries a path into the embedded JSON and the value found there, in full precision.
TEST(HtmlReport, NumbersCarryTheirJsonPathAndValue) {
  RunResult r = test::sample_result();
  r.iteration_time_s = 12.345678901234567;
  const std::string html = render_html_report(r);
  EXPECT_THAT(html, HasSubstr("data-json-path=\"iteration_time_s\" data-value=\"12.345678901234567\">12.3457 s<"));
  EXPECT_THAT(html, HasSubstr("data-json-path=\"mfu\" data-value=\"0.40445\">40.4 %<"));
  EXPECT_THAT(html, HasSubstr("data-json-path=\"memory.fits\" data-value=\"true\">fits<"));
  EXPECT_THAT(html, HasSubstr("data-json-path=\"comm[0].time_s\" data-value=\"2.25\">2.250000<"));
  const auto j = to_json(r);
  const std::regex attr(R"re(data-json-path="([^"]+)" data-value="([^"]+)")re");
  int n = 0;
  for (std::sregex_iterator it(html.begin(), html.end(), attr), end; it != end; ++it, ++n) {
    std::string path = (*it)[1];
    nlohmann::ordered_json::json_pointer pointer(
        "/" +
        std::regex_replace(std::regex_replace(path, std::regex(R"(\[(\d+)\])"), ".$1"), std::regex(R"(\.)"), "/"));
    ASSERT_TRUE(j.contains(pointer)) << path;
    EXPECT_EQ(j.at(pointer).dump(), (*it)[2].str()) << path;
  }
  EXPECT_GT(n, 40);
}

TEST(HtmlReport, MemoryShowsEveryStageGivenElseTheWorstAndSaysSo) {
  const RunResult r = test::sample_result();
  std::string html = render_html_report(r);
  std::string svg = element(html, "svg", "memory-chart");
  EXPECT_EQ(count(svg, "class=\"mem-seg\""), 5);
  EXPECT_THAT(svg, HasSubstr("id=\"memory-capacity\""));
  EXPECT_THAT(html, HasSubstr("The result holds the worst pipeline stage only (stage 0)"));
  const std::vector<MemoryStageRow> stages = {{0, 5.5, 5.5, 16.25, 40.0, 3.0}, {1, 5.5, 5.5, 16.25, 20.0, 0}};
  HtmlReportExtras x;
  x.memory_stages = stages;
  html = render_html_report(r, x);
  svg = element(html, "svg", "memory-chart");
  EXPECT_EQ(count(svg, "class=\"mem-seg\""), 9);  // stage 1 has no "other"
  EXPECT_THAT(html, HasSubstr("data-json-path=\"memory_stages[1].activations\" data-json-block=\"trainsim-extra\" "
                              "data-value=\"20.0\""));
  const auto extra = nlohmann::json::parse(json_block(html, "trainsim-extra"));
  EXPECT_DOUBLE_EQ(extra["memory_stages"][0]["total"].get<double>(), 70.25);
}

TEST(HtmlReport, CollectiveTableHasARowPerCollective) {
  const std::string table = element(render_html_report(test::sample_result()), "table", "comm-table");
  EXPECT_EQ(count(table, "<tr>"), 3);  // header + 2
  EXPECT_THAT(table, HasSubstr("<td class=\"l\">Ring/LL128</td>"));
  EXPECT_THAT(table, HasSubstr(">3.00 GiB<"));
}

TEST(HtmlReport, LinksAreAHeatMapBusiestFirst) {
  RunResult r = test::sample_result();
  EXPECT_THAT(render_html_report(r), Not(HasSubstr("id=\"links-table\"")));  // analytical: no links
  std::vector<LinkUsageRow> links(60);
  for (int i = 0; i < 60; ++i) {
    links[static_cast<std::size_t>(i)].name = "node" + std::to_string(i) + ".nic0>leaf0";
    links[static_cast<std::size_t>(i)].kind = "nic-leaf";
    links[static_cast<std::size_t>(i)].capacity_GBps = 50;
    links[static_cast<std::size_t>(i)].bytes = i == 0 ? 0 : 1e9 * i;
    links[static_cast<std::size_t>(i)].utilisation = i / 60.0;
  }
  HtmlReportExtras x;
  x.links = links;
  const std::string html = render_html_report(r, x);
  const std::string table = element(html, "table", "links-table");
  EXPECT_EQ(count(table, "<tr style=\"background:hsl("), 48);
  EXPECT_LT(table.find("node59.nic0"), table.find("node58.nic0"));
  EXPECT_THAT(table, Not(HasSubstr("node0.nic0")));  // carried nothing
  EXPECT_THAT(html,
              HasSubstr("The 48 busiest of the 59 links that carried traffic (60 links in the fabric), busiest first"));
  // Without the full list, the result's hot links.
  r.hot_links = {links[59], links[58]};
  const std::string hot = element(render_html_report(r), "table", "links-table");
  EXPECT_EQ(count(hot, "<tr style="), 2);
  EXPECT_THAT(hot, HasSubstr("data-json-path=\"hot_links[0].utilisation\""));
}

TEST(HtmlReport, TimelineOfTheCriticalRankOrACommandToTraceIt) {
  RunResult r = test::sample_result();
  HtmlReportExtras x;
  x.scenario_path = "runs/<a>.yaml";
  std::string html = render_html_report(r, x);
  EXPECT_THAT(html, HasSubstr("<code>trainsim run runs/&lt;a&gt;.yaml --trace trace.json --html report.html</code>"));
  const std::vector<TraceSpan> spans = {{7, 0, "fc1", "compute", 0, 100},
                                        {7, 2, "allreduce", "dp", 50, 200},
                                        {3, 0, "fc1", "compute", 0, 100},
                                        {7, 0, "<qkv>", "compute", 100, 50}};
  const std::vector<std::string> streams = {"compute", "tp", "dp"};
  x.trace = spans;
  x.stream_names = streams;
  x.traced = true;
  html = render_html_report(r, x);
  const std::string svg = element(html, "svg", "timeline-chart");
  EXPECT_EQ(count(svg, "class=\"span\""), 3);  // rank 7's only
  EXPECT_THAT(svg, HasSubstr(">dp</text>"));
  EXPECT_THAT(svg, HasSubstr("&lt;qkv&gt;"));
  r.critical_rank = 5;
  EXPECT_THAT(render_html_report(r, x), HasSubstr("<code>--trace-ranks 5</code>"));
}

TEST(HtmlReport, SameInputSameBytes) {
  EXPECT_EQ(render_html_report(test::sample_result()), render_html_report(test::sample_result()));
}

}  // namespace
}  // namespace trainsim
