#pragma once
// Tiny scenarios for the tune tests, written to temporary files: a 4-layer, 4-head model on 8 GPUs of
// one node, analytical network, so that a whole space simulates in seconds on two cores.
#include <filesystem>
#include <fstream>
#include <string>

namespace tune_test {

// `memory_gib` sets the GPU's memory (cluster.gpu_spec.memory_gib) so that some configurations do not fit.
inline std::string tiny_scenario_text(double memory_gib, int scale_up_domain = 8) {
  return R"(
model:
  preset: gpt3-1.3b
  num_layers: 4
  hidden_size: 2048
  num_attention_heads: 4
  num_query_groups: 4
  kv_channels: 512
  ffn_hidden_size: 8192
  seq_length: 2048
  vocab_size: 32000
training:
  global_batch_size: 16
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 2
  pipeline: 2
  data: 2
cluster:
  gpu: H100-SXM
  gpu_spec: {memory_gib: )" +
         std::to_string(memory_gib) + R"(}
  num_gpus: 8
  gpus_per_node: 8
  scale_up: {domain_size: )" +
         std::to_string(scale_up_domain) + R"(}
simulation:
  network_model: analytical
)";
}

inline std::string write_scenario(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("trainsim_tune_" + name + ".yaml");
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace tune_test
