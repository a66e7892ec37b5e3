// `trainsim plan`: the whole run from the command line, as a planner asks "how many days for 15T tokens?".
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

const std::string kPlanFlags = " --set training.resilience.storage_GBps=100";

TEST(PlanCli, TokensGiveTheDaysAndWhereTheTimeGoes) {
  const Result r = run("plan " + kTinyExample + " --tokens 2B" + kPlanFlags);
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* expected : {"expected wall-clock time", "goodput", "checkpoint stalls", "interruptions:", "gpu",
                               "software", "Young", "energy:", "MWh"})
    EXPECT_NE(r.out.find(expected), std::string::npos) << expected << "\n" << r.out;
}

TEST(PlanCli, JsonAddsUpAndTrialsAreDeterministic) {
  const std::string args = "plan " + kTinyExample + " --iterations 1M --trials 50 --seed 3 --json" + kPlanFlags;
  const Result a = run(args), b = run(args);
  ASSERT_EQ(a.status, 0) << a.out;
  EXPECT_EQ(a.out, b.out);
  const auto j = nlohmann::json::parse(a.out);
  EXPECT_DOUBLE_EQ(j["iterations"].get<double>(), 1e6);
  const auto& t = j["time_s"];
  const double parts = t["training"].get<double>() + t["stragglers"].get<double>() +
                       t["checkpoint_stalls"].get<double>() + t["lost_work"].get<double>() +
                       t["restarts"].get<double>() + t["spare_wait"].get<double>();
  EXPECT_NEAR(parts, t["wall"].get<double>(), 1e-6 * parts);
  EXPECT_NEAR(j["goodput"].get<double>(), t["training"].get<double>() / t["wall"].get<double>(), 1e-12);
  EXPECT_EQ(j["monte_carlo"]["trials"].get<int>(), 50);
  EXPECT_LE(j["monte_carlo"]["p10_days"].get<double>(), j["monte_carlo"]["p90_days"].get<double>());
  const Result other = run("plan " + kTinyExample + " --iterations 1M --trials 50 --seed 4 --json" + kPlanFlags);
  EXPECT_NE(a.out, other.out);
}

TEST(PlanCli, TheRunsSizeIsGivenOnceAndWellFormed) {
  for (const std::string bad : {"", " --tokens 1T --days 3", " --tokens 15X", " --tokens -5", " --iterations 0"}) {
    const Result r = run("plan " + kTinyExample + bad + kPlanFlags);
    EXPECT_EQ(r.status, 1) << bad << "\n" << r.out;
    EXPECT_NE(r.out.find("error"), std::string::npos) << r.out;
  }
  const Result r = run("plan " + kTinyExample + " --tokens 15X" + kPlanFlags);
  EXPECT_NE(r.out.find("--tokens"), std::string::npos) << r.out;
}

TEST(PlanCli, CheckpointsWithoutAStorageBandwidthNameTheKey) {
  const Result r = run("plan " + kTinyExample + " --tokens 1B");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("training.resilience.storage_GBps"), std::string::npos) << r.out;
  const Result none =
      run("plan " + kTinyExample + " --tokens 1B --set training.resilience.checkpoint_interval_min=none");
  EXPECT_EQ(none.status, 0) << none.out;
  EXPECT_NE(none.out.find("checkpoints: none"), std::string::npos) << none.out;
}

TEST(PlanCli, TheRunReportGainsEnergyPerIteration) {
  const Result r = run("run " + kTinyExample + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.contains("energy")) << r.out;
  const double tokens_per_iteration = j["tokens_per_s"].get<double>() * j["iteration_time_s"].get<double>();
  EXPECT_NEAR(j["energy"]["tokens_per_joule"].get<double>() * j["energy"]["joules_per_iteration"].get<double>(),
              tokens_per_iteration, 1e-6 * tokens_per_iteration);
  const double w = j["energy"]["gpu_average_w"].get<double>();
  EXPECT_GE(w, j["energy"]["gpu_idle_w"].get<double>());
  EXPECT_LE(w, j["energy"]["gpu_compute_w"].get<double>());
  EXPECT_NE(run("run " + kTinyExample).out.find("tokens per joule"), std::string::npos);
}

}  // namespace
