// `trainsim tune --html`: the page of a real search over the tiny scenario (and of one where nothing fits) embeds
// the `tune --json` object, shows the listed configurations as a table and a bar chart with the best highlighted,
// gives the best as the command that reproduces it, and counts every pruning rule. Every number's path leads to its
// value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../report/html_page_checks.hpp"
#include "explore/tune_html.hpp"
#include "explore/tune_json.hpp"
#include "explore/tune_search.hpp"
#include "tune_test_scenarios.hpp"

namespace trainsim::explore {
namespace {

using Json = nlohmann::ordered_json;
using html_checks::count;
using html_checks::element;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::size_t kTop = 3;

struct Search {
  TuneOutcome outcome;
  Objective objective;
  Json json;
  std::string html;
};

// One search for the whole suite: micro-batch 1 or 2, ZeRO 1, on 80 GiB GPUs (a few seconds on two cores).
const Search& search() {
  static const Search s = [] {
    Search r;
    TuneRequest req;
    req.scenario = tune_test::write_scenario("html", tune_test::tiny_scenario_text(80.0));
    req.threads = 2;
    req.top = kTop + 1;
    req.overrides = {"training.global_batch_size=32"};
    add_space_values(req.space, "parallelism.zero_stage=1");
    add_space_values(req.space, "training.micro_batch_size=1,2");
    r.outcome = run_tune(req);
    r.objective = req.objective;
    r.json = tune_json(r.outcome, r.objective, kTop);
    r.html = render_tune_html(r.outcome, r.objective, kTop, "runs/my tiny.yaml");
    return r;
  }();
  return s;
}

TEST(TuneHtml, EmbedsTheTuneJsonAndFetchesNothing) {
  const Search& s = search();
  ASSERT_GE(s.outcome.ranked.size(), kTop);
  EXPECT_EQ(Json::parse(html_checks::json_block(s.html, "trainsim-result")), s.json);
  for (const char* external : {"http://", "https://", "<link", "@import", "url(", "src="})
    EXPECT_THAT(s.html, Not(HasSubstr(external))) << external;
  EXPECT_EQ(count(s.html, "<script"), 2);
}

TEST(TuneHtml, EveryNumberCarriesAPathToItsValue) {
  const Search& s = search();
  const auto numbers = html_checks::result_numbers(s.html);
  for (const auto& [path, value] : numbers) {
    const auto pointer = html_checks::pointer_of(path);
    ASSERT_TRUE(s.json.contains(pointer)) << path;
    EXPECT_EQ(s.json.at(pointer).dump(), value) << path;
  }
  EXPECT_GT(numbers.size(), kTop * 16);  // each listed row's settings and numbers, the bars, the counts, the best
}

TEST(TuneHtml, ListedConfigurationsAreATableAndBarsWithTheBestHighlighted) {
  const Search& s = search();
  const std::string table = element(s.html, "table", "tune-table");
  EXPECT_EQ(count(table, "<tr"), 1 + static_cast<int>(kTop));
  EXPECT_EQ(count(table, "<tr class=\"best\">"), 1);
  EXPECT_THAT(table, HasSubstr("data-json-path=\"ranked[0].rank\" data-value=\"1\">1<"));
  const std::string chart = element(s.html, "svg", "tune-chart");
  EXPECT_EQ(count(chart, "<rect class=\"bar"), static_cast<int>(kTop));
  EXPECT_EQ(count(chart, "class=\"bar best\""), 1);
  EXPECT_THAT(chart, HasSubstr("class=\"bar best\""));
  EXPECT_LT(chart.find("data-rank=\"1\""), chart.find("data-rank=\"2\""));
  EXPECT_THAT(chart, HasSubstr("#1 " + s.outcome.ranked[0].candidate.label()));
  // Bars in rank order, so the first (the best: tokens/s is maximised) is the longest.
  const std::regex width(R"re(<rect class="bar[^"]*" x="[0-9.]+" y="[0-9.]+" width="([0-9.]+)")re");
  std::vector<double> widths;
  for (std::sregex_iterator it(chart.begin(), chart.end(), width), end; it != end; ++it)
    widths.push_back(std::stod((*it)[1]));
  ASSERT_EQ(widths.size(), kTop);
  EXPECT_TRUE(std::is_sorted(widths.rbegin(), widths.rend()));
}

TEST(TuneHtml, TheBestIsACommandToPasteWithItsOverridesInOrder) {
  const Search& s = search();
  const std::string command = element(s.html, "pre", "best-command");
  ASSERT_FALSE(command.empty());
  EXPECT_THAT(command, HasSubstr("trainsim run &#39;runs/my tiny.yaml&#39; \\\n"));  // quoted for the shell
  std::size_t at = command.find("--set <span class=\"set\" data-json-path=\"base_overrides[0]\"");
  ASSERT_NE(at, std::string::npos);
  EXPECT_THAT(command, HasSubstr(">training.global_batch_size=32</span>"));
  const Json& overrides = s.json["ranked"][0]["overrides"];
  ASSERT_FALSE(overrides.empty());
  for (std::size_t i = 0; i < overrides.size(); ++i) {
    const std::string item = "data-json-path=\"ranked[0].overrides[" + std::to_string(i) + "]\"";
    const std::size_t next = command.find(item);
    ASSERT_NE(next, std::string::npos) << item;
    EXPECT_GT(next, at) << item;
    EXPECT_THAT(command.substr(next), HasSubstr(">" + overrides[i].get<std::string>() + "</span>"));
    at = next;
  }
}

TEST(TuneHtml, EveryPruningRuleIsCountedWithWhy) {
  const Search& s = search();
  const std::string table = element(s.html, "table", "pruning-table");
  for (const char* key :
       {"candidates", "tp_beyond_scale_up", "invalid", "out_of_memory", "dominated", "simulated", "bounded", "failed"})
    EXPECT_THAT(table, HasSubstr(std::string("data-json-path=\"counts.") + key + "\"")) << key;
  EXPECT_THAT(table, HasSubstr("lighter <code>training.recompute</code>"));
  EXPECT_THAT(s.html, HasSubstr("<ul id=\"explanations\">"));
}

TEST(TuneHtml, NothingRankedShowsTheCountsAndTheClosestMiss) {
  const std::string path = tune_test::write_scenario("html_nofit<b>", tune_test::tiny_scenario_text(1.0));
  TuneRequest req;
  req.scenario = path;
  req.threads = 2;
  const TuneOutcome o = run_tune(req);
  ASSERT_TRUE(o.ranked.empty());
  const std::string html = render_tune_html(o, req.objective, 5, path);
  EXPECT_EQ(Json::parse(html_checks::json_block(html, "trainsim-result")), tune_json(o, req.objective, 5));
  EXPECT_THAT(html, Not(HasSubstr("id=\"tune-chart\"")));
  EXPECT_THAT(html, Not(HasSubstr("id=\"best-command\"")));
  EXPECT_THAT(html, HasSubstr("Nothing was ranked: no configuration fits in memory"));
  EXPECT_THAT(html, HasSubstr("data-json-path=\"closest_out_of_memory.peak_gib\""));
  EXPECT_THAT(html, HasSubstr("<h1>trainsim tune: trainsim_tune_html_nofit&lt;b&gt;</h1>"));
  EXPECT_THAT(html, Not(HasSubstr("<b>")));
}

TEST(TuneHtml, ShellWordsAreQuotedOnlyWhenTheShellWouldSplitThem) {
  EXPECT_EQ(shell_word("parallelism.tensor=4"), "parallelism.tensor=4");
  EXPECT_EQ(shell_word("examples/tiny-8-h100.yaml"), "examples/tiny-8-h100.yaml");
  EXPECT_EQ(shell_word("training.recompute_num_layers=[4, 0]"), "'training.recompute_num_layers=[4, 0]'");
  EXPECT_EQ(shell_word("it's"), "'it'\\''s'");
  EXPECT_EQ(shell_word(""), "''");
  EXPECT_EQ(shell_word("a$b"), "'a$b'");
}

}  // namespace
}  // namespace trainsim::explore
