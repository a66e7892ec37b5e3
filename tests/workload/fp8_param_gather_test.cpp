// training.fp8_param_gather (Megatron's --fp8-param-gather): Transformer Engine's linear weights as FP8 parameters.
// Against hand counts on the small GPT job (4 layers, h 1024, FFN 4096, MHA, TP 1, DP 8): its linear weights are
// 4 x (3h^2 + h^2 + 2 h FFN) = 4 x 12h^2 = 50,331,648 elements, Q below. The distributed optimizer gathers them at
// 1 B instead of 2 (MXFP8 still at 2); the memory model holds TE's cached quantized copy beside BF16 weights without
// the flag, and the quantized parameter instead of the BF16 one with it; not given, validation turns it on where
// Megatron allows it and says so; given where Megatron has no such thing, it is refused naming the key.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/units.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"

namespace trainsim {
namespace {

constexpr double kH = 1024;
constexpr double kQ = 4 * 12 * kH * kH;  // the linear weights of the 4 layers

Scenario job(const std::string& precision, const std::vector<std::string>& overrides = {},
             const std::string& parallelism = "  tensor: 1\n  pipeline: 1\n") {
  return parse_scenario(test::small_gpt_job("  precision: " + precision + "\n", parallelism), "job.yaml", overrides);
}

// Bytes of the rank's data-parallel parameter all-gathers in one iteration.
double param_gather_bytes(const Scenario& s) {
  const Workload wl = generate_workload(s, {});
  double total = 0;
  for (const Op& op : wl.ranks[0].ops) {
    if (op.type != Op::Type::Collective) continue;
    const CollectiveDesc& c = wl.collectives[op.desc];
    if (wl.groups[c.group].kind == GroupKind::DP && c.kind == CollKind::AllGather)
      total += static_cast<double>(c.bytes);
  }
  return total;
}

double weights_bytes(const Scenario& s) { return estimate_memory(s).front().weights_gib * kGiB; }

bool inferred(const Scenario& s, const std::string& key) {
  for (const InferredValue& v : s.inferred)
    if (v.key == key) return true;
  return false;
}

std::string refusal(const std::string& precision, const std::vector<std::string>& overrides,
                    const std::string& parallelism = "  tensor: 1\n  pipeline: 1\n") {
  try {
    job(precision, overrides, parallelism);
  } catch (const Error& e) { return e.what(); }
  return "";
}

}  // namespace

TEST(Fp8ParamGather, TheOptimizerGathersFp8ParametersAtOneByte) {
  const double bf16_weights = param_gather_bytes(job("fp8", {"training.fp8_param_gather=false"}));
  const double fp8_weights = param_gather_bytes(job("fp8", {"training.fp8_param_gather=true"}));
  ASSERT_GT(bf16_weights, 0);
  EXPECT_NEAR(bf16_weights - fp8_weights, kQ, 8);  // each bucket's byte count is rounded down
  EXPECT_NEAR(param_gather_bytes(job("bf16")), bf16_weights, 8);
  // MXFP8 parameters are gathered in BF16 (Megatron quantizes them after the gather).
  const std::vector<std::string> mxfp8{"cluster.gpu=B200", "training.fp8_recipe=mxfp8"};
  std::vector<std::string> mxfp8_off = mxfp8, mxfp8_on = mxfp8;
  mxfp8_off.push_back("training.fp8_param_gather=false");
  mxfp8_on.push_back("training.fp8_param_gather=true");
  EXPECT_NEAR(param_gather_bytes(job("fp8", mxfp8_on)), param_gather_bytes(job("fp8", mxfp8_off)), 8);
}

// Without the flag: BF16 weights plus TE's cached quantized copy (Hopper FP8: data + transpose, 2 B; Blackwell FP8:
// 1 B; MXFP8: 2 + 2/32; NVFP4: 2 x (0.5 + 1/16)). With it: the quantized parameter in the BF16 one's place.
TEST(Fp8ParamGather, MemoryHoldsTheQuantizedCopyOrTheQuantizedParameter) {
  const double bf16 = weights_bytes(job("bf16"));
  EXPECT_NEAR(weights_bytes(job("fp8", {"training.fp8_param_gather=false"})) - bf16, 2 * kQ, 1);
  EXPECT_NEAR(weights_bytes(job("fp8", {"training.fp8_param_gather=true"})) - bf16, 0, 1);
  EXPECT_NEAR(bf16 - weights_bytes(job("fp8", {"cluster.gpu=B200", "training.fp8_param_gather=true"})), kQ, 1);
  EXPECT_NEAR(weights_bytes(job("fp8", {"cluster.gpu=B200", "training.fp8_param_gather=false"})) - bf16, kQ, 1);
  EXPECT_NEAR(
      weights_bytes(job("fp8", {"cluster.gpu=B200", "training.fp8_recipe=mxfp8", "training.fp8_param_gather=false"})) -
          bf16,
      kQ * (2 + 2.0 / 32), 1);
  EXPECT_NEAR(weights_bytes(job("fp4", {"cluster.gpu=B200"})) - bf16, kQ * 2 * (0.5 + 1.0 / 16), 1);
  // Layers kept in BF16 under NVFP4 cache nothing: one of four layers here.
  EXPECT_NEAR(weights_bytes(job("fp4", {"cluster.gpu=B200", "training.bf16_layers_at_start=1"})) - bf16,
              0.75 * kQ * 2 * (0.5 + 1.0 / 16), 1);
  // TP 2 halves the per-rank linear weights (no replicated linears in a GPT layer).
  const std::string tp2 = "  tensor: 2\n  pipeline: 1\n";
  EXPECT_NEAR(weights_bytes(job("fp8", {"training.fp8_param_gather=false"}, tp2)) - weights_bytes(job("bf16", {}, tp2)),
              kQ, 1);
}

// An eager model's te.Linear keeps nothing across calls; FSDP's FP8 (torchao) has no cached copy either.
TEST(Fp8ParamGather, OnlyMegatronsTransformerEngineLayersCacheWeights) {
  EXPECT_NEAR(weights_bytes(job("fp8", {"training.fusion=eager"})),
              weights_bytes(job("bf16", {"training.fusion=eager"})), 1);
  const std::string fsdp = "  tensor: 1\n  pipeline: 1\n  framework: fsdp\n  zero_stage: 3\n";
  EXPECT_NEAR(weights_bytes(job("fp8", {}, fsdp)), weights_bytes(job("bf16", {}, fsdp)), 1);
}

TEST(Fp8ParamGather, NotGivenItIsOnWhereMegatronAllowsItAndSaysSo) {
  const Scenario fp8 = job("fp8");
  EXPECT_TRUE(fp8.training.fp8_param_gather);
  EXPECT_TRUE(inferred(fp8, "training.fp8_param_gather"));
  const Scenario given = job("fp8", {"training.fp8_param_gather=true"});
  EXPECT_TRUE(given.training.fp8_param_gather);
  EXPECT_FALSE(inferred(given, "training.fp8_param_gather"));
  const Scenario off = job("fp8", {"training.fp8_param_gather=false"});
  EXPECT_FALSE(off.training.fp8_param_gather);
  EXPECT_FALSE(inferred(off, "training.fp8_param_gather"));
  for (const Scenario& s :
       {job("bf16"), job("fp8", {"parallelism.zero_stage=0"}), job("fp8", {"training.fusion=eager"}),
        job("fp8", {}, "  tensor: 1\n  pipeline: 1\n  framework: fsdp\n  zero_stage: 3\n")}) {
    EXPECT_FALSE(s.training.fp8_param_gather);
    EXPECT_FALSE(inferred(s, "training.fp8_param_gather"));
  }
}

TEST(Fp8ParamGather, RefusedWhereMegatronHasNoFp8ParametersNamingTheKey) {
  const std::vector<std::string> on{"training.fp8_param_gather=true"};
  for (const std::string& message :
       {refusal("bf16", on), refusal("fp4", {"cluster.gpu=B200", "training.fp8_param_gather=true"}),
        refusal("fp8", {"training.fp8_param_gather=true", "parallelism.zero_stage=0"}),
        refusal("fp8", {"training.fp8_param_gather=true", "training.fusion=eager"}),
        refusal("fp8", on, "  tensor: 1\n  pipeline: 1\n  framework: fsdp\n  zero_stage: 3\n"),
        refusal("fp8", {"training.fp8_param_gather=yes"})}) {
    EXPECT_NE(message.find("training.fp8_param_gather"), std::string::npos) << message;
  }
  EXPECT_EQ(refusal("fp8", on), "");
}

}  // namespace trainsim
