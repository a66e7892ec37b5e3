// `trainsim sweep --html FILE` and `trainsim tune --html FILE` end to end: stdout (text or --json) is the same
// with or without the page, the page embeds what --json prints, an unwritable path is an error naming --html, MPI
// ranks write the page once with every rank's points, and headless Chromium renders both pages without a console
// message, every number checked against the embedded JSON (skipped without chromium).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "../explore/tune_test_scenarios.hpp"
#include "cli_support.hpp"
#include "html_browser.hpp"

namespace {

namespace fs = std::filesystem;
using namespace trainsim_cli_test;
using Json = nlohmann::ordered_json;
using ::testing::HasSubstr;
using ::testing::Not;

// 2 x 3 points, one TP size invalid.
const std::string kVary = " --vary parallelism.tensor=1,3 --vary cluster.nic_gbps=100,200,400";
// A small space of the tiny tune scenario: micro-batch 1 or 2, ZeRO 1.
const std::string kSpace = " --space parallelism.zero_stage=1 --space training.micro_batch_size=1,2 --top 3";

std::string scenario(const fs::path& dir, const std::string& text, const std::string& name = "s.yaml") {
  const fs::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

TEST(SweepHtmlCli, PageEmbedsTheJsonOutputAndStdoutIsUnchanged) {
  const fs::path dir = fresh_dir("sweep_json");
  const std::string s = scenario(dir, kSmallSweepScenario), page = (dir / "sweep.html").string();
  const Result plain = run("sweep " + s + kVary + " --json --threads 2");
  ASSERT_EQ(plain.status, 0) << plain.out;
  const Result with = run("sweep " + s + kVary + " --json --threads 2 --html " + page);
  ASSERT_EQ(with.status, 0) << with.out;
  EXPECT_EQ(with.out, plain.out);
  const Json json = Json::parse(plain.out);
  EXPECT_EQ(json["counts"]["points"], 6);
  EXPECT_EQ(json["counts"]["invalid"], 3);
  EXPECT_EQ(json["points"][3]["status"], "invalid");
  EXPECT_THAT(json["points"][3]["reason"].get<std::string>(), HasSubstr("parallelism.tensor"));
  const std::string html = read_file(page);
  EXPECT_EQ(Json::parse(embedded_result(html)), json);
  EXPECT_EQ(Json::parse(embedded_result(html)).dump(2) + "\n", plain.out);
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  // The text table and the CSV are the same with the page as without.
  const std::string csv = (dir / "a.csv").string(), csv2 = (dir / "b.csv").string();
  const Result text = run("sweep " + s + kVary + " --csv " + csv);
  const Result text_with = run("sweep " + s + kVary + " --csv " + csv2 + " --html " + page);
  ASSERT_EQ(text.status, 0) << text.out;
  EXPECT_EQ(text_with.out, text.out);
  EXPECT_EQ(read_file(csv2), read_file(csv));
  EXPECT_EQ(Json::parse(embedded_result(read_file(page))), json);
  EXPECT_EQ(run("sweep " + s + kVary + " --csv - --html " + page).out, run("sweep " + s + kVary + " --csv -").out);
}

TEST(SweepHtmlCli, BadHtmlPathsAndJsonWithCsvOnStdoutAreErrors) {
  const fs::path dir = fresh_dir("sweep_bad");
  const std::string s = scenario(dir, kSmallSweepScenario);
  const Result missing = run("sweep " + s + kVary + " --html /nonexistent-dir/sweep.html");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("error: --html '/nonexistent-dir/sweep.html': the directory /nonexistent-dir "
                                     "does not exist"));
  const Result full = run("sweep " + s + kVary + " --html /dev/full");
  EXPECT_EQ(full.status, 1) << full.out;
  EXPECT_THAT(full.out, HasSubstr("error: --html: error while writing /dev/full"));
  const Result both = run("sweep " + s + kVary + " --json --csv -");
  EXPECT_EQ(both.status, 1) << both.out;
  EXPECT_THAT(both.out, HasSubstr("error: --json and --csv - both write to standard output"));
}

TEST(SweepHtmlCli, NoPointSimulatedStillWritesThePageAndExitsOne) {
  const fs::path dir = fresh_dir("sweep_none");
  const std::string s = scenario(dir, kSmallSweepScenario), page = (dir / "none.html").string();
  const Result r = run("sweep " + s + " --vary parallelism.tensor=3,5 --html " + page);
  EXPECT_EQ(r.status, 1) << r.out;
  const std::string html = read_file(page);
  EXPECT_EQ(Json::parse(embedded_result(html))["counts"]["invalid"], 2);
  EXPECT_THAT(html, HasSubstr("<tr class=\"failed\">"));
}

TEST(SweepHtmlCli, MpiRanksWriteThePageOnceWithEveryPoint) {
#ifdef TRAINSIM_SANITIZED
  GTEST_SKIP() << "OpenMPI's runtime is not leak-clean under LeakSanitizer";
#endif
  if (run_shell("command -v mpirun").status != 0) GTEST_SKIP() << "mpirun is not on PATH";
  const fs::path dir = fresh_dir("sweep_mpi");
  const std::string s = scenario(dir, kSmallSweepScenario);
  const std::string alone = (dir / "alone.html").string(), ranks = (dir / "ranks.html").string();
  const Result one = run("sweep " + s + kVary + " --json --html " + alone);
  ASSERT_EQ(one.status, 0) << one.out;
  const Result mpi =
      run_shell("OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun -np 2 --oversubscribe " +
                std::string(TRAINSIM_BINARY) + " sweep " + s + kVary + " --threads 1 --json --html " + ranks);
  if (mpi.out.find("built without MPI") != std::string::npos) GTEST_SKIP() << "this trainsim was built without MPI";
  ASSERT_EQ(mpi.status, 0) << mpi.out;
  EXPECT_EQ(mpi.out, one.out);  // rank 0 prints the JSON once
  // Rank 0 writes the page with the points of both ranks: the same bytes as one process.
  EXPECT_EQ(read_file(ranks), read_file(alone));
}

TEST(TuneHtmlCli, PageEmbedsTheJsonOutputAndStdoutIsUnchanged) {
  const fs::path dir = fresh_dir("tune_json");
  const std::string s = scenario(dir, tune_test::tiny_scenario_text(80.0)), page = (dir / "tune.html").string();
  const Result plain = run("tune " + s + kSpace + " --json");
  ASSERT_EQ(plain.status, 0) << plain.out;
  const Result with = run("tune " + s + kSpace + " --json --html " + page);
  ASSERT_EQ(with.status, 0) << with.out;
  EXPECT_EQ(with.out, plain.out);
  const std::string html = read_file(page);
  EXPECT_EQ(Json::parse(embedded_result(html)), Json::parse(plain.out));
  EXPECT_EQ(Json::parse(embedded_result(html)).dump(2) + "\n", plain.out);
  EXPECT_THAT(html, HasSubstr("<pre id=\"best-command\" class=\"command\">trainsim run " + s));
  EXPECT_EQ(run("tune " + s + kSpace + " --html " + page).out, run("tune " + s + kSpace).out);
}

TEST(TuneHtmlCli, BadHtmlPathsAreErrorsNamingHtml) {
  const fs::path dir = fresh_dir("tune_bad");
  const std::string s = scenario(dir, tune_test::tiny_scenario_text(80.0));
  const Result missing = run("tune " + s + kSpace + " --html /nonexistent-dir/tune.html");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("error: --html '/nonexistent-dir/tune.html': the directory /nonexistent-dir "
                                     "does not exist"));
  EXPECT_THAT(missing.out, Not(HasSubstr("candidates")));  // found before the search
  const Result full = run("tune " + s + kSpace + " --html /dev/full");
  EXPECT_EQ(full.status, 1) << full.out;
  EXPECT_THAT(full.out, HasSubstr("error: --html: error while writing /dev/full"));
}

