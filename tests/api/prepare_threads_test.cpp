// RunOptions::threads / simulation.threads: the threads that build a run's communicators before its event loop.
// The result is the same, byte for byte, on one thread or several, analytical or flow-level.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "trainsim/report.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

// GPT-3 1.3B on four 8-GPU nodes, TP 2 x PP 2 x DP 8: TP, PP, DP and embedding groups, most across nodes, and
// their copies on other local GPUs (other NICs), each its own NCCL graph search.
const char* kThreadedJob = R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 64, micro_batch_size: 2}
parallelism: {tensor: 2, pipeline: 2, overlap_grad_reduce: true}
cluster: {gpu: H100-SXM, num_gpus: 32, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 200}
)";

std::string result_on_threads(const std::vector<std::string>& overrides, int threads) {
  RunOptions options;
  options.threads = threads;
  RunOutput out = run_scenario(parse_scenario(kThreadedJob, "job.yaml", overrides), options);
  out.result.simulation.wall_s = 0;
  return to_json(out.result).dump();
}

TEST(PrepareThreads, ResultsDoNotDependOnTheThreads) {
  for (const char* model : {"analytical", "flow"}) {
    const std::string net = std::string("simulation.network_model=") + model;
    const std::string one = result_on_threads({net}, 1);
    EXPECT_EQ(result_on_threads({net}, 4), one) << model;
    // simulation.threads gives the count when RunOptions leaves it at 0.
    EXPECT_EQ(result_on_threads({net, "simulation.threads=3"}, 0), one) << model;
    // A NIC speed no earlier run searched (the searches' memo is shared across runs).
    const std::string nic = "cluster.nic_gbps=137";
    EXPECT_EQ(result_on_threads({net, nic}, 4), result_on_threads({net, nic}, 1)) << model;
  }
}

}  // namespace
