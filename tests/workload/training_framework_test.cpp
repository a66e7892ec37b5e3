// The training frameworks behind parallelism.framework (workload/frameworks/): one implementation per registered
// framework, what each refuses, the dtype its gradients travel in, and the framework-specific ops of one iteration
// (Megatron's step checks, DeepSpeed ZeRO's own buckets without DDP buffers, FSDP FULL_SHARD's per-layer gathers).
#include "workload/frameworks/training_framework.hpp"

#include <gtest/gtest.h>

#include <array>
#include <set>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

Scenario framework_scenario(const std::string& framework, int zero_stage, int pipeline = 1) {
  return parse_scenario(
      test::small_gpt_job("", "  tensor: 2\n  pipeline: " + std::to_string(pipeline) + "\n  framework: " + framework +
                                  "\n  zero_stage: " + std::to_string(zero_stage) + "\n"),
      "frameworks.yaml");
}

std::set<std::string> first_rank_op_names(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  std::set<std::string> names;
  for (const Op& op : wl.ranks[0].ops) names.insert(wl.names[op.name]);
  return names;
}

TEST(TrainingFramework, EveryRegisteredFrameworkHasAnImplementation) {
  for (const FrameworkInfo& f : frameworks()) EXPECT_EQ(make_training_framework(f.id)->id(), f.id) << f.name;
}

// Megatron reduces in fp32 with bf16 (fp16 in fp16 recipes), FSDP in fp32, DeepSpeed in the training dtype.
TEST(TrainingFramework, GradientReductionDtype) {
  Scenario s = framework_scenario("megatron", 1);
  EXPECT_DOUBLE_EQ(make_training_framework(Framework::Megatron)->grad_reduce_bytes(s), 4.0);
  EXPECT_DOUBLE_EQ(make_training_framework(Framework::FSDP)->grad_reduce_bytes(s), 4.0);
  EXPECT_DOUBLE_EQ(make_training_framework(Framework::DeepSpeed)->grad_reduce_bytes(s), 2.0);
  s.training.precision = Precision::FP16;
  EXPECT_DOUBLE_EQ(make_training_framework(Framework::Megatron)->grad_reduce_bytes(s), 2.0);
  EXPECT_DOUBLE_EQ(make_training_framework(Framework::FSDP)->grad_reduce_bytes(s), 4.0);
}

// Only Megatron has the interleaved schedule (and the MoE layer); its own check is the micro-batch count.
TEST(TrainingFramework, OnlyMegatronRunsTheInterleavedSchedule) {
  Scenario s = framework_scenario("megatron", 1, 2);
  s.parallelism.virtual_pipeline = 2;
  EXPECT_NO_THROW(make_training_framework(Framework::Megatron)->validate(s));
  for (const Framework f : {Framework::FSDP, Framework::DeepSpeed}) {
    s.parallelism.framework = f;
    try {
      make_training_framework(f)->validate(s);
      ADD_FAILURE() << to_string(f) << " accepted virtual_pipeline 2";
    } catch (const ScenarioError& e) {
      EXPECT_EQ(e.key(), "parallelism.virtual_pipeline");
      EXPECT_NE(std::string(e.what()).find("has no interleaved schedule"), std::string::npos) << e.what();
    }
  }
  s = framework_scenario("megatron", 1, 2);
  s.parallelism.virtual_pipeline = 2;
  s.training.global_batch_size = 6;  // 6 / (1 x data 2) = 3 micro-batches on 2 stages: not a multiple
  EXPECT_THROW(make_training_framework(Framework::Megatron)->validate(s), ScenarioError);
}

TEST(TrainingFramework, EachFrameworkIssuesItsOwnSteps) {
  const auto megatron = first_rank_op_names(framework_scenario("megatron", 1));
  EXPECT_TRUE(megatron.count("world.rerun_check"));
  EXPECT_TRUE(megatron.count("zero_grad_buffer"));
  EXPECT_TRUE(megatron.count("dp.grad_reduce_scatter"));  // the distributed optimizer
  EXPECT_TRUE(first_rank_op_names(framework_scenario("megatron", 0)).count("dp.grad_all_reduce"));

  const auto full_shard = first_rank_op_names(framework_scenario("fsdp", 3));
  EXPECT_TRUE(full_shard.count("fsdp.allgather.fwd"));
  EXPECT_TRUE(full_shard.count("fsdp.reduce_scatter"));
  EXPECT_FALSE(full_shard.count("world.rerun_check"));
  EXPECT_FALSE(full_shard.count("zero_grad_buffer"));  // PyTorch sets the gradients to None: no memset
  // SHARD_GRAD_OP: gathered for the forward only; with a pipeline, reduced once per step through the buckets.
  const auto shard_grad_op = first_rank_op_names(framework_scenario("fsdp", 2));
  EXPECT_TRUE(shard_grad_op.count("fsdp.allgather.fwd"));
  EXPECT_FALSE(shard_grad_op.count("fsdp.allgather.bwd"));
  EXPECT_TRUE(shard_grad_op.count("fsdp.reduce_scatter"));
  EXPECT_FALSE(shard_grad_op.count("dp.grad_all_reduce"));
  const auto shard_grad_op_pipelined = first_rank_op_names(framework_scenario("fsdp", 2, 2));
  EXPECT_TRUE(shard_grad_op_pipelined.count("dp.grad_all_reduce"));
  EXPECT_FALSE(shard_grad_op_pipelined.count("fsdp.allgather.fwd"));
  EXPECT_FALSE(shard_grad_op_pipelined.count("zero_grad_buffer"));
  EXPECT_FALSE(first_rank_op_names(framework_scenario("fsdp", 0)).count("zero_grad_buffer"));

  const auto zero = first_rank_op_names(framework_scenario("deepspeed", 2));
  EXPECT_FALSE(zero.count("zero_grad_buffer"));  // ZeRO sets the gradients to None
  EXPECT_FALSE(zero.count("world.rerun_check"));
  EXPECT_FALSE(zero.count("dp.grad_all_reduce"));
  EXPECT_TRUE(first_rank_op_names(framework_scenario("deepspeed", 0)).count("dp.grad_all_reduce"));
}

