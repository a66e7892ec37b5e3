// training.grad_reduce_in_bf16 (Megatron's --grad-reduce-in-bf16, NeMo's grad_reduce_in_fp32 = False, FSDP's
// reduce_dtype bf16): the data-parallel gradient reduction moves bf16, half the bytes of the fp32 default; Megatron's
// gradient buffer shrinks with it; FSDP drops the cast up before each reduce-scatter. Refused where it would change
// nothing (fp16 and fp32 training, DeepSpeed), naming the key.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"

namespace trainsim {
namespace {

Scenario scenario(const std::string& framework, const std::string& precision, bool bf16_reduce) {
  return parse_scenario(test::small_gpt_job("  precision: " + precision +
                                                "\n  grad_reduce_in_bf16: " + (bf16_reduce ? "true" : "false") + "\n",
                                            "  tensor: 1\n  pipeline: 1\n  framework: " + framework +
                                                "\n  zero_stage: " + (framework == "fsdp" ? "3" : "1") + "\n"),
                        "job.yaml");
}

// Total bytes of the rank's data-parallel gradient reductions, and how many fsdp.grad_cast kernels it runs.
struct GradTraffic {
  double reduce_bytes = 0;
  int casts = 0;
};

GradTraffic grad_traffic(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  GradTraffic t;
  for (const Op& op : wl.ranks[0].ops) {
    const std::string& name = wl.names[op.name];
    if (name == "fsdp.grad_cast") ++t.casts;
    if (op.type != Op::Type::Collective) continue;
    const CollectiveDesc& c = wl.collectives[op.desc];
    if (wl.groups[c.group].kind == GroupKind::DP && c.kind == CollKind::ReduceScatter)
      t.reduce_bytes += static_cast<double>(c.bytes);
  }
  return t;
}

// `half` reduces half of `full`'s gradient bytes and holds a gradient buffer half its size.
void expect_half_the_gradient_bytes(const Scenario& full, const Scenario& half) {
  const GradTraffic a = grad_traffic(full), b = grad_traffic(half);
  ASSERT_GT(a.reduce_bytes, 0);
  EXPECT_NEAR(b.reduce_bytes, a.reduce_bytes / 2, a.reduce_bytes * 1e-6);
  const double grads_full = estimate_memory(full).front().grads_gib,
               grads_half = estimate_memory(half).front().grads_gib;
  ASSERT_GT(grads_full, 0);
  EXPECT_NEAR(grads_half, grads_full / 2, grads_full * 1e-9);
}

}  // namespace

TEST(GradReduceInBf16, MegatronReducesHalfTheBytesAndKeepsAHalfSizeGradientBuffer) {
  expect_half_the_gradient_bytes(scenario("megatron", "bf16", false), scenario("megatron", "bf16", true));
}

// fp16 recipes keep Megatron's gradient buffer in fp16 (accumulate_allreduce_grads_in_fp32 stays off): the memory
// model holds the dtype the reduction moves, half the bf16 job's fp32 buffer.
TEST(GradReduceInBf16, MegatronFp16KeepsItsGradientBufferInFp16) {
  expect_half_the_gradient_bytes(scenario("megatron", "bf16", false), scenario("megatron", "fp16", false));
}

TEST(GradReduceInBf16, FsdpReducesBf16WithoutTheCastUp) {
  const GradTraffic a = grad_traffic(scenario("fsdp", "bf16", false)), b = grad_traffic(scenario("fsdp", "bf16", true));
  ASSERT_GT(a.reduce_bytes, 0);
  EXPECT_NEAR(b.reduce_bytes, a.reduce_bytes / 2, a.reduce_bytes * 1e-6);
  EXPECT_GT(a.casts, 0);
  EXPECT_EQ(b.casts, 0);
}

TEST(GradReduceInBf16, Fp8TrainingTakesItToo) {
  const GradTraffic a = grad_traffic(scenario("megatron", "fp8", false)),
                    b = grad_traffic(scenario("megatron", "fp8", true));
  EXPECT_NEAR(b.reduce_bytes, a.reduce_bytes / 2, a.reduce_bytes * 1e-6);
}

TEST(GradReduceInBf16, RefusedWhereItWouldChangeNothing) {
  for (const auto& [framework, precision] :
       std::map<std::string, std::string>{{"megatron", "fp16"}, {"fsdp", "fp32"}, {"deepspeed", "bf16"}}) {
    try {
      scenario(framework, precision, true);
      ADD_FAILURE() << framework << " " << precision << " was accepted";
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find("training.grad_reduce_in_bf16"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(scenario("deepspeed", "bf16", false));
}

}  // namespace trainsim