// The DOM after the page's script ran: every number checked and matching, nothing logged, the JSON's numbers as
// the page formats them.
void expect_checked_page(const Rendered& b, const std::string& name) {
  ASSERT_EQ(b.status, 0) << b.log;
  EXPECT_EQ(console_messages(b.log, name), "");
  EXPECT_THAT(b.dom, HasSubstr("<body data-js=\"ready\">"));
  EXPECT_THAT(b.dom, ::testing::ContainsRegex("<p id=\"json-check\" class=\"ok\">[0-9]+ numbers on this page "
                                              "checked against the embedded JSON: all match</p>"));
  EXPECT_THAT(b.dom, Not(HasSubstr("data-check=\"mismatch\"")));
}

// Renders a sweep with invalid points and a tune page in headless Chromium. Screenshots stay in the build tree:
// test-output/html-report/sweep.png and tune.png.
TEST(ExploreHtmlCli, SweepAndTunePagesRenderInHeadlessChromiumWithTheirJsonNumbers) {
  const std::string browser = chromium();
  if (browser.empty()) GTEST_SKIP() << kNoChromium;
  const fs::path dir = fresh_dir("explore_browser");
  const fs::path out_dir = fs::current_path() / "test-output" / "html-report";
  fs::create_directories(out_dir);

  const std::string s = scenario(dir, kSmallSweepScenario, "small<i>.yaml");
  const fs::path sweep_page = dir / "sweep.html";
  const Result made = run("sweep '" + s + "'" + kVary + " --json --html " + sweep_page.string());
  ASSERT_EQ(made.status, 0) << made.out;
  const Json sweep = Json::parse(made.out);
  fs::remove(out_dir / "sweep.png");
  const Rendered sb = render_in_chromium(browser, sweep_page, dir, out_dir / "sweep.png");
  RecordProperty("chromium_sweep_seconds", fmt::format("{:.1f}", sb.seconds));
  expect_checked_page(sb, "sweep.html");
  EXPECT_THAT(sb.dom, HasSubstr("<h1>trainsim sweep: small&lt;i&gt;</h1>"));
  EXPECT_THAT(sb.dom, Not(HasSubstr("<i>")));
  for (std::size_t p = 0; p < sweep["points"].size(); ++p) {
    const Json& point = sweep["points"][p];
    if (point["status"] != "ok") {
      EXPECT_THAT(sb.dom,
                  HasSubstr(fmt::format("data-json-path=\"points[{}].status\" data-value=\"&quot;{}&quot;\" "
                                        "data-check=\"ok\">{}</td>",
                                        p, point["status"].get<std::string>(), point["status"].get<std::string>())));
      continue;
    }
    const Json& it = point["result"]["iteration_time_s"];
    EXPECT_THAT(sb.dom, HasSubstr(fmt::format("data-json-path=\"points[{}].result.iteration_time_s\" data-value=\"{}\" "
                                              "data-check=\"ok\">",
                                              p, it.dump())));
    EXPECT_THAT(sb.dom,
                HasSubstr(fmt::format("data-json-path=\"points[{}].result.mfu\" data-value=\"{}\" "
                                      "data-check=\"ok\">{:.1f} %</td>",
                                      p, point["result"]["mfu"].dump(), 100 * point["result"]["mfu"].get<double>())));
  }
  for (const char* id : {"sweep-iteration-chart", "sweep-throughput-chart", "points-table", "axes-table"})
    EXPECT_THAT(sb.dom, HasSubstr(std::string("id=\"") + id + "\"")) << id;
  EXPECT_GT(fs::file_size(out_dir / "sweep.png"), 10000u);

  const std::string t = scenario(dir, tune_test::tiny_scenario_text(80.0), "tiny.yaml");
  const fs::path tune_page = dir / "tune.html";
  const Result tuned = run("tune " + t + kSpace + " --json --html " + tune_page.string());
  ASSERT_EQ(tuned.status, 0) << tuned.out;
  const Json tune = Json::parse(tuned.out);
  fs::remove(out_dir / "tune.png");
  const Rendered tb = render_in_chromium(browser, tune_page, dir, out_dir / "tune.png");
  RecordProperty("chromium_tune_seconds", fmt::format("{:.1f}", tb.seconds));
  expect_checked_page(tb, "tune.html");
  for (std::size_t i = 0; i < tune["ranked"].size(); ++i) {
    const Json& r = tune["ranked"][i];
    EXPECT_THAT(tb.dom, HasSubstr(fmt::format("data-json-path=\"ranked[{}].result.iteration_time_s\" data-value=\"{}\" "
                                              "data-check=\"ok\">{:.4g}</td>",
                                              i, r["result"]["iteration_time_s"].dump(),
                                              r["result"]["iteration_time_s"].get<double>())));
    EXPECT_THAT(tb.dom, HasSubstr(fmt::format("data-json-path=\"ranked[{}].objective\" data-value=\"{}\" "
                                              "data-check=\"ok\"",
                                              i, r["objective"].dump())));
  }
  EXPECT_THAT(tb.dom, HasSubstr(fmt::format("data-json-path=\"counts.candidates\" data-value=\"{}\" data-check=\"ok\"",
                                            tune["counts"]["candidates"].dump())));
  for (const char* id : {"tune-chart", "tune-table", "pruning-table", "best-command"})
    EXPECT_THAT(tb.dom, HasSubstr(std::string("id=\"") + id + "\"")) << id;
  EXPECT_GT(fs::file_size(out_dir / "tune.png"), 10000u);
}

}  // namespace