// Where the host waits for the device (docs/compute-model.md §1.5; megatron.md §0.2, §9): Megatron's
// non-interleaved schedule after every pipeline transfer (batch_p2p_sync: torch.cuda.synchronize(), so the op after
// it waits for every stream), its NaN checks (each micro-batch's loss on the last stage, each gradient bucket's norm
// before its reduction) and the gradient norm's .item() before the update; PyTorch FSDP's pipeline no more than
// anywhere else.
TEST(TrainingFramework, MegatronHostWaitsAfterTransfersAndOnItsChecks) {
  struct Waits {
    int after_transfer = 0, on_loss = 0, on_bucket = 0, on_norm = 0, total = 0;
  };
  const auto waits = [](const Scenario& s, int rank_index) {
    const Workload wl = generate_workload(s, {});
    const RankProgram& p = wl.ranks[static_cast<std::size_t>(rank_index)];
    Waits w;
    for (const Op& op : p.ops) {
      if (op.host_waits == 0) continue;
      ++w.total;
      const std::string& name = wl.names[p.ops[p.deps[op.first_dep]].name];
      if (name.rfind("pp.", 0) == 0 || op.host_waits > 1) ++w.after_transfer;
      if (name.find("cross_entropy") != std::string::npos || name.find("tp.ar.ce") != std::string::npos ||
          name.find("loss") != std::string::npos)
        ++w.on_loss;
      if (name.find("bucket_norm_scale") != std::string::npos) ++w.on_bucket;
      if (name == "optimizer.grad_norm_all_reduce") ++w.on_norm;
    }
    return w;
  };
  const Scenario flat = framework_scenario("megatron", 1);
  const Waits f = waits(flat, 0);
  EXPECT_EQ(f.after_transfer, 0);
  EXPECT_EQ(f.on_loss, flat.micro_batches_per_iteration());
  EXPECT_GE(f.on_bucket, 1);
  EXPECT_EQ(f.on_norm, 1);
  EXPECT_EQ(f.total, f.on_loss + f.on_bucket + f.on_norm);
  const Waits first_stage = waits(framework_scenario("megatron", 1, 2), 0);
  EXPECT_GT(first_stage.after_transfer, 2);                        // one after each transfer
  EXPECT_EQ(first_stage.on_loss, 0);                               // the loss is on the last stage
  EXPECT_EQ(waits(framework_scenario("fsdp", 2, 2), 0).total, 0);  // torch.distributed.pipelining does not sync
}

// Where a step's first parameter all-gather starts (megatron.md §5.3 step 6): at the first forward pre-hook, so a
// later stage (whose buffer is one bucket) gathers only after its first input has arrived; Megatron-Core up to r0.8
// started it in zero_grad, before any forward (parallelism.param_gather_in_zero_grad).
TEST(TrainingFramework, ParamGatherStartsAtTheFirstForwardUnlessInZeroGrad) {
  const auto gather_after_first_input = [](bool in_zero_grad) {
    const Scenario s =
        parse_scenario(test::small_gpt_job("", std::string("  tensor: 2\n  pipeline: 2\n") +
                                                   (in_zero_grad ? "  param_gather_in_zero_grad: true\n" : "")),
                       "param-gather.yaml");
    const Workload wl = generate_workload(s, {});
    for (const RankProgram& p : wl.ranks) {
      std::size_t recv = p.ops.size(), gather = p.ops.size();
      for (std::size_t i = 0; i < p.ops.size(); ++i) {
        const std::string& name = wl.names[p.ops[i].name];
        if (name == "pp.recv_forward" && recv == p.ops.size()) recv = i;
        if (name == "dp.param_allgather" && gather == p.ops.size()) gather = i;
      }
      if (recv == p.ops.size()) continue;  // the first stage receives nothing
      EXPECT_LT(gather, p.ops.size());
      return gather > recv;
    }
    ADD_FAILURE() << "no rank of the second stage";
    return false;
  };
  EXPECT_TRUE(gather_after_first_input(false));
  EXPECT_FALSE(gather_after_first_input(true));
  try {
    parse_scenario(test::small_gpt_job("", "  tensor: 2\n  zero_stage: 0\n  param_gather_in_zero_grad: true\n"),
                   "param-gather.yaml");
    ADD_FAILURE() << "param_gather_in_zero_grad accepted without the distributed optimizer";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "parallelism.param_gather_in_zero_grad"); }
  try {
    parse_scenario(test::small_gpt_job("",
                                       "  tensor: 2\n  pipeline: 2\n  virtual_pipeline: 2\n"
                                       "  param_gather_in_zero_grad: true\n"),
                   "param-gather.yaml");
    ADD_FAILURE() << "param_gather_in_zero_grad accepted with the interleaved schedule";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "parallelism.param_gather_in_zero_grad");
    EXPECT_NE(std::string(e.what()).find("interleaved"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
