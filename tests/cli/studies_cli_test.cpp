// The published-study scenarios of examples/studies/ (docs/studies/README.md): each loads and
// simulates its cheapest point with the parallel split the study relies on, the invalid and
// out-of-memory points the study's tables show are still rejected the same way, the regeneration
// script refuses a missing build, and every plot the README shows is committed. About a second in all.
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

std::string study(const std::string& name) { return example("studies/" + name); }

// `trainsim run SCENARIO ARGS --json`, which must succeed.
nlohmann::json run_json(const std::string& scenario, const std::string& args) {
  const Result r = run("run " + scenario + " " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return r.status == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

// The size of the first communicator of `group` ("tp", "dp") in the result's comm table; 0 if none.
int group_size(const nlohmann::json& j, const std::string& group) {
  for (const auto& c : j["comm"])
    if (c["group"] == group) return c["group_size"].get<int>();
  return 0;
}

// Checks every study relies on: it simulated on the analytical network, it fits, and its throughput
// is the scenario's global batch of `seq`-token sequences per iteration.
void expect_sane(const nlohmann::json& j, double global_batch, double seq, int num_gpus) {
  ASSERT_TRUE(j.contains("iteration_time_s"));
  EXPECT_EQ(j["simulation"]["network_model"], "analytical");
  EXPECT_TRUE(j["memory"]["fits"].get<bool>());
  const double t = j["iteration_time_s"].get<double>();
  ASSERT_GT(t, 0.0);
  EXPECT_NEAR(j["tokens_per_s"].get<double>(), global_batch * seq / t, 1e-6 * global_batch * seq / t);
  EXPECT_NEAR(j["tokens_per_s_per_gpu"].get<double>() * num_gpus, j["tokens_per_s"].get<double>(),
              1e-6 * j["tokens_per_s"].get<double>());
  EXPECT_GT(j["mfu"].get<double>(), 0.0);
  EXPECT_LT(j["mfu"].get<double>(), 1.0);
}

TEST(StudiesCli, NicStudySimulatesH20AtTheSlowestNic) {
  // Study (a)'s slowest point: H20 at 100 Gb/s, TP 8 PP 8, so DP = 1024 / 64 = 16.
  const auto j = run_json(study("simai-gpt3-175b-1024.yaml"), "--set cluster.gpu=H20 --set cluster.nic_gbps=100");
  expect_sane(j, 1536, 2048, 1024);
  EXPECT_EQ(group_size(j, "tp"), 8);
  EXPECT_EQ(group_size(j, "dp"), 16);
  // The study is about the gradient traffic on the NICs: it must be there to be measured.
  EXPECT_GT(j["breakdown"]["exposed_comm_by_group"]["dp"].get<double>(), 0.0);
}

TEST(StudiesCli, TensorParallelStudiesSimulateTpEightInASixteenGpuDomain) {
  // Study (b): data parallelism is derived, 1024 / (TP x PP), with PP fixed per model.
  for (const auto& [name, pp] : {std::pair{"gpt3-13b", 1}, std::pair{"llama-65b", 4}, std::pair{"gpt3-175b", 8}}) {
    SCOPED_TRACE(name);
    const auto j = run_json(study(std::string("simai-tp-") + name + ".yaml"),
                            "--set parallelism.tensor=8 --set cluster.scale_up.domain_size=16");
    expect_sane(j, 1024, 2048, 1024);
    EXPECT_EQ(group_size(j, "tp"), 8);
    EXPECT_EQ(group_size(j, "dp"), 1024 / (8 * pp));
  }
}

TEST(StudiesCli, TensorParallelStudyRowsThatCannotRunSayWhy) {
  // The `inv` and `oom` cells of docs/studies/README.md's tables.
  const Result heads = run("run " + study("simai-tp-gpt3-13b.yaml") + " --set parallelism.tensor=16");
  EXPECT_NE(heads.status, 0);
  EXPECT_THAT(heads.out, HasSubstr("parallelism.tensor"));
  const Result oom = run("run " + study("simai-tp-gpt3-175b.yaml") + " --set parallelism.tensor=2");
  EXPECT_NE(oom.status, 0);
  EXPECT_THAT(oom.out, HasSubstr("does not fit"));
}

TEST(StudiesCli, FrontierStudySimulatesItsSmallestTensorParallelPoint) {
  // Study (c): TP 2 x PP 4 x DP 2 = 16 GCDs of MI250X, two Frontier nodes on the dragonfly.
  const auto j = run_json(study("frontier-gpt3-22b.yaml"), "--set parallelism.tensor=2 --set cluster.num_gpus=16");
  expect_sane(j, 64, 2048, 16);
  EXPECT_EQ(group_size(j, "tp"), 2);
  EXPECT_EQ(group_size(j, "dp"), 2);
  // num_gpus must move with the parallel size: the study's DP stays 2 only if they agree.
  const Result mismatch = run("run " + study("frontier-gpt3-22b.yaml") + " --set parallelism.tensor=2");
  EXPECT_NE(mismatch.status, 0);
  EXPECT_THAT(mismatch.out, HasSubstr("parallelism.data"));
}

TEST(StudiesCli, RunStudiesRefusesABuildDirectoryWithoutTrainsim) {
  const fs::path empty = fs::temp_directory_path() / "trainsim_cli_studies_no_build";
  fs::create_directories(empty);
  const Result r = run_shell(std::string(TRAINSIM_SOURCE_DIR) + "/examples/studies/run-studies " + empty.string());
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("usage: run-studies [BUILD_DIR]"));
  EXPECT_THAT(r.out, HasSubstr(empty.string()));
}

TEST(StudiesCli, EveryPlotAndFileTheReadmeLinksIsCommitted) {
  const fs::path dir = fs::path(TRAINSIM_SOURCE_DIR) / "docs" / "studies";
  std::ifstream f(dir / "README.md");
  ASSERT_TRUE(f) << "docs/studies/README.md is missing";
  std::stringstream s;
  s << f.rdbuf();
  const std::string text = s.str();
  // Markdown images and links to files, relative to the README: ![..](a.svg), [..](../../examples/x.yaml).
  const std::regex link(R"(\]\(([A-Za-z0-9_./-]+\.(svg|csv|txt|md|yaml))\))");
  int images = 0, csvs = 0, scenarios = 0;
  for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
    images += (*it)[2] == "svg";
    csvs += (*it)[2] == "csv";
    scenarios += (*it)[2] == "yaml";
    EXPECT_TRUE(fs::exists(dir / (*it)[1].str())) << (*it)[1].str() << " is linked from docs/studies/README.md";
  }
  EXPECT_GE(images, 8);  // (a) two plots, (b) one per model, (c) three
  EXPECT_GE(csvs, 3);
  EXPECT_GE(scenarios, 5);  // the five study scenarios
}

}  // namespace
