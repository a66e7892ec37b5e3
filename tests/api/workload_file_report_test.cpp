// What the report says of a workload file run on a scenario without a model block: the parallel sizes the file's
// header states (AICB), unknown ones where it states none (a Chakra trace), and no throughput (nothing counts tokens
// or FLOPs without a model).
#include <gtest/gtest.h>

#include <string>

#include "report/reports.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

std::string example(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name; }

RunResult run_without_model(const std::string& workload) {
  const Scenario s =
      parse_scenario("cluster: {gpu: H100-SXM, num_gpus: 8, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}\n",
                     "cluster.yaml", {}, ScenarioNeeds::JobIfModel);
  RunOptions o;
  o.workload_file = workload;
  return run_scenario(s, o).result;
}

// The example's header: model_parallel_NPU_group: 2, pp: 1, ga: 4, all_gpus: 8, so DP = 8 / (2 x 1) = 4.
TEST(WorkloadFileReport, AicbHeaderGivesTheParallelSizes) {
  const RunResult r = run_without_model(example("aicb-gpt-1.3b-tp2-8gpu.txt"));
  EXPECT_TRUE(r.parallelism_known);
  EXPECT_EQ(r.tensor, 2);
  EXPECT_EQ(r.pipeline, 1);
  EXPECT_EQ(r.data, 4);
  EXPECT_EQ(r.context, 1);
  EXPECT_EQ(r.micro_batches, 4);
  EXPECT_FALSE(r.throughput_known);
  EXPECT_EQ(r.model_name, "");
  EXPECT_EQ(r.precision, "");  // the training block is not read
  EXPECT_GT(r.iteration_time_s, 0);
  EXPECT_TRUE(to_json(r)["mfu"].is_null());
}

// A Chakra trace has no header: the sizes are unknown, not the scenario's defaults.
TEST(WorkloadFileReport, ChakraTraceLeavesTheSizesUnknown) {
  const RunResult r = run_without_model(example("chakra/tiny-8-h100"));
  EXPECT_FALSE(r.parallelism_known);
  EXPECT_FALSE(r.throughput_known);
  EXPECT_GT(r.iteration_time_s, 0);
}

// With a model block nothing changes: the scenario's sizes and its throughput.
TEST(WorkloadFileReport, WithAModelTheScenarioDescribesTheJob) {
  RunOptions o;
  o.workload_file = example("aicb-gpt-1.3b-tp2-8gpu.txt");
  const RunResult r = run_scenario(load_scenario(example("tiny-8-h100.yaml")), o).result;
  EXPECT_TRUE(r.parallelism_known);
  EXPECT_TRUE(r.throughput_known);
  EXPECT_EQ(r.data, 4);
  EXPECT_GT(r.mfu, 0);
  EXPECT_EQ(r.precision, "bf16");
}

}  // namespace
