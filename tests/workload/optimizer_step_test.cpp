// training.optimizer: the step kernel each optimizer runs over the local shard (kernels_factory.hpp
// optimizer_step_kernel): SGD with momentum moves fewer bytes than Adam, LAMB more (its norms and second stage);
// the optimizer states in the memory model follow the same choice. Megatron has no LAMB: refused naming the key.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"

namespace trainsim {
namespace {

// Fused kernels everywhere (FSDP's default is torch.optim's foreach: optimizer_implementation_test.cpp).
Scenario job(const std::string& optimizer, const std::string& framework) {
  return parse_scenario(test::small_gpt_job("  optimizer: " + optimizer + "\n  optimizer_implementation: fused\n",
                                            "  tensor: 1\n  pipeline: 1\n  framework: " + framework + "\n"),
                        "job.yaml");
}

// The rank's optimizer-step kernel: its name and HBM bytes.
struct Step {
  std::string name;
  double bytes = 0;
};
Step step_of(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  Step st;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.type != Op::Type::Compute) continue;
    const KernelDesc& k = wl.kernels[op.desc];
    const std::string& name = wl.names[op.name];
    if (k.kind == KernelKind::OptimizerStep && name != "optimizer.grad_norm") {
      st.name = name;
      st.bytes += k.bytes;
    }
  }
  return st;
}

}  // namespace

TEST(OptimizerStep, EachOptimizerRunsItsOwnUpdate) {
  for (const char* framework : {"megatron", "fsdp", "deepspeed"}) {
    const Step adam = step_of(job("adam", framework)), sgd = step_of(job("sgd", framework));
    EXPECT_EQ(adam.name, "optimizer.adam") << framework;
    EXPECT_EQ(sgd.name, "optimizer.sgd") << framework;
    ASSERT_GT(adam.bytes, 0) << framework;
    // Per element: Adam 42 B, SGD 34 B (same clip and copy passes around the update).
    EXPECT_NEAR(sgd.bytes / adam.bytes, 34.0 / 42.0, 1e-9) << framework;
  }
  const Step adam = step_of(job("adam", "fsdp")), lamb = step_of(job("lamb", "fsdp"));
  EXPECT_EQ(lamb.name, "optimizer.lamb");
  EXPECT_NEAR(lamb.bytes / adam.bytes, 62.0 / 42.0, 1e-9);
}

TEST(OptimizerStep, SgdKeepsOneMomentInMemory) {
  const double adam = estimate_memory(job("adam", "megatron")).front().optimizer_gib,
               sgd = estimate_memory(job("sgd", "megatron")).front().optimizer_gib;
  ASSERT_GT(adam, 0);
  EXPECT_LT(sgd, adam);  // fp32 master + one moment (8 B) against master + two (12 B)
  EXPECT_NEAR(sgd / adam, 8.0 / 12.0, 1e-9);
}

TEST(OptimizerStep, MegatronHasNoLamb) {
  try {
    job("lamb", "megatron");
    ADD_FAILURE() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("training.optimizer"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(job("lamb", "deepspeed"));
}

}  // namespace trainsim
