// trainsim -> AICB file -> trainsim: the iteration time comes back within 1%; the hand-written AICB example runs on a
// scenario's cluster; files that do not fit the cluster are refused with FILE:LINE.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/examples.hpp"
#include "trainsim/trainsim.hpp"
#include "workload/aicb/aicb_table.hpp"

namespace trainsim {
namespace {

using test::example;

double iteration(const Scenario& s, const std::string& workload = "") {
  RunOptions o;
  o.workload_file = workload;
  return run_scenario(s, o).result.iteration_time_s;
}

double round_trip_error(const std::vector<std::string>& overrides, const std::string& tag) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), overrides);
  const std::string path = testing::TempDir() + "/round_trip_" + tag + ".txt";
  export_workload(s, "aicb", path);
  const double original = iteration(s), imported = iteration(s, path);
  EXPECT_GT(original, 0);
  return std::abs(imported - original) / original;
}

TEST(AicbRoundTrip, TensorAndDataParallel) { EXPECT_LT(round_trip_error({}, "tp"), 0.01); }

TEST(AicbRoundTrip, PipelineWithDistributedOptimizer) {
  EXPECT_LT(round_trip_error({"parallelism.pipeline=2", "parallelism.zero_stage=1",
                              "parallelism.overlap_grad_reduce=true", "parallelism.overlap_param_gather=true"},
                             "pp"),
            0.01);
}

TEST(AicbRoundTrip, InterleavedPipeline) {
  EXPECT_LT(round_trip_error({"parallelism.pipeline=2", "parallelism.virtual_pipeline=2"}, "vpp"), 0.01);
}

TEST(AicbRoundTrip, ExportWritesOneTablePerStageWithTheHeadersSizes) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {"parallelism.pipeline=2"});
  const std::string path = testing::TempDir() + "/stages.txt";
  export_workload(s, "aicb", path);
  const AicbFile f = read_aicb_file(path);
  EXPECT_EQ(f.header.tp, 2);
  EXPECT_EQ(f.header.pp, 2);
  EXPECT_EQ(f.header.ga, s.micro_batches_per_iteration());
  EXPECT_EQ(f.header.all_gpus.value_or(0), 8);
  EXPECT_GT(f.header.pp_comm, 0);
  EXPECT_EQ(f.tables.size(), 2u);
}

TEST(AicbRoundTrip, UnknownFormatIsRefused) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"));
  try {
    export_workload(s, "astra", testing::TempDir() + "/x.txt");
    FAIL() << "no error";
  } catch (const Error& e) { EXPECT_EQ(std::string(e.what()), "--format astra: unknown; known formats: aicb, chakra"); }
}

// The hand-written file in AICB's own shape (untagged: prefix, ga micro-batch blocks, suffix) runs on tiny-8's node.
TEST(AicbExample, RunsOnTheScenariosCluster) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"));
  const std::string path = example("aicb-gpt-1.3b-tp2-8gpu.txt");
  const AicbFile f = read_aicb_file(path);
  double compute_s = 0;  // the file's compute, one rank, no overlap: the iteration cannot be shorter
  for (const AicbLine& l : f.tables.at(0).lines)
    compute_s += static_cast<double>(l.fwd.time_ns + l.ig.time_ns + l.wg.time_ns) * 1e-9;
  const double t = iteration(s, path);
  EXPECT_GE(t, compute_s);
  EXPECT_LT(t, compute_s * 2);  // the TP and DP collectives of a 1.3B model on one NVLink node are far from that
}

// Without a model block the scenario is only the cluster the file runs on.
TEST(AicbExample, RunsOnAScenarioWithoutAModel) {
  const Scenario s =
      parse_scenario("cluster: {gpu: H100-SXM, num_gpus: 8, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}\n",
                     "cluster.yaml", {}, ScenarioNeeds::JobIfModel);
  EXPECT_FALSE(s.has_training_job);
  RunOptions o;
  o.workload_file = example("aicb-gpt-1.3b-tp2-8gpu.txt");
  const RunResult r = run_scenario(s, o).result;
  const Scenario with_model = load_scenario(example("tiny-8-h100.yaml"));
  EXPECT_DOUBLE_EQ(r.iteration_time_s, iteration(with_model, o.workload_file));
  EXPECT_EQ(r.tokens_per_s, 0);
}

