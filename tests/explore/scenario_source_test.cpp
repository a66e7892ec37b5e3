// A scenario held as YAML text (the Python module's dicts) goes through sweeps and tune exactly as the same text in
// a file; and the sweep's rows as JSON objects (trainsim.sweep) carry typed key values and every column.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/parallel_eval.hpp"
#include "explore/sweep_table.hpp"
#include "explore/tune_search.hpp"
#include "scenario/scenario_loader.hpp"
#include "tune_test_scenarios.hpp"

namespace trainsim::explore {
namespace {

TEST(ScenarioSource, TextGivesTheSameOutcomesAsItsFile) {
  const std::string text = tune_test::tiny_scenario_text(80.0);
  const std::string path = tune_test::write_scenario("scenario_source", text);
  const ScenarioSource in_memory = ScenarioSource::from_text(text, "<dict>");
  const std::vector<Overrides> points = {{"parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.data=8"},
                                         {"parallelism.tensor=3", "parallelism.data=null"}};
  const auto from_file = evaluate_all(path, points, 2);
  const auto from_text = evaluate_all(in_memory, points, 2);
  ASSERT_EQ(from_text.size(), 2u);
  EXPECT_EQ(from_text[0].status, PointStatus::Ok);
  EXPECT_EQ(from_text[1].status, PointStatus::Invalid);
  for (std::size_t i = 0; i < points.size(); ++i) {
    EXPECT_EQ(from_text[i].status, from_file[i].status) << i;
    nlohmann::ordered_json a = from_text[i].result, b = from_file[i].result;
    if (a.is_object()) {  // "<dict>" against the file's stem
      a.erase("scenario");
      b.erase("scenario");
    }
    EXPECT_EQ(a.dump(), b.dump()) << i;
  }
  EXPECT_EQ(from_text[0].result.value("scenario", ""), "<dict>");
  EXPECT_THAT(from_text[1].reason, ::testing::HasSubstr("<dict>"));  // errors name the label
}

TEST(ScenarioSource, TuneRunsOnText) {
  TuneRequest req;
  req.scenario = ScenarioSource::from_text(tune_test::tiny_scenario_text(80.0), "<dict>");
  add_space_values(req.space, "parallelism.pipeline=1");
  add_space_values(req.space, "training.micro_batch_size=1");
  req.threads = 2;
  const TuneOutcome out = run_tune(req);
  EXPECT_EQ(out.scenario, "<dict>");
  EXPECT_FALSE(out.ranked.empty());
}

TEST(ScenarioSource, BadTextIsAScenarioErrorNamingTheLabel) {
  try {
    load_scenario(ScenarioSource::from_text("model: [unclosed", "<dict>"));
    FAIL() << "no error";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.file(), "<dict>"); }
}

TEST(SweepRowsJson, KeysAreTypedAndEveryRowHasEveryColumn) {
  const Sweep sweep = make_sweep({"cluster.nic_gbps=100,2.5e2", "cluster.gpu=H100-SXM"});
  PointOutcome ok;
  ok.status = PointStatus::Ok;
  ok.result = nlohmann::ordered_json::parse(R"({"iteration_time_s": 1.5, "cluster": {"gpu": "H100-SXM"}})");
  PointOutcome bad;
  bad.status = PointStatus::Invalid;
  bad.reason = "no";
  const nlohmann::ordered_json rows = sweep_rows_json(sweep, make_sweep_table(sweep, {ok, bad}));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].dump(),
            R"({"cluster.nic_gbps":100,"cluster.gpu":"H100-SXM","status":"ok","reason":"","iteration_time_s":1.5})");
  EXPECT_EQ(rows[1].dump(), R"({"cluster.nic_gbps":250.0,"cluster.gpu":"H100-SXM","status":"invalid","reason":"no",)"
                            R"("iteration_time_s":null})");
}

}  // namespace
}  // namespace trainsim::explore
