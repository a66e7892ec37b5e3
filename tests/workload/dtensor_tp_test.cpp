// Tensor parallelism under parallelism.framework fsdp is PyTorch's DTensor (torchtitan's plans): a column-parallel
// linear's backward re-gathers its input, runs the dgrad and the wgrad GEMMs, and only then reduces the input
// gradient, each collective awaited by the next op. Megatron runs the re-gather beside the dgrad GEMM and the
// reduction beside the wgrad GEMM. Async TP (tp_comm_overlap) does not change DTensor's backward order.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

Scenario dtensor_tp_scenario(const std::string& framework, bool tp_comm_overlap) {
  const std::string yaml = R"(
model:
  family: llama
  num_layers: 2
  hidden_size: 1024
  num_attention_heads: 8
  num_query_groups: 8
  ffn_hidden_size: 4096
  vocab_size: 1024
  seq_length: 1024
training:
  global_batch_size: 4
  micro_batch_size: 1
  precision: bf16
  fusion: fused
parallelism:
  tensor: 2
  pipeline: 1
  sequence_parallel: true
  tp_comm_overlap: )" + std::string(tp_comm_overlap ? "true" : "false") +
                           R"(
  framework: )" + framework +
                           R"(
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";
  return parse_scenario(yaml, "tp.yaml");
}

// Index of the first backward op of layer 0, micro-batch 0, named `name`.
std::uint32_t layer0_backward_op(const Workload& wl, const std::string& name) {
  const auto& ops = wl.ranks[0].ops;
  for (std::uint32_t i = 0; i < ops.size(); ++i) {
    const Op& op = ops[i];
    if (op.phase == Phase::Backward && op.layer == 0 && op.micro_batch == 0 && wl.names[op.name] == name) return i;
  }
  ADD_FAILURE() << "no backward op " << name;
  return 0;
}

bool waits_for(const RankProgram& p, std::uint32_t op, std::uint32_t dep) {
  const Op& o = p.ops[op];
  const auto first = p.deps.begin() + o.first_dep;
  return std::find(first, first + o.num_deps, dep) != first + o.num_deps;
}

// The first compute op after `op` in program order.
std::uint32_t next_kernel_after(const RankProgram& p, std::uint32_t op) {
  for (std::uint32_t i = op + 1; i < p.ops.size(); ++i)
    if (p.ops[i].type == Op::Type::Compute) return i;
  ADD_FAILURE() << "no compute op after " << op;
  return op;
}

TEST(DtensorTensorParallel, ColumnParallelBackwardReducesAfterTheWgradAndWaits) {
  for (const bool async_tp : {false, true}) {
    SCOPED_TRACE(async_tp ? "async TP" : "vanilla TP");
    const Workload wl = generate_workload(dtensor_tp_scenario("fsdp", async_tp), {});
    const RankProgram& p = wl.ranks[0];
    for (const char* module : {"fc1", "qkv"}) {
      SCOPED_TRACE(module);
      const std::string m = module;
      const auto gather = layer0_backward_op(wl, m == "fc1" ? "tp.ag.fc1_input" : "tp.ag.qkv_input");
      const auto dgrad = layer0_backward_op(wl, m + ".dgrad");
      const auto wgrad = layer0_backward_op(wl, m + ".wgrad");
      const auto reduce = layer0_backward_op(wl, "tp.rs." + m + "_dgrad");
      EXPECT_LT(gather, dgrad);
      EXPECT_TRUE(waits_for(p, dgrad, gather)) << "the dgrad waits for the re-gathered input";
      EXPECT_LT(dgrad, wgrad);
      EXPECT_LT(wgrad, reduce) << "the reduction is issued after both GEMMs";
      EXPECT_TRUE(waits_for(p, next_kernel_after(p, reduce), reduce)) << "the next kernel waits for the reduction";
    }
  }
}

TEST(DtensorTensorParallel, MegatronOverlapsTheReductionWithTheWgrad) {
  const Workload wl = generate_workload(dtensor_tp_scenario("megatron", false), {});
  const RankProgram& p = wl.ranks[0];
  const auto gather = layer0_backward_op(wl, "tp.ag.fc1_input");
  const auto dgrad = layer0_backward_op(wl, "fc1.dgrad");
  const auto wgrad = layer0_backward_op(wl, "fc1.wgrad");
  const auto reduce = layer0_backward_op(wl, "tp.rs.fc1_dgrad");
  EXPECT_FALSE(waits_for(p, dgrad, gather)) << "the re-gather runs beside the dgrad GEMM";
  EXPECT_LT(reduce, wgrad);
  EXPECT_FALSE(waits_for(p, wgrad, reduce)) << "the reduction runs beside the wgrad GEMM";
  EXPECT_TRUE(waits_for(p, wgrad, gather)) << "the wgrad needs the gathered input";
}

}  // namespace
}  // namespace trainsim
