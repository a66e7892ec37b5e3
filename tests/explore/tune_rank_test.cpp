// Objectives, ranking, tie-breaking and "why it beats the next" of `trainsim tune`, on hand-made results.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/tune_rank.hpp"
#include "support/error_of.hpp"

using namespace trainsim;
using namespace trainsim::explore;
using ::testing::HasSubstr;
using trainsim::test::error_of;

namespace {

TuneCandidate with_tensor(int t, int gpus = 8) {
  TuneCandidate c;
  c.num_gpus = gpus;
  c.tensor = t;
  c.data = gpus / t;
  return c;
}

// A result as `trainsim run --json` gives it, with only the fields tune reads.
nlohmann::ordered_json result(double iteration_s, double compute, double bubble, double tp, double dp) {
  nlohmann::ordered_json r;
  r["iteration_time_s"] = iteration_s;
  r["breakdown"] = {
      {"compute", compute},
      {"exposed_comm", tp + dp},
      {"bubble", bubble},
      {"optimizer", 0.1},
      {"other", 0.0},
      {"exposed_comm_by_group", {{"tp", tp}, {"cp", 0.0}, {"dp", dp}, {"pp", 0.0}, {"ep", 0.0}, {"other", 0.0}}}};
  return r;
}

}  // namespace

TEST(TuneObjective, ValuesFollowTheirFormulas) {
  Objective tokens;
  EXPECT_DOUBLE_EQ(objective_value(tokens, 1e5, 8), 1e5);
  // 8 GPUs at $2/h cost $16/h = $0.004444/s; at 1e5 tokens/s a million tokens take 10 s: $0.04444.
  Objective cost{ObjectiveKind::Cost, 2.0, 0};
  EXPECT_NEAR(objective_value(cost, 1e5, 8), 16.0 / 3600 * 10, 1e-12);
  // 1e12 tokens at 1e6 tokens/s: 1e6 s = 277.78 hours.
  Objective ttt{ObjectiveKind::TimeToTrain, 0, 1e12};
  EXPECT_NEAR(objective_value(ttt, 1e6, 8), 1e6 / 3600, 1e-9);
  EXPECT_TRUE(maximises(ObjectiveKind::TokensPerS));
  EXPECT_FALSE(maximises(ObjectiveKind::Cost));
  EXPECT_FALSE(maximises(ObjectiveKind::TimeToTrain));
}

TEST(TuneObjective, CompanionFlagsAreRequired) {
  EXPECT_THAT(error_of([] { check_objective({ObjectiveKind::Cost, 0, 0}); }), HasSubstr("--gpu-hour-price"));
  EXPECT_THAT(error_of([] { check_objective({ObjectiveKind::Cost, -1, 0}); }), HasSubstr("--gpu-hour-price"));
  EXPECT_THAT(error_of([] { check_objective({ObjectiveKind::TimeToTrain, 0, 0}); }), HasSubstr("--tokens"));
  EXPECT_THAT(error_of([] { check_objective({ObjectiveKind::TimeToTrain, 0, NAN}); }), HasSubstr("--tokens"));
  EXPECT_EQ(error_of([] { check_objective({ObjectiveKind::TokensPerS, 0, 0}); }), "(no error)");
  EXPECT_THAT(error_of([] { parse_objective_kind("throughput"); }), HasSubstr("--objective"));
  EXPECT_EQ(parse_objective_kind("time_to_train"), ObjectiveKind::TimeToTrain);
}

TEST(TuneObjective, TokenCountsTakeDecimalSuffixes) {
  EXPECT_DOUBLE_EQ(*parse_token_count("1T"), 1e12);
  EXPECT_DOUBLE_EQ(*parse_token_count("1e12"), 1e12);
  EXPECT_DOUBLE_EQ(*parse_token_count("300B"), 3e11);
  EXPECT_DOUBLE_EQ(*parse_token_count("2.5M"), 2.5e6);
  EXPECT_DOUBLE_EQ(*parse_token_count("15000"), 15000);
  for (const char* bad : {"", "T", "abc", "-1", "0", "1X", "1TT", "inf", "1e999"})
    EXPECT_FALSE(parse_token_count(bad).has_value()) << bad;
}

