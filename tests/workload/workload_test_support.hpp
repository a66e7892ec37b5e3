#pragma once
// Helpers shared by the workload tests: counting a rank's ops by name, a small GPT scenario for the quantization
// tests, and memory figures in GiB.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/units.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/workload.hpp"

namespace trainsim::test {

// How many of rank program `prog`'s ops are named `name`.
inline int count_named(const Workload& wl, const RankProgram& prog, const std::string& name) {
  return static_cast<int>(
      std::count_if(prog.ops.begin(), prog.ops.end(), [&](const Op& op) { return wl.names[op.name] == name; }));
}

// A 2-layer GPT (hidden 512, 8 heads, FFN 2048, 1024 tokens) trained in `precision` on 8 `gpu`s with 2 micro-batches
// per rank; `model_extra` lines go under model:, `overrides` as --set would.
inline Scenario small_gpt_scenario(const std::string& precision, const std::string& gpu = "H100-SXM",
                                   const std::vector<std::string>& overrides = {},
                                   const std::string& model_extra = "") {
  const std::string yaml = "model:\n" + model_extra +
                           "  family: gpt\n  num_layers: 2\n  hidden_size: 512\n  num_attention_heads: 8\n"
                           "  ffn_hidden_size: 2048\n  vocab_size: 1024\n  seq_length: 1024\n"
                           "training:\n  global_batch_size: 16\n  micro_batch_size: 1\n  precision: " +
                           precision + "\nparallelism:\n  tensor: 1\n  pipeline: 1\ncluster:\n  gpu: " + gpu +
                           "\n  num_gpus: 8\n  gpus_per_node: 8\n";
  return parse_scenario(yaml, "small-gpt.yaml", overrides);
}

// Rank 0's compute ops by name: how many, and the bytes of the last one.
struct SeenOps {
  int count = 0;
  double bytes = 0;
};
inline std::map<std::string, SeenOps> compute_ops_by_name(const Workload& wl) {
  std::map<std::string, SeenOps> out;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.type != Op::Type::Compute) continue;
    SeenOps& s = out[wl.names[op.name]];
    s.count += 1;
    s.bytes = wl.kernels[op.desc].bytes;
  }
  return out;
}

// The dtype of rank 0's first compute op named `name` (a test failure, and FP32, when there is none).
inline Precision compute_op_dtype(const Workload& wl, const std::string& name) {
  for (const Op& op : wl.ranks[0].ops)
    if (op.type == Op::Type::Compute && wl.names[op.name] == name) return wl.kernels[op.desc].dtype;
  ADD_FAILURE() << "no op " << name;
  return Precision::FP32;
}

// `bytes` in GiB, the unit of the memory model's per-stage figures.
inline double gib(double bytes) { return bytes / kGiB; }

}  // namespace trainsim::test
