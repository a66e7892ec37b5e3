// `trainsim sweep --json` and `--html` from hand-made outcomes (tests/cli/sweep_html_cli_test.cpp runs real sweeps):
// the JSON holds what was swept and every point, failed ones included; the page embeds that JSON, fetches nothing,
// escapes what it shows, gives every point a row and a mark on each chart, and every number's path leads to its
// value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "../report/html_page_checks.hpp"
#include "explore/sweep_html.hpp"
#include "explore/sweep_json.hpp"
#include "explore/sweep_spec.hpp"

namespace trainsim::explore {
namespace {

using Json = nlohmann::ordered_json;
using html_checks::count;
using html_checks::element;
using ::testing::HasSubstr;
using ::testing::Not;

// A simulated point's result: the fields the page shows.
PointOutcome ok(double iteration_s, double tokens_per_gpu) {
  PointOutcome o;
  o.status = PointStatus::Ok;
  o.result = {{"scenario", "s"},
              {"iteration_time_s", iteration_s},
              {"tokens_per_s_per_gpu", tokens_per_gpu},
              {"mfu", 0.41},
              {"memory", {{"peak", 30.25}, {"capacity", 79.6}, {"fits", true}}}};
  return o;
}

PointOutcome failed(PointStatus s, std::string reason) {
  PointOutcome o;
  o.status = s;
  o.reason = std::move(reason);
  return o;
}

// 3 NIC speeds x 2 TP sizes; point 3 (200 Gb/s, TP 2) is invalid, point 4 (400, TP 1) out of memory.
struct Fixture {
  Sweep sweep = make_sweep({"cluster.nic_gbps=100,200,400", "parallelism.tensor=1,2"});
  std::vector<PointOutcome> outcomes = {ok(7.72, 398.5),
                                        ok(7.5, 410),
                                        ok(7.01, 438.25),
                                        failed(PointStatus::Invalid, "parallelism.tensor: </script><b>2</b> & more"),
                                        failed(PointStatus::OutOfMemory, "stage 0 needs 90.1 GiB of 79.6 GiB"),
                                        ok(6.66, 461)};
  Json json = sweep_json(sweep, outcomes, "nic<i>", {"training.global_batch_size=64"});
  std::string html = render_sweep_html(sweep, json, "runs/nic<i>.yaml");
};

TEST(SweepJson, HoldsWhatWasSweptAndEveryPointFailedOnesIncluded) {
  const Fixture f;
  const Json& j = f.json;
  EXPECT_EQ(j["scenario"], "nic<i>");
  EXPECT_EQ(j["base_overrides"], Json::array({"training.global_batch_size=64"}));
  ASSERT_EQ(j["axes"].size(), 2u);
  EXPECT_EQ(j["axes"][0]["zipped"], false);
  EXPECT_EQ(j["axes"][0]["keys"][0]["key"], "cluster.nic_gbps");
  EXPECT_EQ(j["axes"][0]["keys"][0]["values"], Json::array({100, 200, 400}));  // numbers, not text
  EXPECT_EQ(j["counts"], Json::parse(R"({"points": 6, "ok": 4, "invalid": 1, "out_of_memory": 1, "failed": 0})"));
  ASSERT_EQ(j["points"].size(), 6u);
  EXPECT_EQ(j["points"][3]["point"], 3);
  EXPECT_EQ(j["points"][3]["values"], Json::parse(R"({"cluster.nic_gbps": 200, "parallelism.tensor": 2})"));
  EXPECT_EQ(j["points"][3]["status"], "invalid");
  EXPECT_EQ(j["points"][3]["reason"], f.outcomes[3].reason);
  EXPECT_TRUE(j["points"][3]["result"].is_null());
  EXPECT_EQ(j["points"][5]["result"], f.outcomes[5].result);
  EXPECT_EQ(j["points"][5]["reason"], "");
}

TEST(SweepJson, TextValuesStayTextAndZippedKeysShareAnAxis) {
  const Sweep sweep =
      make_sweep({"cluster.gpu=H100-SXM,H20"}, {"parallelism.pipeline=1,2", "cluster.num_gpus=16,32"}, 0);
  const Json j = sweep_json(sweep, std::vector<PointOutcome>(4, ok(1, 1)), "z", {});
  ASSERT_EQ(j["axes"].size(), 2u);
  EXPECT_EQ(j["axes"][0]["zipped"], true);
  EXPECT_EQ(j["axes"][0]["keys"].size(), 2u);
  EXPECT_EQ(j["axes"][1]["keys"][0]["values"], Json::array({"H100-SXM", "H20"}));
  EXPECT_EQ(j["points"][3]["values"],
            Json::parse(R"({"parallelism.pipeline": 2, "cluster.num_gpus": 32, "cluster.gpu": "H20"})"));
}

TEST(SweepHtml, EmbedsTheSweepJsonAndFetchesNothing) {
  const Fixture f;
  const std::string block = html_checks::json_block(f.html, "trainsim-result");
  EXPECT_THAT(block, Not(HasSubstr("<")));  // the reason's "</script>" cannot end the block
  EXPECT_EQ(Json::parse(block), f.json);
  EXPECT_EQ(count(block, "\n"), 2);  // on one line (between the tags' line breaks): a thousand results are large
  for (const char* external : {"http://", "https://", "<link", "@import", "url(", "src="})
    EXPECT_THAT(f.html, Not(HasSubstr(external))) << external;
  EXPECT_THAT(f.html, HasSubstr("<summary>The sweep as JSON (the same as <code>trainsim sweep --json</code>)"));
}

TEST(SweepHtml, TextFromTheScenarioAndTheReasonsIsEscaped) {
  const Fixture f;
  EXPECT_THAT(f.html, Not(HasSubstr("<i>")));
  EXPECT_THAT(f.html, Not(HasSubstr("<b>")));
  EXPECT_THAT(f.html, HasSubstr("<h1>trainsim sweep: nic&lt;i&gt;</h1>"));
  EXPECT_THAT(f.html, HasSubstr("<code>runs/nic&lt;i&gt;.yaml</code>"));
  EXPECT_THAT(f.html, HasSubstr("parallelism.tensor: &lt;/script&gt;&lt;b&gt;2&lt;/b&gt; &amp; more"));
  EXPECT_EQ(count(f.html, "<script"), 2);  // the JSON block and the checker
}

TEST(SweepHtml, EveryNumberCarriesAPathToItsValue) {
  const Fixture f;
  const auto numbers = html_checks::result_numbers(f.html);
  for (const auto& [path, value] : numbers) {
    const auto pointer = html_checks::pointer_of(path);
    ASSERT_TRUE(f.json.contains(pointer)) << path;
    EXPECT_EQ(f.json.at(pointer).dump(), value) << path;
  }
  // Per simulated point: #, 2 keys, 4 numbers in the table and one mark on each of 2 charts; per failed point
  // #, keys, status in the table and a mark on each chart; the counts, the axes' values, the --set.
  EXPECT_GT(numbers.size(), 4u * 11 + 2u * 6);
  EXPECT_THAT(f.html, HasSubstr("data-json-path=\"points[5].result.iteration_time_s\" data-value=\"6.66\">6.66 s<"));
  EXPECT_THAT(f.html, HasSubstr("data-json-path=\"points[3].values[&quot;parallelism.tensor&quot;]\" "
                                "data-value=\"2\">2<"));
}

TEST(SweepHtml, FailedPointsAreRowsWithTheirStatusAndCrossesOnTheCharts) {
  const Fixture f;
  const std::string table = element(f.html, "table", "points-table");
  EXPECT_EQ(count(table, "<tr"), 1 + 6);  // the header and every point
  EXPECT_EQ(count(table, "<tr class=\"failed\">"), 2);
  EXPECT_THAT(table, HasSubstr(">out_of_memory</td><td class=\"l wrap\">stage 0 needs 90.1 GiB of 79.6 GiB</td>"));
  EXPECT_THAT(table,
              HasSubstr("class=\"l bad\" data-json-path=\"points[3].status\" data-value=\"&quot;invalid&quot;\""));
  for (const char* id : {"sweep-iteration-chart", "sweep-throughput-chart"}) {
    const std::string svg = element(f.html, "svg", id);
    EXPECT_EQ(count(svg, "class=\"mark"), 6) << id;  // one mark per point
    EXPECT_EQ(count(svg, "class=\"mark failed\""), 2) << id;
    for (int p = 0; p < 6; ++p) EXPECT_EQ(count(svg, "data-point=\"" + std::to_string(p) + "\""), 1) << id << p;
  }
  // Two keys: x is the first (numbers), a line per value of the second.
  EXPECT_THAT(f.html, HasSubstr("<span class=\"swatch\" style=\"background:#4e79a7\"></span>parallelism.tensor=1"));
  EXPECT_THAT(f.html, HasSubstr("</span>parallelism.tensor=2</span>"));
  EXPECT_THAT(element(f.html, "svg", "sweep-iteration-chart"), HasSubstr(">cluster.nic_gbps</text>"));
}

TEST(SweepHtml, NamesAreCategoriesAndZippedOrManyKeysArePointsLabelledWithTheirValues) {
  const Sweep gpus = make_sweep({"cluster.gpu=H100-SXM,H20"});
  const std::string by_name = render_sweep_html(gpus, sweep_json(gpus, {ok(2, 1), ok(3, 1)}, "g", {}), "g.yaml");
  const std::string svg = element(by_name, "svg", "sweep-iteration-chart");
  EXPECT_THAT(svg, HasSubstr(">H100-SXM</text>"));
  EXPECT_THAT(svg, HasSubstr(">H20</text>"));
  EXPECT_THAT(by_name, Not(HasSubstr("class=\"legend\"")));  // one line

  const Sweep zipped = make_sweep({}, {"parallelism.pipeline=1,2", "cluster.num_gpus=16,32"}, 0);
  const std::string z = render_sweep_html(zipped, sweep_json(zipped, {ok(2, 1), ok(3, 1)}, "z", {}), "z.yaml");
  const std::string zsvg = element(z, "svg", "sweep-iteration-chart");
  EXPECT_THAT(zsvg, HasSubstr(">(1, 16)</text>"));
  EXPECT_THAT(zsvg, HasSubstr(">(2, 32)</text>"));
  EXPECT_THAT(zsvg, HasSubstr(">point (parallelism.pipeline, cluster.num_gpus)</text>"));
  EXPECT_THAT(element(z, "table", "axes-table"), HasSubstr("<td>1 (zipped)</td>"));
}

TEST(SweepHtml, NoPointSimulatedStillShowsEveryPoint) {
  const Sweep sweep = make_sweep({"parallelism.tensor=3,5"});
  const std::vector<PointOutcome> bad = {failed(PointStatus::Invalid, "3 does not divide"),
                                         failed(PointStatus::Invalid, "5 does not divide")};
  const std::string html = render_sweep_html(sweep, sweep_json(sweep, bad, "t", {}), "t.yaml");
  EXPECT_EQ(count(element(html, "table", "points-table"), "<tr class=\"failed\">"), 2);
  EXPECT_EQ(count(element(html, "svg", "sweep-iteration-chart"), "class=\"mark failed\""), 2);
}

// A thousand points: one row and one mark each, the list of values cut in the middle, ticks not crowded.
TEST(SweepHtml, AThousandPointsAreAllRowsAndMarksAndTheKeyListIsCut) {
  const Sweep sweep = make_sweep({"cluster.nic_gbps=10:10000:10"});
  std::vector<PointOutcome> outcomes;
  for (int p = 0; p < 1000; ++p) outcomes.push_back(p == 500 ? failed(PointStatus::Failed, "x") : ok(1.0 / (p + 1), p));
  const std::string html = render_sweep_html(sweep, sweep_json(sweep, outcomes, "k", {}), "k.yaml");
  EXPECT_EQ(count(element(html, "table", "points-table"), "<tr"), 1001);
  const std::string svg = element(html, "svg", "sweep-iteration-chart");
  EXPECT_EQ(count(svg, "class=\"mark"), 1000);
  EXPECT_EQ(count(svg, "class=\"mark failed\""), 1);
  EXPECT_LE(count(svg, "text-anchor=\"middle\">"), 12 + 1);  // 1-2-5 x ticks, not 1000 values; and the x label
  const std::string keys = element(html, "table", "axes-table");
  EXPECT_THAT(keys, HasSubstr(">200</span>, ... (977 more) ..., <span"));
  EXPECT_THAT(keys, HasSubstr("data-json-path=\"axes[0].keys[0].values[997]\""));
  EXPECT_THAT(keys, Not(HasSubstr("data-json-path=\"axes[0].keys[0].values[996]\"")));
  EXPECT_THAT(keys, Not(HasSubstr("data-json-path=\"axes[0].keys[0].values[20]\"")));
}

TEST(SweepHtml, SameInputSameBytes) { EXPECT_EQ(Fixture().html, Fixture().html); }

}  // namespace
}  // namespace trainsim::explore
