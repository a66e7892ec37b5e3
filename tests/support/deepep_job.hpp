#pragma once
// A small MoE job on 8-GPU H100 nodes for the tests of the DeepEP dispatcher (parallelism.moe_dispatcher: flex):
// a Mixtral-shaped block with 16 experts, top-4 from 2 of 4 router groups, expert_tensor 1.
#include <string>

namespace trainsim::test {

struct DeepEpJob {
  std::string dispatcher = "flex";  // flex | alltoall
  int gpus = 16, pipeline = 1, expert = 16, layers = 2;
  int hidden = 1024, seq = 2048, nic_gbps = 100;
  std::string network = "analytical";
};

inline std::string deepep_job_yaml(const DeepEpJob& j) {
  const auto n = [](int v) { return std::to_string(v); };
  return "model:\n  family: mixtral\n  num_layers: " + n(j.layers) + "\n  hidden_size: " + n(j.hidden) +
         "\n  num_attention_heads: 8\n  num_query_groups: 8\n  ffn_hidden_size: " + n(2 * j.hidden) +
         "\n  vocab_size: 1024\n  seq_length: " + n(j.seq) +
         "\n  moe: {num_experts: 16, router_topk: 4, expert_ffn_hidden_size: " + n(j.hidden / 2) +
         ", router_num_groups: 4, router_group_topk: 2}\n"
         "training: {global_batch_size: 32, micro_batch_size: 1, precision: bf16}\n"
         "parallelism: {tensor: 1, pipeline: " +
         n(j.pipeline) + ", expert: " + n(j.expert) + ", expert_tensor: 1, moe_dispatcher: " + j.dispatcher +
         "}\ncluster: {gpu: H100-SXM, num_gpus: " + n(j.gpus) +
         ", gpus_per_node: 8, nics_per_node: 8, nic_gbps: " + n(j.nic_gbps) +
         "}\nsimulation: {network_model: " + j.network + "}\n";
}

}  // namespace trainsim::test
