// `trainsim tune` as a user runs it: the table, --json, thread-count invariance, bad flags.
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../explore/tune_test_scenarios.hpp"
#include "cli_support.hpp"

using namespace trainsim_cli_test;
using ::testing::HasSubstr;

namespace {

// The tune unit tests' tiny scenario (4 layers, 4 heads, 8 GPUs, analytical network); `memory_gib`
// sets the GPU's memory so that some configurations do not fit.
std::string tune_scenario_file(const std::string& name, double memory_gib) {
  return temp_file("tune_" + name + ".yaml", tune_test::tiny_scenario_text(memory_gib));
}

// A smaller space for the tests that only look at the output's shape.
const char* const kSmallSpace = " --space parallelism.zero_stage=1 --space training.micro_batch_size=1,2";

// Table rows: lines that start with a rank number after the header line.
int table_rows(const std::string& out) {
  std::istringstream in(out);
  std::string line;
  bool in_table = false;
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.rfind("rank", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    if (line.empty()) break;
    ++rows;
  }
  return rows;
}

}  // namespace

TEST(TuneCli, PrintsCountsTheTopNTableAndWhyEachBeatsTheNext) {
  const std::string s = tune_scenario_file("table", 4.0);
  const Result r = run("tune " + s + " --top 3 --threads 2" + kSmallSpace);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr(" candidates: "));
  EXPECT_THAT(r.out, HasSubstr(" out of memory, "));
  EXPECT_THAT(r.out, HasSubstr(" dominated, "));
  EXPECT_THAT(r.out, HasSubstr(" simulated"));
  EXPECT_EQ(table_rows(r.out), 3);
  EXPECT_THAT(r.out, HasSubstr("#1 vs #2: "));
  EXPECT_THAT(r.out, HasSubstr("#3 vs #4: "));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("#4 vs #5")));
}

TEST(TuneCli, JsonHasTheCountsTheRankedListAndTheExplanations) {
  const std::string s = tune_scenario_file("json", 4.0);
  const Result r = run("tune " + s + " --json --top 2 --threads 2" + kSmallSpace);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& c = j["counts"];
  EXPECT_EQ(c["candidates"].get<int>(), c["invalid"].get<int>() + c["tp_beyond_scale_up"].get<int>() +
                                            c["out_of_memory"].get<int>() + c["dominated"].get<int>() +
                                            c["simulated"].get<int>());
  ASSERT_EQ(j["ranked"].size(), 2u);
  const auto& best = j["ranked"][0];
  EXPECT_EQ(best["rank"], 1);
  EXPECT_EQ(best["objective"].get<double>(), best["result"]["tokens_per_s"].get<double>());
  EXPECT_LE(best["result"]["memory"]["peak"].get<double>(), 4.0);
  EXPECT_GE(best["objective"].get<double>(), j["ranked"][1]["objective"].get<double>());
  // The overrides reproduce the configuration with `trainsim run`.
  std::string sets;
  for (const auto& o : best["overrides"]) sets += " --set " + o.get<std::string>();
  const Result run_again = run("run " + s + sets + " --json --no-timing");
  ASSERT_EQ(run_again.status, 0) << run_again.out;
  EXPECT_EQ(nlohmann::json::parse(run_again.out)["iteration_time_s"], best["result"]["iteration_time_s"]);
  ASSERT_EQ(j["explanations"].size(), 2u);
  EXPECT_EQ(j["explanations"][0]["versus"], 2);
  EXPECT_FALSE(j["explanations"][0]["text"].get<std::string>().empty());
  EXPECT_EQ(j["objective"]["name"], "tokens_per_s");
}

TEST(TuneCli, TheThreadCountDoesNotChangeTheOutput) {
  const std::string s = tune_scenario_file("threads", 4.0);
  const Result one = run("tune " + s + " --threads 1" + kSmallSpace);
  const Result two = run("tune " + s + " --threads 2" + kSmallSpace);
  ASSERT_EQ(one.status, 0) << one.out;
  EXPECT_EQ(one.out, two.out);
  const Result json_one = run("tune " + s + " --json --threads 1" + kSmallSpace);
  const Result json_two = run("tune " + s + " --json --threads 2" + kSmallSpace);
  ASSERT_EQ(json_one.status, 0) << json_one.out;
  EXPECT_EQ(json_one.out, json_two.out);
}

