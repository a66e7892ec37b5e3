// A launch-bound step end to end: Llama-3.2-1B written in plain PyTorch on one B200 at 1 x 512 tokens, the shape
// whose eager forward measured 8.1 ms against 1.9 ms replayed as CUDA graphs (kernels.md §4.4). Its kernels are
// shorter than their launches, so the host sets the pace; CUDA graphs take most of that away.
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

const char* kLlama1B = R"(
model:
  family: llama
  num_layers: 16
  hidden_size: 2048
  num_attention_heads: 32
  num_query_groups: 8
  ffn_hidden_size: 8192
  gated_mlp: true
  vocab_size: 128256
  seq_length: 512
training:
  global_batch_size: 1
  micro_batch_size: 1
  precision: bf16
  optimizer_implementation: fused  # the measured steps are forward and backward; keep the update to a few launches
parallelism:
  framework: fsdp
  zero_stage: 3
cluster:
  gpu: B200
  num_gpus: 1
  gpus_per_node: 1
)";

RunResult run_llama1b(const std::vector<std::string>& set = {}) {
  return run_scenario(parse_scenario(kLlama1B, "l1b.yaml", set)).result;
}

// The forward's kernels, end to end, take at least their launches: ~36 per eager layer at 12 us each.
TEST(LaunchBound, EagerSmallModelWaitsOnTheHost) {
  const RunResult r = run_llama1b();
  EXPECT_GT(r.breakdown.host, 0.25 * r.iteration_time_s) << "host " << r.breakdown.host << " of " << r.iteration_time_s;
  EXPECT_GE(r.breakdown.other, r.breakdown.host);
  EXPECT_GE(r.iteration_time_s, static_cast<double>(r.simulation.host_launches) * 12e-6);
  EXPECT_DOUBLE_EQ(r.simulation.host_launch_us, 12.0);
}

TEST(LaunchBound, CudaGraphsAndAFreeHostAreFaster) {
  const RunResult eager = run_llama1b();
  const RunResult graphs = run_llama1b({"training.cuda_graphs=true"});
  const RunResult free_host = run_llama1b({"compute.host_launch_us=0"});
  EXPECT_LT(graphs.simulation.host_launches, eager.simulation.host_launches / 4);
  EXPECT_LT(graphs.iteration_time_s, 0.7 * eager.iteration_time_s);
  EXPECT_LE(free_host.iteration_time_s, graphs.iteration_time_s);
  EXPECT_DOUBLE_EQ(free_host.breakdown.host, 0.0);
}

// A large micro-batch on the same model: the kernels outlast their launches and the host costs ~nothing.
TEST(LaunchBound, LargeKernelsHideTheHost) {
  const RunResult big =
      run_llama1b({"model.seq_length=8192", "training.micro_batch_size=4", "training.global_batch_size=4"});
  EXPECT_LT(big.breakdown.host, 0.02 * big.iteration_time_s);
}

}  // namespace
}  // namespace trainsim