TEST(TuneRanking, BetterObjectiveFirstAndTiesInKeyOrder) {
  std::vector<RankedConfig> configs = {
      {with_tensor(4), result(1, 1, 0, 0, 0), 100},
      {with_tensor(2), result(1, 1, 0, 0, 0), 300},
      {with_tensor(8), result(1, 1, 0, 0, 0), 300},  // ties with tensor 2: tensor 2 comes first
      {with_tensor(1), result(1, 1, 0, 0, 0), 200},
  };
  rank_configs(configs, ObjectiveKind::TokensPerS);
  EXPECT_EQ(configs[0].candidate.tensor, 2);
  EXPECT_EQ(configs[1].candidate.tensor, 8);
  EXPECT_EQ(configs[2].candidate.tensor, 1);
  EXPECT_EQ(configs[3].candidate.tensor, 4);
  // Minimised objectives: the smallest first, ties still in key order.
  rank_configs(configs, ObjectiveKind::Cost);
  EXPECT_EQ(configs[0].candidate.tensor, 4);
  EXPECT_EQ(configs[1].candidate.tensor, 1);
  EXPECT_EQ(configs[2].candidate.tensor, 2);
  EXPECT_EQ(configs[3].candidate.tensor, 8);
  // The order does not depend on the input order.
  std::vector<RankedConfig> reversed(configs.rbegin(), configs.rend());
  rank_configs(reversed, ObjectiveKind::Cost);
  for (std::size_t i = 0; i < configs.size(); ++i) EXPECT_EQ(reversed[i].candidate.tensor, configs[i].candidate.tensor);
}

TEST(TuneRanking, CostPrefersFewerGpusWhenThroughputGrowsLessThanTheirNumber) {
  // 16 GPUs give 1.5x the tokens/s of 8: faster, but each token costs more.
  const Objective cost{ObjectiveKind::Cost, 2.0, 0};
  std::vector<RankedConfig> configs = {{with_tensor(1, 16), result(1, 1, 0, 0, 0), 0},
                                       {with_tensor(1, 8), result(1, 1, 0, 0, 0), 0}};
  configs[0].objective = objective_value(cost, 1.5e5, 16);
  configs[1].objective = objective_value(cost, 1.0e5, 8);
  rank_configs(configs, ObjectiveKind::Cost);
  EXPECT_EQ(configs[0].candidate.num_gpus, 8);
}

TEST(TuneExplanation, PicksTheLargestBreakdownDifferences) {
  // a vs b: bubble 1.0 vs 2.9 (-1.9 s), TP 0.5 vs 0.2 (+0.3 s), DP 0.25 vs 0.2 (+0.05 s), compute equal.
  const RankedConfig a{with_tensor(2), result(10.0, 8.0, 1.0, 0.5, 0.25), 0};
  const RankedConfig b{with_tensor(4), result(11.55, 8.0, 2.9, 0.2, 0.2), 0};
  const auto diffs = breakdown_differences(a.result, b.result);
  ASSERT_GE(diffs.size(), 3u);
  EXPECT_EQ(diffs[0].component, "bubble");
  EXPECT_NEAR(diffs[0].seconds, -1.9, 1e-12);
  EXPECT_EQ(diffs[1].component, "tp");
  EXPECT_NEAR(diffs[1].seconds, 0.3, 1e-12);
  EXPECT_EQ(diffs[2].component, "dp");

  const explore::Explanation e = explain_versus(a, 1, b, ObjectiveKind::TokensPerS, 2);
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.versus, 2);
  ASSERT_EQ(e.largest.size(), 2u);
  EXPECT_EQ(e.largest[0].component, "bubble");
  EXPECT_EQ(e.largest[1].component, "tp");
  EXPECT_THAT(e.text, HasSubstr("#1 vs #2"));
  EXPECT_THAT(e.text, HasSubstr("1.90 s less pipeline bubble"));
  EXPECT_THAT(e.text, HasSubstr("300.0 ms more exposed TP communication"));
  EXPECT_THAT(e.text, ::testing::Not(HasSubstr("DP")));
}

TEST(TuneExplanation, SaysSoWhenNothingDiffersOrTheObjectiveTies) {
  const RankedConfig a{with_tensor(2), result(1, 1, 0, 0, 0), 5};
  const RankedConfig b{with_tensor(4), result(1, 1, 0, 0, 0), 5};
  const explore::Explanation e = explain_versus(a, 3, b, ObjectiveKind::TokensPerS);
  EXPECT_TRUE(e.largest.empty());
  EXPECT_THAT(e.text, HasSubstr("#3 vs #4"));
  EXPECT_THAT(e.text, HasSubstr("no component of the breakdown differs"));
  EXPECT_THAT(e.text, HasSubstr("same tokens_per_s"));
}

TEST(TuneExplanation, FormatsSecondsByMagnitude) {
  EXPECT_EQ(format_seconds(-1.9), "1.90 s");
  EXPECT_EQ(format_seconds(0.0123), "12.3 ms");
  EXPECT_EQ(format_seconds(4.5e-5), "45 us");
}
