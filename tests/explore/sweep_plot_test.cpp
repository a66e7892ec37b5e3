// What the sweep plot draws (lines, points, axis kind) and the gnuplot script, without gnuplot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/sweep_plot.hpp"
#include "point_outcomes.hpp"

namespace trainsim::explore {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Pair;
using json = nlohmann::ordered_json;

// A simulated point with its iteration time and a text field (scenario) that cannot be plotted.
PointOutcome ok_with_time_and_scenario(double iteration_time) {
  return test::ok_outcome(json{{"iteration_time_s", iteration_time}, {"scenario", "s"}});
}

TEST(SweepPlot, TerminalFromExtension) {
  EXPECT_EQ(plot_terminal("a/b.svg"), "svg");
  EXPECT_EQ(plot_terminal("B.PNG"), "pngcairo");
  for (const char* bad : {"out.pdf", "out", "svg"}) {
    try {
      plot_terminal(bad);
      FAIL() << bad;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("--plot"));
      EXPECT_THAT(e.what(), HasSubstr(".svg or .png"));
    }
  }
}

TEST(SweepPlot, OneLinePerValueOfTheSecondKeyWithoutPointsThatFailed) {
  const Sweep sweep = make_sweep({"cluster.nic_gbps=100,200,400", "parallelism.tensor=2,4"});
  // Point order: (100,2) (100,4) (200,2) (200,4) (400,2) (400,4); (200,4) did not simulate.
  const std::vector<PointOutcome> outcomes = {
      ok_with_time_and_scenario(3.0), ok_with_time_and_scenario(6.0),
      ok_with_time_and_scenario(2.0), test::not_run_outcome(PointStatus::Invalid, "no"),
      ok_with_time_and_scenario(1.0), ok_with_time_and_scenario(4.0)};
  const PlotData d = make_plot_data(sweep, make_sweep_table(sweep, outcomes), "iteration_time_s");
  EXPECT_FALSE(d.categorical);
  ASSERT_EQ(d.series.size(), 2u);
  EXPECT_EQ(d.series[0].title, "parallelism.tensor=2");
  EXPECT_THAT(d.series[0].points, ElementsAre(Pair(100.0, 3.0), Pair(200.0, 2.0), Pair(400.0, 1.0)));
  EXPECT_EQ(d.series[1].title, "parallelism.tensor=4");
  EXPECT_THAT(d.series[1].points, ElementsAre(Pair(100.0, 6.0), Pair(400.0, 4.0)));

  const std::string script = gnuplot_script(d, "s.yaml", "/x/out.svg", {"/t/a.dat", "/t/b.dat"});
  EXPECT_THAT(script, HasSubstr("set terminal svg"));
  EXPECT_THAT(script, HasSubstr("set output '/x/out.svg'"));
  EXPECT_THAT(script, HasSubstr("set title 's.yaml: iteration_time_s vs cluster.nic_gbps'"));
  EXPECT_THAT(script, HasSubstr("set xlabel 'cluster.nic_gbps'"));
  EXPECT_THAT(script, HasSubstr("'/t/a.dat' using 1:2 with linespoints pointtype 7 title 'parallelism.tensor=2'"));
  EXPECT_THAT(script, HasSubstr("'/t/b.dat' using 1:2 with linespoints pointtype 7 title 'parallelism.tensor=4'"));
  EXPECT_THAT(script, Not(HasSubstr("xtics (")));
}

TEST(SweepPlot, GpuNamesAreLabelledCategoriesAndThreeKeysLabelEachCombination) {
  const Sweep sweep =
      make_sweep({"cluster.gpu=H100-SXM,H20", "parallelism.tensor=2,4", "training.micro_batch_size=1,2"});
  std::vector<PointOutcome> outcomes;
  for (int p = 0; p < 8; ++p) outcomes.push_back(ok_with_time_and_scenario(1.0 + p));
  const PlotData d = make_plot_data(sweep, make_sweep_table(sweep, outcomes), "iteration_time_s");
  EXPECT_TRUE(d.categorical);
  EXPECT_THAT(d.categories, ElementsAre("H100-SXM", "H20"));
  ASSERT_EQ(d.series.size(), 4u);
  EXPECT_EQ(d.series[1].title, "parallelism.tensor=2, training.micro_batch_size=2");
  // Point 1 is (H100-SXM, 2, 2) and point 5 is (H20, 2, 2): x is the category index.
  EXPECT_THAT(d.series[1].points, ElementsAre(Pair(0.0, 2.0), Pair(1.0, 6.0)));
  const std::string script = gnuplot_script(d, "s.yaml", "o.png", {"a", "b", "c", "d"});
  EXPECT_THAT(script, HasSubstr("set terminal pngcairo"));
  EXPECT_THAT(script, HasSubstr("set xtics ('H100-SXM' 0, 'H20' 1)"));
}

TEST(SweepPlot, SingleKeyIsOneLineTitledByTheField) {
  const Sweep sweep = make_sweep({"cluster.nic_gbps=100,200"});
  const PlotData d =
      make_plot_data(sweep, make_sweep_table(sweep, {ok_with_time_and_scenario(2.0), ok_with_time_and_scenario(1.0)}),
                     "iteration_time_s");
  ASSERT_EQ(d.series.size(), 1u);
  EXPECT_EQ(d.series[0].title, "");
  EXPECT_THAT(gnuplot_script(d, "s", "o.svg", {"a"}), HasSubstr("title 'iteration_time_s'"));
}

TEST(SweepPlot, QuotesInLabelsAreEscapedForGnuplot) {
  const Sweep sweep = make_sweep({"cluster.gpu=\"it's\",H20"});
  const PlotData d =
      make_plot_data(sweep, make_sweep_table(sweep, {ok_with_time_and_scenario(2.0), ok_with_time_and_scenario(1.0)}),
                     "iteration_time_s");
  EXPECT_THAT(gnuplot_script(d, "s", "o.svg", {"a"}), HasSubstr("'\"it''s\"' 0"));
}

TEST(SweepPlot, UnknownOrTextFieldIsAnErrorNamingY) {
  const Sweep sweep = make_sweep({"cluster.nic_gbps=100,200"});
  const SweepTable t = make_sweep_table(sweep, {ok_with_time_and_scenario(2.0), ok_with_time_and_scenario(1.0)});
  for (const char* field : {"iteration_time", "scenario", "status"}) {
    try {
      make_plot_data(sweep, t, field);
      FAIL() << field;
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), HasSubstr("--y"));
      EXPECT_THAT(e.what(), HasSubstr("iteration_time_s"));  // the list of numeric columns
    }
  }
}

TEST(SweepPlot, FindOnPathFindsAShellAndNotANonsenseName) {
  EXPECT_FALSE(find_on_path("sh").empty());
  EXPECT_TRUE(find_on_path("trainsim-no-such-program-xyz").empty());
}

}  // namespace
}  // namespace trainsim::explore
