// `--zip`: keys that change together form one axis of the sweep. Its i-th point sets every zipped
// key to its i-th value; the axis joins the `--vary` axes in the cartesian product at the position
// asked for; every key gets its CSV column; the marginal-gain table and the plot see one axis.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/sweep_plot.hpp"
#include "explore/sweep_spec.hpp"
#include "explore/sweep_table.hpp"
#include "explore/sweep_text.hpp"
#include "point_outcomes.hpp"

namespace trainsim::explore {
namespace {

using ::testing::ContainsRegex;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using json = nlohmann::ordered_json;

const std::vector<std::string> kPipelineAndBatch = {"parallelism.pipeline=1,2,4",
                                                    "training.global_batch_size=16,32,64"};

// The error message of make_sweep, or "" if it built a sweep.
std::string sweep_error(const std::vector<std::string>& vary, const std::vector<std::string>& zip,
                        std::size_t zip_position = 0) {
  try {
    make_sweep(vary, zip, zip_position);
  } catch (const Error& e) { return e.what(); }
  return "";
}

using test::ok_with_time;

TEST(SweepZip, ZippedKeysFormOneAxisWhoseIthPointSetsEveryIthValue) {
  // A range works in --zip as in --vary: 8:24:8 is 8, 16, 24.
  const Sweep s =
      make_sweep({}, {"parallelism.pipeline=1,2,4", "cluster.num_gpus=8:24:8", "training.global_batch_size=16,32,64"});
  ASSERT_EQ(s.axes.size(), 1u);
  EXPECT_TRUE(s.axes[0].zipped);
  ASSERT_EQ(s.size(), 3u);  // not 27: the keys move together
  EXPECT_EQ(s.key_count(), 3u);
  EXPECT_EQ(s.axes[0].name(), "parallelism.pipeline + cluster.num_gpus + training.global_batch_size");
  const auto o = s.overrides({"parallelism.tensor=2"});
  EXPECT_THAT(o[0], ElementsAre("parallelism.tensor=2", "parallelism.pipeline=1", "cluster.num_gpus=8",
                                "training.global_batch_size=16"));
  EXPECT_THAT(o[1], ElementsAre("parallelism.tensor=2", "parallelism.pipeline=2", "cluster.num_gpus=16",
                                "training.global_batch_size=32"));
  EXPECT_THAT(o[2], ElementsAre("parallelism.tensor=2", "parallelism.pipeline=4", "cluster.num_gpus=24",
                                "training.global_batch_size=64"));
  EXPECT_EQ(s.value(2, 0, 1).text, "24");
  EXPECT_EQ(s.axes[0].step_label(1), "(2, 16, 32)");
}

TEST(SweepZip, DifferentValueCountsAreAnErrorNamingZipTheKeysAndTheCounts) {
  const std::string msg = sweep_error({}, {"parallelism.pipeline=1,2,4,8", "training.global_batch_size=16,32,64"});
  EXPECT_THAT(msg, HasSubstr("--zip"));
  EXPECT_THAT(msg, HasSubstr("parallelism.pipeline has 4"));
  EXPECT_THAT(msg, HasSubstr("training.global_batch_size has 3"));
}

TEST(SweepZip, ZipTimesVaryIsTheProductWithTheZippedAxisWhereAsked) {
  // Position 0: the zipped axis first (slowest), as when --zip comes before every --vary.
  Sweep s = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 0);
  ASSERT_EQ(s.size(), 6u);
  ASSERT_EQ(s.axes.size(), 2u);
  EXPECT_TRUE(s.axes[0].zipped);
  std::vector<std::vector<std::string>> expected = {
      {"parallelism.pipeline=1", "training.global_batch_size=16", "cluster.nic_gbps=100"},
      {"parallelism.pipeline=1", "training.global_batch_size=16", "cluster.nic_gbps=400"},
      {"parallelism.pipeline=2", "training.global_batch_size=32", "cluster.nic_gbps=100"},
      {"parallelism.pipeline=2", "training.global_batch_size=32", "cluster.nic_gbps=400"},
      {"parallelism.pipeline=4", "training.global_batch_size=64", "cluster.nic_gbps=100"},
      {"parallelism.pipeline=4", "training.global_batch_size=64", "cluster.nic_gbps=400"}};
  EXPECT_EQ(s.overrides(), expected);

