#pragma once
// The small job the workload tests build programs from: a four-layer GPT (hidden 1024, 8 heads, FFN 4096, sequence
// and vocabulary 1024) on one 8-GPU H100 node, global batch 16 of micro-batches of 1. Each test adds its own lines
// to the training and parallelism blocks (each line indented two spaces and ending in a newline).
#include <string>

namespace trainsim::test {

inline std::string small_gpt_job(const std::string& training_lines, const std::string& parallelism_lines) {
  return R"(model:
  family: gpt
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 8
  ffn_hidden_size: 4096
  vocab_size: 1024
  seq_length: 1024
training:
  global_batch_size: 16
  micro_batch_size: 1
)" + training_lines +
         "parallelism:\n" + parallelism_lines + R"(cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
}

}  // namespace trainsim::test
