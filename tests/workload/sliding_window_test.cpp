// model.sliding_window: fused attention skips the keys outside each query's window, so its FLOPs (and the model
// FLOPs) keep causal_window_share of the causal pairs (its rate: tests/compute/attention_model_test.cpp); unfused
// attention still computes and masks every score. Refused with context parallelism, naming
// the key.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "model/flops.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

// The small GPT job (sequence 1024) with `window` keys per query (0 = none) and extra training / parallelism lines.
Scenario job(int window, const std::string& training = "", const std::string& parallelism = "") {
  std::string yaml =
      test::small_gpt_job(training, "  tensor: 1\n  pipeline: 1\n  sequence_parallel: false\n" + parallelism);
  if (window > 0) {
    const std::string at = "  seq_length: 1024\n";
    yaml.replace(yaml.find(at), at.size(), at + "  sliding_window: " + std::to_string(window) + "\n");
  }
  return parse_scenario(yaml, "job.yaml");
}

// The first kernel of rank 0 named `name`.
KernelDesc first_kernel(const Scenario& s, const std::string& name) {
  const Workload wl = generate_workload(s, {});
  for (const Op& op : wl.ranks[0].ops)
    if (op.type == Op::Type::Compute && wl.names[op.name] == name) return wl.kernels[op.desc];
  ADD_FAILURE() << "no " << name;
  return {};
}

}  // namespace

TEST(SlidingWindow, ShareOfTheCausalPairs) {
  EXPECT_DOUBLE_EQ(causal_window_share(1024, 0), 1.0);
  EXPECT_DOUBLE_EQ(causal_window_share(1024, 1024), 1.0);
  EXPECT_DOUBLE_EQ(causal_window_share(1024, 4096), 1.0);
  // Half the sequence: (2 * 512 * 1024 - 512^2) / 1024^2 = 0.75.
  EXPECT_DOUBLE_EQ(causal_window_share(1024, 512), 0.75);
  EXPECT_NEAR(causal_window_share(8192, 1024), (2.0 * 1024 * 8192 - 1024.0 * 1024) / (8192.0 * 8192), 1e-15);
}

TEST(SlidingWindow, FusedAttentionSkipsTheKeysOutsideTheWindow) {
  const Scenario full = job(0), windowed = job(256);
  for (const char* name : {"core_attn.fwd", "core_attn.bwd"}) {
    const KernelDesc a = first_kernel(full, name), b = first_kernel(windowed, name);
    EXPECT_EQ(a.window, 0) << name;
    EXPECT_EQ(b.window, 256) << name;
    ASSERT_GT(a.flops, 0) << name;
    EXPECT_NEAR(b.flops / a.flops, causal_window_share(1024, 256), 1e-12) << name;
  }
  // A window as long as the sequence is no window.
  EXPECT_EQ(first_kernel(job(1024), "core_attn.fwd"), first_kernel(full, "core_attn.fwd"));
}

TEST(SlidingWindow, ModelFlopsCountOnlyTheAttendedPairs) {
  const Scenario full = job(0), windowed = job(256);
  const double f = model_flops_per_iteration(full.model, 16, 1), w = model_flops_per_iteration(windowed.model, 16, 1);
  // The attention core is what changes: 16 sequences x 1024^2 x (1 - share) x its FLOPs per sequence-squared.
  const double core_per_sq = f - w;
  EXPECT_GT(core_per_sq, 0);
  const double causal_core = 16.0 * 1024 * 1024 * 4 /*layers*/ * 3 * 2 * 8 * 128 / 2 * 2;  // fwd+bwd, QK and PV
  EXPECT_NEAR(core_per_sq, causal_core * (1 - causal_window_share(1024, 256)), causal_core * 1e-9);
}

TEST(SlidingWindow, UnfusedAttentionComputesEveryScore) {
  const Scenario full = job(0, "  flash_attention: false\n"), windowed = job(256, "  flash_attention: false\n");
  EXPECT_EQ(first_kernel(windowed, "attn.qk"), first_kernel(full, "attn.qk"));
  EXPECT_EQ(first_kernel(windowed, "attn.pv"), first_kernel(full, "attn.pv"));
}

TEST(SlidingWindow, ContextParallelismIsRefusedNamingTheKey) {
  try {
    job(256, "", "  context: 2\n");
    ADD_FAILURE() << "accepted";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("model.sliding_window"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW(job(1024, "", "  context: 2\n"));  // a window covering the sequence changes nothing
}

}  // namespace trainsim
