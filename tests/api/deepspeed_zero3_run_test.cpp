// A DeepSpeed ZeRO-3 job end to end through run_scenario: the per-module parameter all-gathers and gradient
// reduce-scatters cross the NICs of 2 nodes; on a 10 Gb/s network the compute stream waits for them (exposed
// data-parallel time), and much less so at 400 Gb/s.
#include <gtest/gtest.h>

#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

const char* kZero3Job = R"(
model:
  family: gpt
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  vocab_size: 51200
  seq_length: 1024
training: {global_batch_size: 32, micro_batch_size: 2, precision: bf16}
parallelism: {tensor: 1, pipeline: 1, framework: deepspeed, zero_stage: 3}
cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
  nics_per_node: 1
  nic_gbps: 10
)";

TEST(DeepSpeedZero3Run, SlowNetworkExposesDataParallelTime) {
  const RunOutput slow = run_scenario(parse_scenario(kZero3Job, "zero3.yaml"));
  const Breakdown& b = slow.result.breakdown;
  EXPECT_GT(b.exposed_dp, 0.0);
  EXPECT_GT(b.exposed_dp, 0.1 * slow.result.iteration_time_s);  // ~80 M params x 2 B x 3 per micro-batch at 1.25 GB/s
  // The parts still add up to the iteration.
  EXPECT_NEAR(b.compute + b.exposed_comm + b.bubble + b.optimizer + b.other, slow.result.iteration_time_s, 1e-9);
  const RunOutput fast = run_scenario(parse_scenario(kZero3Job, "zero3.yaml", {"cluster.nic_gbps=400"}));
  EXPECT_LT(fast.result.breakdown.exposed_dp, b.exposed_dp / 5);
  EXPECT_LT(fast.result.iteration_time_s, slow.result.iteration_time_s);
}

}  // namespace