  // Position 1: after the one --vary, so the NIC is the slowest and its column comes first.
  s = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 1);
  ASSERT_EQ(s.size(), 6u);
  EXPECT_FALSE(s.axes[0].zipped);
  EXPECT_TRUE(s.axes[1].zipped);
  expected = {{"cluster.nic_gbps=100", "parallelism.pipeline=1", "training.global_batch_size=16"},
              {"cluster.nic_gbps=100", "parallelism.pipeline=2", "training.global_batch_size=32"},
              {"cluster.nic_gbps=100", "parallelism.pipeline=4", "training.global_batch_size=64"},
              {"cluster.nic_gbps=400", "parallelism.pipeline=1", "training.global_batch_size=16"},
              {"cluster.nic_gbps=400", "parallelism.pipeline=2", "training.global_batch_size=32"},
              {"cluster.nic_gbps=400", "parallelism.pipeline=4", "training.global_batch_size=64"}};
  EXPECT_EQ(s.overrides(), expected);

  // Between two --vary axes, and a position past the end means last.
  s = make_sweep({"cluster.nic_gbps=100,400", "training.micro_batch_size=1,2"}, kPipelineAndBatch, 1);
  ASSERT_EQ(s.size(), 12u);
  EXPECT_TRUE(s.axes[1].zipped);
  EXPECT_EQ(s.stride(0), 6u);
  EXPECT_EQ(s.stride(1), 2u);
  s = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 7);
  EXPECT_TRUE(s.axes.back().zipped);
}

TEST(SweepZip, KeyBothZippedAndVariedIsAnError) {
  for (std::size_t position : {0u, 1u}) {
    const std::string msg = sweep_error({"parallelism.pipeline=1,2"}, kPipelineAndBatch, position);
    EXPECT_THAT(msg, HasSubstr("--zip 'parallelism.pipeline=1,2,4'"));
    EXPECT_THAT(msg, HasSubstr("also given to --vary"));
  }
  const std::string twice = sweep_error({}, {"parallelism.pipeline=1,2", "parallelism.pipeline=4,8"});
  EXPECT_THAT(twice, HasSubstr("--zip"));
  EXPECT_THAT(twice, HasSubstr("zipped twice"));
}

TEST(SweepZip, BadValuesAreErrorsNamingZipNotVary) {
  for (const std::string text : {"parallelism.pipeline", "parallelism.pipelin=1,2", "parallelism.pipeline=1:4:0",
                                 "parallelism.pipeline=1,,2", "cluster.gpu=\"H100"}) {
    const std::string msg = sweep_error({}, {text});
    EXPECT_THAT(msg, HasSubstr("--zip '" + text + "'")) << text;
    EXPECT_THAT(msg, ::testing::Not(HasSubstr("--vary"))) << text;
  }
  EXPECT_THAT(sweep_error({}, {}), HasSubstr("--zip"));  // neither flag: the message mentions both
}

TEST(SweepZip, AZippedKeyMayRepeatAValueButTwoEqualPointsAreAnError) {
  // The TP size grows while the GPU count stays put for the first two points: fine.
  const Sweep s = make_sweep({}, {"parallelism.tensor=1,2,4", "cluster.num_gpus=8,8,16"});
  EXPECT_EQ(s.size(), 3u);
  const std::string msg = sweep_error({}, {"parallelism.tensor=2,1,2", "cluster.num_gpus=8,8,8"});
  EXPECT_THAT(msg, HasSubstr("--zip"));
  EXPECT_THAT(msg, HasSubstr("points 1 and 3"));
  EXPECT_THAT(msg, HasSubstr("(2, 8)"));
}

TEST(SweepZip, SetOfAZippedKeyIsAnErrorNamingZip) {
  const Sweep s = make_sweep({}, kPipelineAndBatch);
  try {
    check_no_set_conflict(s, {"training.global_batch_size=8"});
    FAIL() << "expected an error";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--set"));
    EXPECT_THAT(e.what(), HasSubstr("--zip"));
  }
}

