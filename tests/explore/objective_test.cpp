// The objectives sweeps and searches rank by (explore/objective.hpp): their names and units, which settings each
// needs or refuses (named as the front end names them), and their value from a run's result, the run-level ones
// from its run_plan.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "support/error_of.hpp"
#include "explore/objective.hpp"

using namespace trainsim;
using namespace trainsim::explore;
using ::testing::HasSubstr;
using trainsim::test::error_of;

TEST(Objective, RunLevelObjectivesNeedATokenBudget) {
  EXPECT_EQ(parse_objective_kind("days"), ObjectiveKind::Days);
  EXPECT_EQ(parse_objective_kind("energy"), ObjectiveKind::Energy);
  EXPECT_STREQ(objective_unit(ObjectiveKind::Days), "days");
  EXPECT_STREQ(objective_unit(ObjectiveKind::Energy), "MWh");
  EXPECT_FALSE(maximises(ObjectiveKind::Days));
  EXPECT_FALSE(maximises(ObjectiveKind::Energy));
  const Objective days = read_objective("days", std::nullopt, std::string("15T"));
  EXPECT_TRUE(days.run_level());
  EXPECT_DOUBLE_EQ(days.tokens, 15e12);
  EXPECT_THAT(error_of([] { read_objective("days", std::nullopt, std::nullopt); }),
              HasSubstr("--tokens: --objective days needs the number of tokens"));
  EXPECT_THAT(error_of([] {
                read_objective("energy", std::nullopt, std::nullopt, {"objective", "gpu_hour_price", "tokens"});
              }),
              HasSubstr("tokens: objective energy needs"));
  // Cost: per million tokens of the iteration at a price, or of the whole run with a budget (the price may then
  // come from the scenario's cost block).
  EXPECT_FALSE(read_objective("cost", 2.0, std::nullopt).run_level());
  EXPECT_TRUE(read_objective("cost", std::nullopt, std::string("1T")).run_level());
  EXPECT_THAT(error_of([] { read_objective("cost", std::nullopt, std::nullopt); }), HasSubstr("--gpu-hour-price"));
  // Settings the objective does not read, and malformed ones, name themselves.
  EXPECT_THAT(error_of([] { read_objective("days", 2.0, std::string("1T")); }),
              HasSubstr("--gpu-hour-price: only used with --objective cost"));
  EXPECT_THAT(error_of([] { read_objective("tokens_per_s", std::nullopt, std::string("1T")); }),
              HasSubstr("--tokens: not used with --objective tokens_per_s"));
  EXPECT_THAT(error_of([] { read_objective("days", std::nullopt, std::string("lots")); }),
              HasSubstr("--tokens: expected a positive token count"));
  EXPECT_THAT(error_of([] { read_objective("cost", -1.0, std::nullopt); }), HasSubstr("--gpu-hour-price: expected"));
  EXPECT_THAT(error_of([] {
                read_objective("fastest", std::nullopt, std::nullopt, {"objective", "p", "t"});
              }),
              HasSubstr("objective: expected tokens_per_s, cost, time_to_train, days or energy, got 'fastest'"));
}

TEST(Objective, ValuesComeFromTheResultAndItsRunPlan) {
  nlohmann::ordered_json result = {{"tokens_per_s", 2e6}};
  result["run_plan"] = {{"tokens", 1e12}, {"days", 8.5},          {"goodput", 0.9},
                        {"failures", 12}, {"energy_mwh", 1234.5}, {"cost_usd", 3e6}};
  const Objective days = read_objective("days", std::nullopt, std::string("1T"));
  const Objective energy = read_objective("energy", std::nullopt, std::string("1T"));
  const Objective run_cost = read_objective("cost", std::nullopt, std::string("1T"));
  const Objective ttt = read_objective("time_to_train", std::nullopt, std::string("1T"));
  const Objective cost = read_objective("cost", 2.0, std::nullopt);
  EXPECT_DOUBLE_EQ(*objective_of(days, result, 64), 8.5);
  EXPECT_DOUBLE_EQ(*objective_of(energy, result, 64), 1234.5);
  EXPECT_DOUBLE_EQ(*objective_of(run_cost, result, 64), 3e6 / 1e12 * 1e6);  // USD per million tokens
  EXPECT_DOUBLE_EQ(*objective_of(ttt, result, 64), 1e12 / 2e6 / 3600);
  EXPECT_DOUBLE_EQ(*objective_of(cost, result, 64), 64 * 2.0 / 3600 / 2e6 * 1e6);
  // The run takes at least its training time: days at full goodput bound the run's days from below.
  EXPECT_LE(objective_value(days, 2e6, 64), 8.5);
  // Without what it needs, no value.
  result["run_plan"]["cost_usd"] = nullptr;
  EXPECT_FALSE(objective_of(run_cost, result, 64));
  EXPECT_FALSE(objective_of(days, nlohmann::ordered_json{{"tokens_per_s", 2e6}}, 64));
  EXPECT_FALSE(objective_of(cost, nlohmann::ordered_json{{"tokens_per_s", 0}}, 64));
}
