// The optimizer step as each implementation launches it (training.optimizer_implementation, optimizer_step.hpp):
// fused multi-tensor kernels (28 B per element for Adam), PyTorch's foreach (eight elementwise passes, 84 B) and the
// per-tensor loop (the same passes, eight kernels per tensor); how many tensors a rank's optimizer sees under each
// sharding; the framework defaults and the combinations refused, naming the key.
#include <gtest/gtest.h>

#include <numeric>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/optimizer_step.hpp"

namespace trainsim {
namespace {

double total_bytes(const std::vector<OptimizerOp>& ops) {
  double b = 0;
  for (const auto& op : ops) b += op.kernel.bytes;
  return b;
}

int total_launches(const std::vector<OptimizerOp>& ops) {
  int n = 0;
  for (const auto& op : ops) n += op.launches;
  return n;
}

Scenario job(const std::string& framework, const std::string& training_lines, int zero_stage = 3) {
  return parse_scenario(test::small_gpt_job(training_lines, "  tensor: 1\n  pipeline: 1\n  framework: " + framework +
                                                                "\n  zero_stage: " + std::to_string(zero_stage) + "\n"),
                        "optimizer.yaml");
}

std::string refusal(const std::string& framework, const std::string& training_lines) {
  try {
    job(framework, training_lines, framework == "megatron" ? 1 : 3);
  } catch (const ScenarioError& e) { return e.key() + ": " + e.what(); }
  return "accepted";
}

// The step's kernels and launches on rank 0.
struct Step {
  int ops = 0, launches = 0;
  double bytes = 0;
};
Step step_of(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  Step st;
  for (const Op& op : wl.ranks[0].ops) {
    if (wl.names[op.name] != "optimizer.adam") continue;
    ++st.ops;
    st.launches += op.launches;
    st.bytes += wl.kernels[op.desc].bytes;
  }
  return st;
}

}  // namespace

// A launch holds at most 110 / 64 / 48 / 36 tensors for 1 / 2 / 3 / 4 lists, and 320 blocks of 65,536 elements.
TEST(OptimizerImplementation, MultiTensorLaunchesFillByTensorsOrByBlocks) {
  EXPECT_EQ(multi_tensor_launches(std::vector<double>(110, 1000), 1), 1);
  EXPECT_EQ(multi_tensor_launches(std::vector<double>(111, 1000), 1), 2);
  EXPECT_EQ(multi_tensor_launches(std::vector<double>(36, 1000), 4), 1);
  EXPECT_EQ(multi_tensor_launches(std::vector<double>(37, 1000), 4), 2);
  EXPECT_EQ(multi_tensor_launches({320 * 65536.0}, 1), 1);
  EXPECT_EQ(multi_tensor_launches({320 * 65536.0 + 1}, 1), 2);
  EXPECT_EQ(multi_tensor_launches({1e9}, 2), 48);  // 15,259 blocks
  EXPECT_EQ(multi_tensor_launches({}, 1), 0);
}

// Adam over 200 tensors of 1,000 elements (one block each, so the tensor caps fill the launches): fused reads and
// writes 28 B per element plus the clip scale and the copy (14 B) in a few launches; foreach the eight passes
// (84 B) and that pass, each a few launches; the loop the same bytes in nine kernels per tensor. Tensors of 1M
// elements (16 blocks) fill a launch by blocks first: 20 tensors a launch.
TEST(OptimizerImplementation, BytesAndLaunchesOfEachImplementation) {
  const std::vector<double> tensors(200, 1000);
  const double elements = 200e3;
  const auto fused = optimizer_step_ops(Optimizer::Adam, OptimizerImplementation::Fused, tensors, Precision::BF16);
  EXPECT_NEAR(total_bytes(fused), 42 * elements, 1e-6);
  // Adam's four lists: 36 tensors a launch (6 launches); clip and copy two lists each: 64 a launch (4 launches).
  EXPECT_EQ(total_launches(fused), 6 + 2 * 4);
  const auto foreach = optimizer_step_ops(Optimizer::Adam, OptimizerImplementation::Foreach, tensors, Precision::BF16);
  EXPECT_NEAR(total_bytes(foreach), 98 * elements, 1e-6);
  EXPECT_EQ(foreach.size(), 9u);
  // 1 list: 2 launches (110 a launch), 2 lists: 4 (64), 3 lists: 5 (48); passes 1,2,1,3,2,1,1,3 and the 2-list one.
  EXPECT_EQ(total_launches(foreach), 2 + 4 + 2 + 5 + 4 + 2 + 2 + 5 + 4);
  const auto loop = optimizer_step_ops(Optimizer::Adam, OptimizerImplementation::ForLoop, tensors, Precision::BF16);
  EXPECT_NEAR(total_bytes(loop), 98 * elements, 1e-6);
  EXPECT_EQ(loop.size(), 9u * 200);
  EXPECT_EQ(total_launches(loop), 9 * 200);
  const auto sgd = optimizer_step_ops(Optimizer::SGD, OptimizerImplementation::Foreach, tensors, Precision::BF16);
  EXPECT_NEAR(total_bytes(sgd), (32 + 14) * elements, 1e-6);
  const std::vector<double> big(200, 1e6);
  EXPECT_EQ(total_launches(optimizer_step_ops(Optimizer::Adam, OptimizerImplementation::Fused, big, Precision::BF16)),
            3 * 10);
  EXPECT_EQ(total_launches(optimizer_step_ops(Optimizer::Adam, OptimizerImplementation::Foreach, big, Precision::BF16)),
            9 * 10);
}

// What a rank's optimizer iterates over: whole tensors; each tensor's 1/N (FSDP2); or the few tensors a 1/N piece of
// each unit's flattened tensors crosses (FSDP1, the distributed optimizer). The elements sum to the local total.
TEST(OptimizerImplementation, LocalTensorsUnderEachSharding) {
  const std::vector<ParamUnit> units = {{600, 6}, {600, 6}, {100, 1}};
  const auto sum = [](const std::vector<double>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  const auto whole = local_optimizer_tensors(units, OptimizerSharding::None, 1, 1300);
  EXPECT_EQ(whole.size(), 13u);
  EXPECT_DOUBLE_EQ(sum(whole), 1300);
  const auto per_tensor = local_optimizer_tensors(units, OptimizerSharding::PerTensor, 4, 325);
  EXPECT_EQ(per_tensor.size(), 13u);
  EXPECT_DOUBLE_EQ(sum(per_tensor), 325);
  EXPECT_EQ(local_optimizer_tensors(units, OptimizerSharding::Flat, 16, 1).size(), 3u);  // 1 + 6/16 rounds to 1
  EXPECT_EQ(local_optimizer_tensors(units, OptimizerSharding::Flat, 2, 1).size(), 4u + 4 + 1);
  EXPECT_EQ(local_optimizer_tensors(units, OptimizerSharding::Flat, 1, 1).size(), 13u);
}

// The defaults: torch.optim's foreach under FSDP (said in the report), fused kernels under Megatron and DeepSpeed.
// Under FSDP the loop launches a kernel per pass and tensor, foreach a few per pass, fused a few in all, and the
// unfused ones move 98 / 42 of the fused bytes.
TEST(OptimizerImplementation, FrameworkDefaultsAndWhatEachImplementationEmits) {
  const Scenario fsdp = job("fsdp", "");
  EXPECT_EQ(fsdp.training.optimizer_implementation, OptimizerImplementation::Foreach);
  bool said = false;
  for (const auto& i : fsdp.inferred) said |= i.key == "training.optimizer_implementation" && i.value == "foreach";
  EXPECT_TRUE(said);
  EXPECT_EQ(job("megatron", "", 1).training.optimizer_implementation, OptimizerImplementation::Fused);
  EXPECT_EQ(job("deepspeed", "", 2).training.optimizer_implementation, OptimizerImplementation::Fused);

  const Step fused = step_of(job("fsdp", "  optimizer_implementation: fused\n"));
  const Step foreach = step_of(fsdp);
  const Step loop = step_of(job("fsdp", "  optimizer_implementation: for_loop\n"));
  EXPECT_NEAR(foreach.bytes / fused.bytes, 98.0 / 42.0, 1e-9);
  EXPECT_NEAR(loop.bytes, foreach.bytes, foreach.bytes * 1e-9);
  EXPECT_EQ(foreach.ops, 9);
  EXPECT_LT(fused.launches, foreach.launches);
  EXPECT_LT(foreach.launches, loop.launches);
  EXPECT_EQ(loop.ops, loop.launches);
  EXPECT_EQ(loop.ops % 9, 0);
}

// Composer's DecoupledAdamW: the per-tensor loop after one step-count increment per tensor, and before each tensor's
// update a host read of its step count (.item() on a device tensor): the host waits for the previous tensor's update.
TEST(OptimizerImplementation, DecoupledAdamWReadsEachStepCountBack) {
  const std::vector<double> tensors(5, 1e6);
  const auto ops =
      optimizer_step_ops(Optimizer::Adam, OptimizerImplementation::DecoupledAdamW, tensors, Precision::BF16);
  ASSERT_EQ(ops.size(), 5u + 9u * 5);
  int reads = 0;
  for (const auto& op : ops) reads += op.after_host_read;
  EXPECT_EQ(reads, 5);
  EXPECT_TRUE(ops[5].after_host_read);  // the first update kernel, after the five increments
  EXPECT_NEAR(total_bytes(ops), 98 * 5e6 + 5 * 8, 1e-6);

  const Workload wl = generate_workload(job("fsdp", "  optimizer_implementation: decoupled_adamw\n"), {});
  int waits = 0, updates = 0;
  for (const Op& op : wl.ranks[0].ops) {
    if (wl.names[op.name] != "optimizer.adam") continue;
    ++updates;
    waits += op.host_waits > 0;
  }
  EXPECT_GT(waits, 0);
  EXPECT_EQ(updates, waits * 10);  // per tensor: the increment and nine kernels, one of them after the read
  EXPECT_NE(refusal("fsdp", "  optimizer: sgd\n  optimizer_implementation: decoupled_adamw\n")
                .find("training.optimizer_implementation: decoupled_adamw is Composer's DecoupledAdamW, an Adam"),
            std::string::npos);
}

TEST(OptimizerImplementation, RefusedWhereTheFrameworkHasNoSuchOptimizer) {
  EXPECT_NE(refusal("megatron", "  optimizer_implementation: foreach\n")
                .find("training.optimizer_implementation: foreach: Megatron's optimizers are Transformer Engine's"),
            std::string::npos);
  EXPECT_NE(refusal("megatron", "  optimizer_implementation: for_loop\n").find("training.optimizer_implementation"),
            std::string::npos);
  EXPECT_NE(refusal("fsdp", "  optimizer: lamb\n  optimizer_implementation: foreach\n")
                .find("training.optimizer_implementation: foreach: LAMB exists only as fused kernels"),
            std::string::npos);
  EXPECT_NE(refusal("fsdp", "  optimizer_implementation: apex\n").find("training.optimizer_implementation"),
            std::string::npos);
  EXPECT_EQ(refusal("megatron", "  optimizer_implementation: fused\n"), "accepted");
  EXPECT_NE(
      refusal("megatron", "  optimizer_implementation: decoupled_adamw\n").find("training.optimizer_implementation"),
      std::string::npos);
}

}  // namespace trainsim
