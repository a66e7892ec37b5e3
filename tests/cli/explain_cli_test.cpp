// `trainsim run --explain`: the critical rank's ten longest ops and collectives with their share of the
// iteration and where each time came from.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

TEST(ExplainCli, TenLongestOpsAndCollectivesOfTheCriticalRank) {
  const Result r = run("run " + example("gpt3-175b-1024-h100.yaml") + " --json --explain");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  const auto& e = j["explain"];
  EXPECT_EQ(e["rank"].get<int>(), j["critical_rank"].get<int>());
  const double iteration = j["iteration_time_s"].get<double>();
  for (const char* part : {"ops", "collectives"}) {
    const auto& rows = e[part];
    ASSERT_EQ(rows.size(), 10u) << part;
    double previous = 1e300, shares = 0;
    for (const auto& row : rows) {
      const double t = row["time_s"].get<double>();
      EXPECT_LE(t, previous) << part << ": longest first";
      previous = t;
      EXPECT_NEAR(row["share"].get<double>(), t / iteration, 1e-12);
      EXPECT_LE(row["exposed_s"].get<double>(), t + 1e-12);
      EXPECT_GT(row["count"].get<int>(), 0);
      shares += row["share"].get<double>();
    }
    if (std::string(part) == "ops") {
      // Kernels run one at a time on the compute stream: their shares cannot add up to more than the iteration.
      EXPECT_LE(shares, 1.0);
      EXPECT_EQ(rows[0]["source"], "roofline");
    } else {
      EXPECT_EQ(rows[0]["source"], "nccl-model");
    }
  }
  // GPT-3's MLP GEMMs are among the longest ops: fc1 runs once per layer and micro-batch on a stage.
  bool fc1 = false;
  for (const auto& row : e["ops"]) fc1 = fc1 || row["name"] == "fc1";
  EXPECT_TRUE(fc1);
}

TEST(ExplainCli, OnlyWhenAsked) {
  const Result r = run("run " + example("tiny-8-h100.yaml") + " --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_FALSE(nlohmann::json::parse(r.out).contains("explain"));
  const Result text = run("run " + example("tiny-8-h100.yaml") + " --explain");
  ASSERT_EQ(text.status, 0);
  EXPECT_NE(text.out.find("Longest ops (rank"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("Longest collectives (rank"), std::string::npos) << text.out;
}