TEST(TuneCli, CostAndTimeToTrainObjectives) {
  const std::string s = tune_scenario_file("objectives", 80.0);
  const Result cost = run("tune " + s + " --json --top 1 --objective cost --gpu-hour-price 2" + kSmallSpace);
  ASSERT_EQ(cost.status, 0) << cost.out;
  const auto jc = nlohmann::json::parse(cost.out);
  const double tps = jc["ranked"][0]["result"]["tokens_per_s"].get<double>();
  EXPECT_NEAR(jc["ranked"][0]["objective"].get<double>(), 8 * 2.0 / 3600 / tps * 1e6, 1e-9);
  EXPECT_EQ(jc["objective"]["goal"], "minimise");
  const Result ttt = run("tune " + s + " --json --top 1 --objective time_to_train --tokens 1T" + kSmallSpace);
  ASSERT_EQ(ttt.status, 0) << ttt.out;
  const auto jt = nlohmann::json::parse(ttt.out);
  EXPECT_NEAR(jt["ranked"][0]["objective"].get<double>(),
              1e12 / jt["ranked"][0]["result"]["tokens_per_s"].get<double>() / 3600, 1e-6);
  // With a fixed GPU count both order like throughput: the same winner.
  EXPECT_EQ(jc["ranked"][0]["configuration"], jt["ranked"][0]["configuration"]);
}

// The run-level objectives rank by each configuration's run plan (`trainsim plan` per candidate).
TEST(TuneCli, DaysAndEnergyObjectivesRankTheWholeRun) {
  const std::string s = tune_scenario_file("run-level", 80.0);
  const std::string args =
      " --json --top 2 --tokens 1e10 --set training.resilience.storage_GBps=5" + std::string(kSmallSpace);
  for (const char* objective : {"days", "energy"}) {
    SCOPED_TRACE(objective);
    const Result r = run("tune " + s + " --objective " + objective + args);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["objective"]["name"], objective);
    EXPECT_EQ(j["objective"]["run_level"], true);
    EXPECT_EQ(j["objective"]["tokens"], 1e10);
    const auto& first = j["ranked"][0];
    EXPECT_DOUBLE_EQ(
        first["objective"].get<double>(),
        first["result"]["run_plan"][std::string(objective) == "days" ? "days" : "energy_mwh"].get<double>());
    EXPECT_LE(first["objective"].get<double>(), j["ranked"][1]["objective"].get<double>());
  }
}

TEST(TuneCli, TensorBeyondTheScaleUpDomainIsCountedAndCanBeAllowed) {
  const std::string s = tune_scenario_file("scaleup", 80.0);
  const std::string args = " --json --top 1 --set cluster.scale_up.domain_size=2 --space parallelism.tensor=1,2,4" +
                           std::string(kSmallSpace) + " --space parallelism.pipeline=1";
  const Result pruned = run("tune " + s + args);
  ASSERT_EQ(pruned.status, 0) << pruned.out;
  // tensor 4 x 2 micro-batch sizes (pipeline 1, ZeRO 1, SP on) x 3 recompute = 6 candidates beyond the domain.
  EXPECT_EQ(nlohmann::json::parse(pruned.out)["counts"]["tp_beyond_scale_up"], 6);
  const Result allowed = run("tune " + s + args + " --allow-tp-beyond-scale-up");
  ASSERT_EQ(allowed.status, 0) << allowed.out;
  EXPECT_EQ(nlohmann::json::parse(allowed.out)["counts"]["tp_beyond_scale_up"], 0);
}

TEST(TuneCli, NothingFitsExitsOneWithTheCountsAndTheSmallestShortfall) {
  const std::string s = tune_scenario_file("nofit", 1.0);
  const Result r = run("tune " + s + kSmallSpace);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr(" candidates: "));
  EXPECT_THAT(r.out, HasSubstr("no configuration fits in memory"));
  EXPECT_THAT(r.out, HasSubstr("GiB short"));
}

TEST(TuneCli, BadFlagsExitOneNamingTheFlag) {
  const std::string s = tune_scenario_file("bad", 80.0);
  const struct {
    const char* args;
    const char* names;
  } cases[] = {
      {" --objective cost", "--gpu-hour-price"},
      {" --objective cost --gpu-hour-price -3", "--gpu-hour-price"},
      {" --objective time_to_train", "--tokens"},
      {" --objective time_to_train --tokens lots", "--tokens"},
      {" --objective days", "--tokens"},
      {" --objective energy --tokens 1T --gpu-hour-price 2", "--gpu-hour-price"},
      {" --objective days --tokens 1T", "training.resilience.storage_GBps"},
      {" --tokens 1T", "--tokens"},
      {" --objective fastest", "--objective"},
      {" --top 0", "--top"},
      {" --top three", "--top"},
      {" --threads -1", "--threads"},
      {" --space parallelism.tensr=1,2", "--space"},
      {" --space parallelism.tensor=0", "--space"},
      {" --space parallelism.data=2", "--space"},
      {" --set parallelism.data=2", "--set"},
  };
  for (const auto& c : cases) {
    const Result r = run("tune " + s + c.args);
    EXPECT_EQ(r.status, 1) << c.args << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr(c.names)) << c.args;
    EXPECT_THAT(r.out, HasSubstr("error: ")) << c.args;
  }
  const Result missing = run("tune /nonexistent/scenario.yaml");
  EXPECT_EQ(missing.status, 1) << missing.out;
  EXPECT_THAT(missing.out, HasSubstr("/nonexistent/scenario.yaml"));
}