std::string import_error(const std::string& text, const std::vector<std::string>& overrides = {}) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), overrides);
  // A folder per test: ctest runs tests in parallel processes, which must not share the file.
  const std::string dir = testing::TempDir() + "/aicb_" + testing::UnitTest::GetInstance()->current_test_info()->name();
  std::filesystem::create_directories(dir);
  const std::string path = dir + "/bad.txt";
  std::ofstream(path) << text;
  try {
    iteration(s, path);
  } catch (const Error& e) {
    const std::string w = e.what();
    return w.substr(w.find("bad.txt"));
  }
  return "(no error)";
}

const char* kLine = "x -1 1000 ALLREDUCE 4096 1000 NONE 0 1000 NONE 0 100\n";
const std::vector<std::string> kTwoMicroBatches = {"training.global_batch_size=16"};  // tiny-8: ga 2

TEST(AicbImport, FileMustFitTheCluster) {
  EXPECT_EQ(import_error(std::string("HYBRID_TRANSFORMER model_parallel_NPU_group: 4 ga: 4 all_gpus: 8\n1\n") + kLine),
            "bad.txt:1: model_parallel_NPU_group: 4 but the scenario's parallelism.tensor is 2 (leave the model block "
            "out to run the file's job on the scenario's cluster alone)");
  EXPECT_EQ(import_error(std::string("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 1 all_gpus: 16\n1\n") + kLine),
            "bad.txt:1: all_gpus: 16 but the scenario's cluster has 8 GPUs (cluster.num_gpus)");
  EXPECT_EQ(import_error(std::string("HYBRID_TRANSFORMER model_parallel_NPU_group: 3 ga: 1 all_gpus: 8\n1\n") + kLine),
            "bad.txt:1: model_parallel_NPU_group: 3 x pp: 1 does not divide all_gpus: 8");
}

TEST(AicbImport, TablesAndMicroBatchesMustAddUp) {
  const std::string pp2 = "HYBRID_TRANSFORMER model_parallel_NPU_group: 2 pp: 2 ga: 2 all_gpus: 8 pp_comm: 1024\n";
  EXPECT_EQ(import_error(pp2 + "2\n" + kLine + kLine + "2\n" + kLine + kLine + "2\n" + kLine + kLine, kTwoMicroBatches),
            "bad.txt:8: 3 tables for pp: 2 (one table for every stage, or one per stage)");
  EXPECT_NE(import_error("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 2 all_gpus: 8\n3\n"
                         "a -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nb -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"
                         "c -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n",
                         kTwoMicroBatches)
                .find("bad.txt:2: cannot find ga: 2 repetitions"),
            std::string::npos);
  EXPECT_EQ(import_error("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 2 all_gpus: 8\n2\n"
                         "a@mb0 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\na@mb2 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n",
                         kTwoMicroBatches),
            "bad.txt:4: micro-batch 2 of 'a@mb2' is not below ga: 2");
  EXPECT_EQ(import_error("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 2 all_gpus: 8\n3\n"
                         "a@mb0 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\na@mb1 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n"
                         "b@mb0 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n",
                         kTwoMicroBatches),
            "bad.txt:5: the lines of micro-batch 0 chunk 0 are not together (they started before)");
  EXPECT_EQ(import_error("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 2 all_gpus: 8\n1\n"
                         "a@mb0 -1 1 NONE 0 1 NONE 0 1 NONE 0 100\n",
                         kTwoMicroBatches),
            "bad.txt:2: no lines for micro-batch 1 (ga: 2)");
  EXPECT_EQ(import_error("HYBRID_TRANSFORMER model_parallel_NPU_group: 2 ga: 1 all_gpus: 8\n2\n"
                         "a -1 1 NONE 0 1 NONE 0 1 NONE 0 100\nb 1 1 NONE 0 1 NONE 0 1 NONE 0 100\n",
                         {"training.global_batch_size=8"}),  // tiny-8: ga 1
            "bad.txt:4: depen 1 does not name an earlier line of this table (lines count from 0)");
}

}  // namespace
}  // namespace trainsim
