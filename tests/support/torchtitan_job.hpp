#pragma once
// A small torchtitan-style job for the tests of recompute_modules: [torchtitan_op]: a Llama block (GQA, gated MLP)
// under PyTorch FSDP with sequence-parallel TP, 2 micro-batches of 2 x 2,048 tokens at TP 2 on one 8-GPU node.
#include <cstdint>
#include <string>

namespace trainsim::test {

inline constexpr std::int64_t kTitanHidden = 1024, kTitanHeads = 8, kTitanGroups = 2, kTitanFfn = 4096,
                              kTitanSeq = 2048, kTitanMicroBatch = 2;

inline std::string torchtitan_job_yaml(int tensor = 2, int layers = 4,
                                       const std::string& recompute_modules = "[torchtitan_op]") {
  return R"(
model:
  family: llama
  num_layers: )" +
         std::to_string(layers) + R"(
  hidden_size: 1024
  num_attention_heads: 8
  num_query_groups: 2
  ffn_hidden_size: 4096
  vocab_size: 32000
  seq_length: 2048
training:
  global_batch_size: 16
  micro_batch_size: 2
  precision: bf16
  recompute: selective
  recompute_modules: )" +
         recompute_modules + R"(
parallelism:
  tensor: )" +
         std::to_string(tensor) +
         R"(
  sequence_parallel: true
  framework: fsdp
  zero_stage: 3
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
}

}  // namespace trainsim::test
