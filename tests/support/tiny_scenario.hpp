#pragma once
// The smallest training job the service tests submit (GPT-3 1.3B on one 8-GPU H100 node, TP 2 x DP 4): it simulates
// in milliseconds, so tests can run many of them.
namespace trainsim::test {

inline constexpr const char* kTinyScenario = R"(model:
  preset: gpt3-1.3b
training:
  global_batch_size: 32
  micro_batch_size: 2
  precision: bf16
parallelism:
  tensor: 2
  pipeline: 1
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";

}  // namespace trainsim::test
