// NVFP4 linears as Transformer Engine's NVFP4 recipe runs them (layer_ops_fp4.cpp): an amax pass and a quantize kernel
// before each fprop and dgrad GEMM, the weight's once per step (every forward call in an eager model), nothing before
// wgrad, no LayerNorm fusion, and the output layer and attention in BF16. Also what the scenario accepts.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace nvfp4_quantize_test {  // named: the unity build joins this file with fp8_quantize_test.cpp

constexpr int kHidden = 512, kFfn = 2048, kSeq = 1024, kMicro = 2, kLayers = 2;
// NVFP4 operand: 4-bit value + one E4M3 scale per 16 elements; the quantize kernel reads BF16 and writes two copies.
constexpr double kAmaxBytes = 2.0, kQuantizeBytes = 2.0 + 2.0 * (0.5 + 1.0 / 16.0);

Scenario fp4_scenario(const std::string& precision, const std::string& gpu = "B200",
                      const std::vector<std::string>& overrides = {}) {
  return test::small_gpt_scenario(precision, gpu, overrides);
}

std::map<std::string, test::SeenOps> ops_by_name(const Workload& wl) { return test::compute_ops_by_name(wl); }
Precision op_dtype(const Workload& wl, const std::string& name) { return test::compute_op_dtype(wl, name); }

TEST(Nvfp4Quantize, AmaxAndQuantizeBeforeFpropAndDgradOnly) {
  const Scenario s = fp4_scenario("fp4");
  ASSERT_EQ(s.micro_batches_per_iteration(), kMicro);
  const auto ops = ops_by_name(generate_workload(s, {}));
  const double tokens = kSeq;
  // Every linear's input, qkv's included: with the Hadamard transform TE's LayerNorm writes BF16 (no fused cast).
  for (const char* gemm : {"qkv", "proj", "fc1", "fc2"}) {
    SCOPED_TRACE(gemm);
    ASSERT_TRUE(ops.count(std::string("fp4.amax.") + gemm));
    EXPECT_EQ(ops.at(std::string("fp4.amax.") + gemm).count, kLayers * kMicro);
    EXPECT_EQ(ops.at(std::string("fp4.quantize.") + gemm).count, kLayers * kMicro);
  }
  EXPECT_DOUBLE_EQ(ops.at("fp4.amax.qkv").bytes, tokens * kHidden * kAmaxBytes);
  EXPECT_DOUBLE_EQ(ops.at("fp4.quantize.fc2").bytes, tokens * kFfn * kQuantizeBytes);
  // dgrad quantizes dY (tokens x the GEMM's output width).
  EXPECT_DOUBLE_EQ(ops.at("fp4.quantize.fc2.dgrad").bytes, tokens * kHidden * kQuantizeBytes);
  EXPECT_DOUBLE_EQ(ops.at("fp4.quantize.fc1.dgrad").bytes, tokens * kFfn * kQuantizeBytes);
  // Weights once per layer per step (Megatron's is_first_microbatch), ffn x hidden for fc1.
  EXPECT_EQ(ops.at("fp4.quantize_weight.fc1").count, kLayers);
  EXPECT_DOUBLE_EQ(ops.at("fp4.quantize_weight.fc1").bytes, double(kFfn) * kHidden * kQuantizeBytes);
  EXPECT_EQ(ops.at("fp4.amax_weight.fc1").count, kLayers);
  for (const auto& [name, seen] : ops) {
    if (name.rfind("fp4.", 0) != 0) continue;
    EXPECT_EQ(name.find(".wgrad"), name.npos) << name;
    EXPECT_EQ(name.find("lm_head"), name.npos) << name;
  }
}

TEST(Nvfp4Quantize, EagerModelQuantizesEveryForwardCallsWeights) {
  const auto ops = ops_by_name(generate_workload(fp4_scenario("fp4", "B200", {"training.fusion=eager"}), {}));
  EXPECT_EQ(ops.at("fp4.quantize_weight.fc1").count, kLayers * kMicro);
  const auto full = ops_by_name(
      generate_workload(fp4_scenario("fp4", "B200", {"training.fusion=eager", "training.recompute=full"}), {}));
  EXPECT_EQ(full.at("fp4.quantize_weight.fc1").count, 2 * kLayers * kMicro);
}

TEST(Nvfp4Quantize, LinearsRunFp4AndTheRestBf16) {
  const Workload wl = generate_workload(fp4_scenario("fp4"), {});
  EXPECT_EQ(op_dtype(wl, "fc1"), Precision::FP4);
  EXPECT_EQ(op_dtype(wl, "proj.dgrad"), Precision::FP4);
  EXPECT_EQ(op_dtype(wl, "fc2.wgrad"), Precision::FP4);
  EXPECT_EQ(op_dtype(wl, "lm_head"), Precision::BF16);
  EXPECT_EQ(op_dtype(wl, "core_attn.fwd"), Precision::BF16);
  // Unfused attention's batched GEMMs too (TE's fp8_dpa is off; Megatron's local attention is BF16 torch.baddbmm).
  const Workload unfused = generate_workload(fp4_scenario("fp4", "B200", {"training.flash_attention=false"}), {});
  EXPECT_EQ(op_dtype(unfused, "attn.qk"), Precision::BF16);
  EXPECT_EQ(op_dtype(unfused, "attn.pv.wgrad"), Precision::BF16);
}