TEST(SweepZip, EveryZippedKeyHasItsOwnColumnInAxisOrder) {
  const Sweep s = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 1);
  std::vector<PointOutcome> outcomes;
  for (int p = 0; p < 6; ++p) outcomes.push_back(ok_with_time(1.0 + p));
  const SweepTable t = make_sweep_table(s, outcomes);
  EXPECT_EQ(t.key_columns, 3u);
  EXPECT_THAT(t.columns, ElementsAre("cluster.nic_gbps", "parallelism.pipeline", "training.global_batch_size", "status",
                                     "reason", "iteration_time_s"));
  std::stringstream csv;
  write_sweep_csv(csv, t);
  EXPECT_THAT(csv.str(), HasSubstr("\n100,2,32,ok,,2.0\n"));
  EXPECT_THAT(csv.str(), HasSubstr("\n400,4,64,ok,,6.0\n"));
  EXPECT_EQ(t.number(4, 2), 32.0);  // a zipped value is a number like a varied one
}

TEST(SweepZip, MarginalGainStepsTheZippedAxisAsOne) {
  // Zipped axis first: points (1,16,100)=4 (1,16,400)=2 (2,32,100)=3 (2,32,400)=1 (4,64,100)=3 (4,64,400)=1.5
  const Sweep s = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 0);
  const SweepTable t = make_sweep_table(s, {ok_with_time(4.0), ok_with_time(2.0), ok_with_time(3.0), ok_with_time(1.0),
                                            ok_with_time(3.0), ok_with_time(1.5)});
  std::stringstream text;
  write_sweep_text(text, s, t);
  EXPECT_THAT(text.str(),
              HasSubstr("at each step of (parallelism.pipeline + training.global_batch_size) (other keys fixed)"));
  EXPECT_THAT(text.str(), ContainsRegex("cluster.nic_gbps=100 +[(]1, 16[)] -> [(]2, 32[)] +-25.0%"));
  EXPECT_THAT(text.str(), ContainsRegex("cluster.nic_gbps=400 +[(]2, 32[)] -> [(]4, 64[)] +[+]50.0%"));
  // The points table has a column per zipped key.
  EXPECT_THAT(text.str(), ContainsRegex("parallelism.pipeline +training.global_batch_size +cluster.nic_gbps"));

  // Zipped axis second: it is part of the "other keys" label, every zipped key named.
  const Sweep later = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 1);
  EXPECT_EQ(other_keys_label(later, 2), "parallelism.pipeline=4, training.global_batch_size=64");
}

TEST(SweepZip, PlotOfAZippedFirstAxisIsOneLineAgainstTheFirstZippedKey) {
  const Sweep s = make_sweep({}, {"parallelism.pipeline=1,2,4,8", "training.global_batch_size=16,32,64,128"});
  const PlotData d = make_plot_data(
      s, make_sweep_table(s, {ok_with_time(4.0), ok_with_time(3.0), ok_with_time(2.5), ok_with_time(2.0)}),
      "iteration_time_s");
  EXPECT_FALSE(d.categorical);
  EXPECT_EQ(d.x_key, "parallelism.pipeline");
  ASSERT_EQ(d.series.size(), 1u);
  EXPECT_THAT(d.series[0].points, ElementsAre(Pair(1.0, 4.0), Pair(2.0, 3.0), Pair(4.0, 2.5), Pair(8.0, 2.0)));
  const std::string script = gnuplot_script(d, "f.yaml", "o.svg", {"a"});
  EXPECT_THAT(script, HasSubstr("set title 'f.yaml: iteration_time_s vs parallelism.pipeline'"));
  EXPECT_THAT(script, HasSubstr("set xlabel 'parallelism.pipeline (zipped with training.global_batch_size)'"));
}

TEST(SweepZip, PlotOfAZippedLaterAxisHasALinePerZippedPoint) {
  const Sweep s = make_sweep({"cluster.nic_gbps=100,400"}, kPipelineAndBatch, 1);
  std::vector<PointOutcome> outcomes;
  for (int p = 0; p < 6; ++p) outcomes.push_back(ok_with_time(1.0 + p));
  const PlotData d = make_plot_data(s, make_sweep_table(s, outcomes), "iteration_time_s");
  EXPECT_EQ(d.x_key, "cluster.nic_gbps");
  EXPECT_TRUE(d.x_zipped_with.empty());
  ASSERT_EQ(d.series.size(), 3u);
  EXPECT_EQ(d.series[1].title, "parallelism.pipeline=2, training.global_batch_size=32");
  // Points 1 (100, 2, 32) and 4 (400, 2, 32).
  EXPECT_THAT(d.series[1].points, ElementsAre(Pair(100.0, 2.0), Pair(400.0, 5.0)));
}

}  // namespace
}  // namespace trainsim::explore
