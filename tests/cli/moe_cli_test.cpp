// Mixture-of-experts examples end to end: Mixtral 8x7B on 64 H100 runs with both network models,
// its expert all-to-alls appear in the comm table and in the expert-parallel breakdown row.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

TEST(MoeCli, MixtralRunsWithBothNetworkModels) {
  for (const char* net : {"analytical", "flow"}) {
    const Result r =
        run("run " + example("mixtral-8x7b-64-h100.yaml") + " --json --set simulation.network_model=" + net);
    ASSERT_EQ(r.status, 0) << r.out;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_GT(j["iteration_time_s"].get<double>(), 0);
    bool ep_alltoall = false;
    for (const auto& c : j["comm"]) ep_alltoall = ep_alltoall || (c["kind"] == "alltoall" && c["group"] == "ep");
    EXPECT_TRUE(ep_alltoall) << net;
    EXPECT_GE(j["breakdown"]["exposed_comm_by_group"]["ep"].get<double>(), 0);
    const auto& b = j["breakdown"];
    const double sum = b["compute"].get<double>() + b["exposed_comm"].get<double>() + b["bubble"].get<double>() +
                       b["optimizer"].get<double>() + b["other"].get<double>();
    EXPECT_NEAR(sum, j["iteration_time_s"].get<double>(), 1e-6);
  }
}

TEST(MoeCli, ExpertParallelMustDivideTheExperts) {
  const Result r = run("run " + example("mixtral-8x7b-64-h100.yaml") + " --set parallelism.expert=3");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("parallelism.expert"), std::string::npos) << r.out;
}
