// `trainsim run --html FILE`: the page embeds the same result `--json` prints (and --json's bytes do not change
// with it), an unwritable path is an error naming --html, and a headless Chromium renders the page offline
// without a console message: the numbers of the JSON result are in the rendered DOM and the page's script ran
// (it marks every number checked against the embedded JSON). The browser test skips without chromium.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"
#include "html_browser.hpp"

namespace {

namespace fs = std::filesystem;
using namespace trainsim_cli_test;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(HtmlReportCli, EmbedsTheJsonResultAndLeavesJsonOutputAlone) {
  const fs::path dir = fresh_dir("json");
  const fs::path page = dir / "report.html";
  const Result plain = run("run " + kTinyExample + " --json --no-timing");
  ASSERT_EQ(plain.status, 0) << plain.out;
  const Result with = run("run " + kTinyExample + " --json --no-timing --html " + page.string());
  ASSERT_EQ(with.status, 0) << with.out;
  EXPECT_EQ(with.out, plain.out);  // stdout byte-identical with --html
  const std::string html = read_file(page);
  EXPECT_EQ(nlohmann::ordered_json::parse(embedded_result(html)), nlohmann::ordered_json::parse(plain.out));
  EXPECT_EQ(nlohmann::ordered_json::parse(embedded_result(html)).dump(2) + "\n", plain.out);
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  // Every pipeline stage's memory (the memory model's table), and the command that would add a timeline.
  EXPECT_THAT(html, HasSubstr("data-json-path=\"memory_stages[0].weights\""));
  EXPECT_THAT(html, HasSubstr("<code>trainsim run " + kTinyExample + " --trace trace.json --html report.html</code>"));
  // The text report does not change either.
  EXPECT_EQ(run("run " + kTinyExample + " --no-timing --html " + page.string()).out,
            run("run " + kTinyExample + " --no-timing").out);
}

TEST(HtmlReportCli, AnUnwritablePathIsAnErrorNamingHtml) {
  const Result r = run("run " + kTinyExample + " --html /nonexistent-dir/report.html");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("error: --html: cannot write /nonexistent-dir/report.html"));
  const Result full = run("run " + kTinyExample + " --html /dev/full");
  EXPECT_EQ(full.status, 1) << full.out;
  EXPECT_THAT(full.out, HasSubstr("error: --html: error while writing /dev/full"));
}

// Renders the page of a flow-level run on two nodes (links that carry traffic) with a trace in headless Chromium: DOM
// dump and a screenshot in one launch, the browser's log on stderr. The screenshot stays in the build tree:
// test-output/html-report/report.png.
TEST(HtmlReportCli, RendersInHeadlessChromiumWithTheResultsNumbers) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << kNoChromium;
  const fs::path dir = fresh_dir("browser");
  // A scenario whose name (its file's stem) is markup: it must show as text.
  const fs::path scenario = dir / "tiny<i>&amp.yaml";
  fs::copy_file(kTinyExample, scenario);
  const fs::path page = dir / "report.html";
  const Result made = run("run '" + scenario.string() +
                          "' --no-timing --set simulation.network_model=flow --set cluster.gpus_per_node=4"
                          " --set cluster.nics_per_node=4 --trace " +
                          (dir / "trace.json").string() + " --html " + page.string() + " --json");
  ASSERT_EQ(made.status, 0) << made.out;
  const auto result = nlohmann::json::parse(made.out);

  const fs::path out_dir = fs::current_path() / "test-output" / "html-report";
  fs::create_directories(out_dir);
  const fs::path png = out_dir / "report.png";
  fs::remove(png);
  const Rendered b = render_in_chromium(browser, page, dir, png);
  RecordProperty("chromium_seconds", fmt::format("{:.1f}", b.seconds));
  ASSERT_EQ(b.status, 0) << b.log;
  const std::string& dom = b.dom;
  const std::string& log = b.log;

  // No console message of the page: no uncaught exception, no console.error (the page logs nothing).
  EXPECT_EQ(console_messages(log, "report.html"), "");
  // The page's script ran: every number matched the embedded JSON, and the raw view was filled from it.
  EXPECT_THAT(dom, HasSubstr("<body data-js=\"ready\">"));
  EXPECT_THAT(dom, ::testing::ContainsRegex("<p id=\"json-check\" class=\"ok\">[0-9]+ numbers on this page checked "
                                            "against the embedded JSON: all match</p>"));
  EXPECT_THAT(dom, Not(HasSubstr("data-check=\"mismatch\"")));
  EXPECT_THAT(dom, HasSubstr("data-check=\"ok\""));
  EXPECT_THAT(
      dom, HasSubstr("<pre id=\"raw-json\">{\n  \"scenario\": \"tiny&lt;i&gt;&amp;amp\",\n  \"iteration_time_s\": "));
  // The scenario's markup is text, not elements.
  EXPECT_THAT(dom, HasSubstr("<h1>trainsim run: tiny&lt;i&gt;&amp;amp</h1>"));
  EXPECT_THAT(dom, Not(HasSubstr("<i>")));
  // The JSON result's numbers, as formatted on the page.
  const double it = result["iteration_time_s"].get<double>();
  EXPECT_THAT(dom, HasSubstr(fmt::format("data-value=\"{}\" data-check=\"ok\">{:.4f} s</div>",
                                         result["iteration_time_s"].dump(), it)));
  EXPECT_THAT(dom, HasSubstr(fmt::format(">{:.1f}</div>", result["tflops_per_gpu"].get<double>())));
  EXPECT_THAT(dom, HasSubstr(fmt::format(">{:.1f} %</div>", 100 * result["mfu"].get<double>())));
  EXPECT_THAT(dom, HasSubstr(fmt::format(">{:.6f}</td>", result["comm"][0]["time_s"].get<double>())));
  // The charts: breakdown, memory, links heat map and the critical rank's timeline.
  for (const char* id : {"breakdown-chart", "memory-chart", "links-table", "timeline-chart", "comm-table"})
    EXPECT_THAT(dom, HasSubstr(std::string("id=\"") + id + "\"")) << id;
  ASSERT_TRUE(fs::exists(png)) << log;
  EXPECT_GT(fs::file_size(png), 10000u);
}

}  // namespace