// The same holds under FP8, whose unfused attention GEMMs had been priced in FP8.
TEST(Nvfp4Quantize, Fp8UnfusedAttentionGemmsAreBf16) {
  const Workload wl = generate_workload(fp4_scenario("fp8", "H100-SXM", {"training.flash_attention=false"}), {});
  EXPECT_EQ(op_dtype(wl, "attn.qk"), Precision::BF16);
  EXPECT_EQ(op_dtype(wl, "attn.qk.dgrad"), Precision::BF16);
  EXPECT_EQ(op_dtype(wl, "fc1"), Precision::FP8);
}

TEST(Nvfp4Quantize, Fp8HasNoNvfp4Kernels) {
  const auto ops = ops_by_name(generate_workload(fp4_scenario("fp8"), {}));
  for (const auto& [name, seen] : ops) EXPECT_NE(name.rfind("fp4.", 0), 0u) << name;
}

// training.bf16_layers_at_start / _at_end (Megatron's --first-last-layers-bf16): those layers' linears run BF16 with
// no quantization kernels; the others stay NVFP4. Layer 0 is the first, layer 1 the last of the two.
TEST(Nvfp4Quantize, FirstAndLastLayersKeptInBf16) {
  const auto layer_dtypes = [](const Workload& wl, const std::string& name) {
    std::map<int, Precision> out;
    for (const Op& op : wl.ranks[0].ops)
      if (op.type == Op::Type::Compute && wl.names[op.name] == name) out[op.layer] = wl.kernels[op.desc].dtype;
    return out;
  };
  const auto quantize_layers = [](const Workload& wl) {
    std::map<int, int> out;
    for (const Op& op : wl.ranks[0].ops)
      if (op.type == Op::Type::Compute && wl.names[op.name].rfind("fp4.", 0) == 0) out[op.layer] += 1;
    return out;
  };
  const Workload start = generate_workload(fp4_scenario("fp4", "B200", {"training.bf16_layers_at_start=1"}), {});
  EXPECT_EQ(layer_dtypes(start, "fc1"), (std::map<int, Precision>{{0, Precision::BF16}, {1, Precision::FP4}}));
  EXPECT_EQ(layer_dtypes(start, "qkv.wgrad"), (std::map<int, Precision>{{0, Precision::BF16}, {1, Precision::FP4}}));
  EXPECT_EQ(quantize_layers(start).count(0), 0u);
  EXPECT_GT(quantize_layers(start).at(1), 0);
  const Workload end = generate_workload(fp4_scenario("fp4", "B200", {"training.bf16_layers_at_end=1"}), {});
  EXPECT_EQ(layer_dtypes(end, "fc2.dgrad"), (std::map<int, Precision>{{0, Precision::FP4}, {1, Precision::BF16}}));
  EXPECT_EQ(quantize_layers(end).count(1), 0u);
}

// fp4 is TE's NVFP4 recipe: NVIDIA Blackwell only. Each refusal names training.precision and says why.
TEST(Nvfp4Quantize, RefusedOffNvidiaBlackwellNamingTheKey) {
  const auto message = [](const std::string& gpu, const std::vector<std::string>& overrides = {}) {
    try {
      fp4_scenario("fp4", gpu, overrides);
    } catch (const Error& e) { return std::string(e.what()); }
    return std::string();
  };
  const std::string hopper = message("H100-SXM");
  EXPECT_NE(hopper.find("training.precision"), std::string::npos) << hopper;
  EXPECT_NE(hopper.find("Blackwell"), std::string::npos) << hopper;
  // MI355X has an FP4 peak (MXFP4), but no NVFP4 training recipe.
  const std::string amd = message("MI355X");
  EXPECT_NE(amd.find("training.precision"), std::string::npos) << amd;
  EXPECT_NE(amd.find("NVIDIA Blackwell only"), std::string::npos) << amd;
  for (const char* gpu : {"B200", "GB200", "B300", "GB300"}) EXPECT_EQ(message(gpu), "") << gpu;
}

// The BF16-layer keys act under fp4 and Megatron only; each refusal names its key and says why.
TEST(Nvfp4Quantize, Bf16LayerKeysAreRefusedWhereTheyCannotAct) {
  const auto message = [](const std::string& precision, const std::vector<std::string>& overrides) {
    try {
      fp4_scenario(precision, precision == "fp4" ? "B200" : "H100-SXM", overrides);
    } catch (const Error& e) { return std::string(e.what()); }
    return std::string();
  };
  const std::string fp8 = message("fp8", {"training.bf16_layers_at_start=1"});
  EXPECT_NE(fp8.find("training.bf16_layers_at_start"), std::string::npos) << fp8;
  EXPECT_NE(fp8.find("delayed scaling"), std::string::npos) << fp8;
  const std::string bf16 = message("bf16", {"training.bf16_layers_at_end=1"});
  EXPECT_NE(bf16.find("training.bf16_layers_at_end"), std::string::npos) << bf16;
  const std::string all = message("fp4", {"training.bf16_layers_at_start=1", "training.bf16_layers_at_end=1"});
  EXPECT_NE(all.find("keep all 2 layers in BF16"), std::string::npos) << all;
  const std::string fsdp = message("fp4", {"training.bf16_layers_at_start=1", "parallelism.framework=fsdp"});
  EXPECT_NE(fsdp.find("framework fsdp"), std::string::npos) << fsdp;
  const std::string negative = message("fp4", {"training.bf16_layers_at_end=-1"});
  EXPECT_NE(negative.find("training.bf16_layers_at_end"), std::string::npos) << negative;
}

}  // namespace nvfp4_quantize_test
}  // namespace trainsim
