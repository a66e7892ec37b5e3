// PyTorch FSDP FULL_SHARD (framework: fsdp, zero_stage: 3): per layer one parameter all-gather in forward and one
// in backward in the training dtype, and one gradient reduce-scatter in fp32 after the gradient's cast up
// (reduce_dtype float32, as Composer's mixed_precision DEFAULT and torchtitan configure it). SHARD_GRAD_OP
// (zero_stage: 2) keeps each layer gathered from its forward to its backward: no gather in backward.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/layer_dims.hpp"

namespace trainsim {
namespace {

Scenario fsdp_scenario(const std::string& precision, int zero_stage = 3) {
  return parse_scenario(test::small_gpt_job("  precision: " + precision + "\n",
                                            "  tensor: 1\n  pipeline: 1\n  framework: fsdp\n  zero_stage: " +
                                                std::to_string(zero_stage) + "\n"),
                        "fsdp.yaml");
}

struct Calls {
  int count = 0;
  double bytes = 0;  // of the last call
};

std::map<std::string, Calls> by_name(const Workload& wl) {
  std::map<std::string, Calls> out;
  for (const Op& op : wl.ranks[0].ops) {
    Calls& c = out[wl.names[op.name]];
    ++c.count;
    c.bytes =
        op.type == Op::Type::Compute ? wl.kernels[op.desc].bytes : static_cast<double>(wl.collectives[op.desc].bytes);
  }
  return out;
}

TEST(FsdpWorkload, GathersInTheTrainingDtypeReducesInFp32) {
  const Scenario s = fsdp_scenario("bf16");
  const double layer_params = LayerDims::of(s).layer_params;
  const int micro_batches = s.micro_batches_per_iteration();
  auto ops = by_name(generate_workload(s, {}));
  EXPECT_EQ(ops["fsdp.allgather.fwd"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.allgather.fwd"].bytes, layer_params * 2.0, 1.0);
  EXPECT_NEAR(ops["fsdp.allgather.bwd"].bytes, layer_params * 2.0, 1.0);
  EXPECT_EQ(ops["fsdp.reduce_scatter"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.reduce_scatter"].bytes, layer_params * 4.0, 1.0);
  // The cast before each reduce-scatter: read bf16, write fp32.
  EXPECT_EQ(ops["fsdp.grad_cast"].count, 4 * micro_batches + 1);  // + the root unit's, once
  EXPECT_EQ(ops.count("fsdp.reduce_scatter.root"), 1u);
}

TEST(FsdpWorkload, Fp32TrainingNeedsNoCast) {
  auto ops = by_name(generate_workload(fsdp_scenario("fp32"), {}));
  EXPECT_EQ(ops.count("fsdp.grad_cast"), 0u);
  EXPECT_GT(ops["fsdp.reduce_scatter"].count, 0);
}

TEST(FsdpWorkload, ShardGradOpGathersOnlyForTheForward) {
  const Scenario s = fsdp_scenario("bf16", 2);
  const double layer_params = LayerDims::of(s).layer_params;
  const int micro_batches = s.micro_batches_per_iteration();
  auto ops = by_name(generate_workload(s, {}));
  EXPECT_EQ(ops["fsdp.allgather.fwd"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.allgather.fwd"].bytes, layer_params * 2.0, 1.0);
  EXPECT_EQ(ops.count("fsdp.allgather.bwd"), 0u);
  EXPECT_EQ(ops["fsdp.reduce_scatter"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.reduce_scatter"].bytes, layer_params * 4.0, 1.0);
  // Not Megatron's bucketed gradient all-reduce.
  for (const auto& [name, calls] : ops) EXPECT_EQ(name.find("grad_all_reduce"), std::string::npos) << name;
  EXPECT_EQ(ops.count("fsdp.reduce_scatter.root"), 1u);
}

// NO_SHARD (zero_stage 0 or 1 for fsdp): every rank holds and updates the whole optimizer state, so its Adam step
// reads 8x what a FULL_SHARD or SHARD_GRAD_OP rank's shard does on 8 GPUs.
TEST(FsdpWorkload, NoShardUpdatesTheWholeOptimizerState) {
  const auto adam_bytes = [](int zero_stage) {
    return by_name(generate_workload(fsdp_scenario("bf16", zero_stage), {}))["optimizer.adam"].bytes;
  };
  const double full = adam_bytes(3);
  ASSERT_GT(full, 0);
  EXPECT_NEAR(adam_bytes(2), full, 1e-6 * full);
  EXPECT_NEAR(adam_bytes(1), 8 * full, 1e-6 * full);
  EXPECT_NEAR(adam_bytes(0), 8 * full, 1e-6 * full);
}

}  // namespace
}  // namespace trainsim
