// Commands ask for what they use: nccl-test and topo need the cluster, not a training job, so a
// file with only `cluster:` (and `nccl:`) serves them, and a job error they would never meet does
// not stop them.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;

const char* const kCluster =
    "cluster:\n  gpu: H100-SXM\n  num_gpus: 16\n  gpus_per_node: 8\n  nics_per_node: 8\n  nic_gbps: 400\n";

TEST(ScenarioNeedsCli, NcclTestTakesAClusterWithoutAJob) {
  const std::string file = temp_file("needs_cluster_nccl.yaml", std::string(kCluster) + "nccl:\n  NCCL_ALGO: Tree\n");
  const Result r = run("nccl-test " + file + " -b 64M -e 64M --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["rows"].size(), 1u) << r.out;
  EXPECT_EQ(j["rows"][0]["algorithm"], "Tree");  // the nccl block is read
  EXPECT_EQ(j["gpus"], 16);
}

TEST(ScenarioNeedsCli, TopoTakesAClusterWithoutAJob) {
  const std::string file = temp_file("needs_cluster_topo.yaml", kCluster);
  const Result r = run("topo " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("16 GPUs on 2 nodes"));
}

TEST(ScenarioNeedsCli, AJobErrorDoesNotStopTopoOrNcclTest) {
  // 33 sequences do not divide into micro-batches: run refuses, topo and nccl-test do not need it.
  std::ifstream in(example("tiny-8-h100.yaml"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t at = text.find("global_batch_size: 32");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, std::string("global_batch_size: 32").size(), "global_batch_size: 33");
  const std::string file = temp_file("needs_bad_batch.yaml", text);
  Result r = run("run " + file);
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_THAT(r.out, HasSubstr("training.global_batch_size"));
  r = run("topo " + file);
  EXPECT_EQ(r.status, 0) << r.out;
  r = run("nccl-test " + file);
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(ScenarioNeedsCli, SettingAJobKeyForACommandThatDoesNotReadItIsAnError) {
  const std::string file = temp_file("needs_set_job.yaml", kCluster);
  for (const char* command : {"topo", "nccl-test"}) {
    const Result r = run(std::string(command) + " " + file + " --set parallelism.tensor=4");
    EXPECT_EQ(r.status, 1) << command << "\n" << r.out;
    EXPECT_THAT(r.out, HasSubstr("error: --set parallelism.tensor=4: parallelism.tensor: this command does not read "
                                 "the parallelism block"));
  }
}

}  // namespace
