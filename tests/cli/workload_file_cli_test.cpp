// `trainsim export --format aicb` and `trainsim run --workload`: the round trip from the command line, and a bad file
// reported as FILE:LINE with exit status 1.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {
double iteration(const Result& r) { return nlohmann::json::parse(r.out)["iteration_time_s"].get<double>(); }
}  // namespace

TEST(WorkloadFileCli, ExportThenRunGivesTheSameIteration) {
  const std::string path = (std::filesystem::temp_directory_path() / "trainsim_cli_tiny_aicb.txt").string();
  const Result e = run("export " + example("tiny-8-h100.yaml") + " --format aicb -o " + path);
  ASSERT_EQ(e.status, 0) << e.out;
  const Result a = run("run " + example("tiny-8-h100.yaml") + " --json --no-timing");
  const Result b = run("run " + example("tiny-8-h100.yaml") + " --json --no-timing --workload " + path);
  ASSERT_EQ(a.status, 0) << a.out;
  ASSERT_EQ(b.status, 0) << b.out;
  EXPECT_NEAR(iteration(b), iteration(a), 0.01 * iteration(a));
}

TEST(WorkloadFileCli, UnknownFormatListsTheKnownOnes) {
  const Result r = run("export " + example("tiny-8-h100.yaml") + " --format astra -o /dev/null");
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("error: --format astra: unknown; known formats: aicb, chakra"), std::string::npos) << r.out;
}

TEST(WorkloadFileCli, BadLineIsReportedWithItsFileAndLine) {
  const std::string path =
      temp_file("bad_aicb.txt",
                "HYBRID_TRANSFORMER_FWD_IN_BCKWD model_parallel_NPU_group: 2 ep: 1 pp: 1 vpp: 1 ga: 4 all_gpus: 8\n"
                "1\nattention_row -1 10 ALLREDUCE_XP 64 10 NONE 0 10 NONE 0 100\n");
  const Result r = run("run " + example("tiny-8-h100.yaml") + " --workload " + path);
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find(path + ":3: unknown forward collective 'ALLREDUCE_XP'"), std::string::npos) << r.out;
}

TEST(WorkloadFileCli, ScenarioWithoutAModelRunsTheFile) {
  const std::string scenario = temp_file("cluster_only.yaml",
                                         "cluster: {gpu: H100-SXM, num_gpus: 8, gpus_per_node: 8, nics_per_node: 8, "
                                         "nic_gbps: 400}\n");
  const Result r = run("run " + scenario + " --json --no-timing --workload " + example("aicb-gpt-1.3b-tp2-8gpu.txt"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_GT(iteration(r), 0.05);
  const Result no_file = run("run " + scenario);
  EXPECT_EQ(no_file.status, 1);  // without --workload the model block is required as before
}
