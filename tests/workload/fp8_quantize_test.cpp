// FP8 linears as Transformer Engine runs them (layer_ops_fp8.cpp): cast-transpose kernels before each
// FP8 fprop and dgrad GEMM, a transpose only after a TE-fused LayerNorm, BF16 weights cast on the first
// micro-batch only (FP8 parameters only transposed, on Hopper), nothing before wgrad, and the output layer kept in
// BF16.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace {

constexpr int kHidden = 512, kFfn = 2048, kSeq = 1024, kMicro = 2, kLayers = 2;

Scenario fp8_scenario(const std::string& precision, const std::string& model_extra = "",
                      const std::vector<std::string>& overrides = {}) {
  return test::small_gpt_scenario(precision, "H100-SXM", overrides, model_extra);
}

std::map<std::string, test::SeenOps> ops_by_name(const Workload& wl) { return test::compute_ops_by_name(wl); }
Precision gemm_dtype(const Workload& wl, const std::string& name) { return test::compute_op_dtype(wl, name); }

}  // namespace

TEST(Fp8Quantize, CastsBeforeFpropAndDgradOnly) {
  // BF16 weights (Megatron's default without --fp8-param-gather): TE casts them.
  const Scenario s = fp8_scenario("fp8", "", {"training.fp8_param_gather=false"});
  const int mbs = s.micro_batches_per_iteration();
  ASSERT_EQ(mbs, kMicro);
  const auto ops = ops_by_name(generate_workload(s, {}));
  const double tokens = kSeq;  // micro-batch 1 x sequence
  // proj's input (the attention output) is cast with its transpose: 4 B per element.
  ASSERT_TRUE(ops.count("fp8.cast_transpose.proj"));
  EXPECT_EQ(ops.at("fp8.cast_transpose.proj").count, kLayers * kMicro);
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast_transpose.proj").bytes, tokens * kHidden * 4.0);
  // qkv's input comes out of TE's fused LayerNorm in FP8: only the transpose (2 B per element).
  EXPECT_DOUBLE_EQ(ops.at("fp8.transpose.qkv").bytes, tokens * kHidden * 2.0);
  EXPECT_EQ(ops.count("fp8.cast_transpose.qkv"), 0u);
  // dgrad casts dY (tokens x the GEMM's output width): fc2's dY is tokens x hidden.
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast_transpose.fc2.dgrad").bytes, tokens * kHidden * 4.0);
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast_transpose.fc1.dgrad").bytes, tokens * kFfn * 4.0);
  // Weights: once per layer per iteration (first micro-batch), the fc1 weight is ffn x hidden.
  EXPECT_EQ(ops.at("fp8.cast_weight.fc1").count, kLayers);
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast_weight.fc1").bytes, double(kFfn) * kHidden * 4.0);
  // wgrad reuses the transposed copies; the output layer is not a TE module.
  for (const auto& [name, seen] : ops) {
    EXPECT_EQ(name.find(".wgrad", name.find("fp8.")), name.npos) << name;
    EXPECT_EQ(name.find("lm_head", name.find("fp8.")), name.npos) << name;
  }
}

// An eager model with te.Linear layers (training.fusion: eager): its norm is PyTorch's, so qkv's input is cast
// with its transpose like any other, and with no is_first_microbatch every forward call casts the weights.
TEST(Fp8Quantize, EagerModelCastsEveryInputAndEveryMicroBatchesWeights) {
  const auto ops = ops_by_name(generate_workload(fp8_scenario("fp8", "", {"training.fusion=eager"}), {}));
  const double tokens = kSeq;
  EXPECT_EQ(ops.count("fp8.transpose.qkv"), 0u);
  ASSERT_TRUE(ops.count("fp8.cast_transpose.qkv"));
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast_transpose.qkv").bytes, tokens * kHidden * 4.0);
  EXPECT_EQ(ops.at("fp8.cast_weight.fc1").count, kLayers * kMicro);
  // A recomputed forward casts them again.
  const auto full =
      ops_by_name(generate_workload(fp8_scenario("fp8", "", {"training.fusion=eager", "training.recompute=full"}), {}));
  EXPECT_EQ(full.at("fp8.cast_weight.fc1").count, 2 * kLayers * kMicro);
}

TEST(Fp8Quantize, OutputLayerStaysBf16AndLinearsRunFp8) {
  const Workload wl = generate_workload(fp8_scenario("fp8"), {});
  EXPECT_EQ(gemm_dtype(wl, "fc1"), Precision::FP8);
  EXPECT_EQ(gemm_dtype(wl, "proj.dgrad"), Precision::FP8);
  EXPECT_EQ(gemm_dtype(wl, "lm_head"), Precision::BF16);
  EXPECT_EQ(gemm_dtype(wl, "lm_head.wgrad"), Precision::BF16);
}

// MTP's output head is built outside Transformer Engine too (its name is not "lm_head").
TEST(Fp8Quantize, MtpOutputHeadStaysBf16) {
  const Workload wl = generate_workload(fp8_scenario("fp8", "  mtp_layers: 1\n"), {});
  EXPECT_EQ(gemm_dtype(wl, "mtp.lm_head"), Precision::BF16);
  EXPECT_EQ(gemm_dtype(wl, "mtp.lm_head.dgrad"), Precision::BF16);
  for (const auto& [name, seen] : ops_by_name(wl)) EXPECT_EQ(name.find("fp8.cast_weight.mtp.lm_head"), name.npos);
}

// training.fp8_recipe tensorwise (TE's current scaling): an amax pass (2 B) before each cast; after a TE norm the norm
// computes the amax and the cast-transpose follows (no transpose-only shortcut). mxfp8 (B200): one quantize kernel per
// tensor (2 B read, 1 + 1 B and a scale per 32 written), no norm fusion, and block-scaled GEMMs.
TEST(Fp8Quantize, RecipesEmitTheirOwnKernels) {
  const double tokens = kSeq;
  const auto tw = ops_by_name(generate_workload(
      fp8_scenario("fp8", "", {"training.fp8_recipe=tensorwise", "training.fp8_param_gather=false"}), {}));
  EXPECT_DOUBLE_EQ(tw.at("fp8.amax.proj").bytes, tokens * kHidden * 2.0);
  EXPECT_DOUBLE_EQ(tw.at("fp8.cast_transpose.proj").bytes, tokens * kHidden * 4.0);
  EXPECT_EQ(tw.count("fp8.amax.qkv"), 0u);  // the TE norm's amax
  EXPECT_DOUBLE_EQ(tw.at("fp8.cast_transpose.qkv").bytes, tokens * kHidden * 4.0);
  EXPECT_EQ(tw.count("fp8.transpose.qkv"), 0u);
  EXPECT_EQ(tw.at("fp8.amax_weight.fc1").count, kLayers);
  const Workload mx = generate_workload(test::small_gpt_scenario("fp8", "B200", {"training.fp8_recipe=mxfp8"}), {});
  const auto mxo = ops_by_name(mx);
  EXPECT_DOUBLE_EQ(mxo.at("fp8.quantize.qkv").bytes, tokens * kHidden * (2.0 + 2.0 * (1.0 + 1.0 / 32.0)));
  EXPECT_EQ(mxo.at("fp8.quantize_weight.fc1").count, kLayers);
  for (const auto& [name, seen] : mxo) EXPECT_EQ(name.find("fp8.amax"), name.npos) << name;
  for (const Op& op : mx.ranks[0].ops) {
    if (op.type == Op::Type::Compute && mx.names[op.name] == "fc1") { EXPECT_TRUE(mx.kernels[op.desc].block_scaled); }
  }
  // Delayed and tensorwise GEMMs are tensor-scaled.
  const Workload delayed = generate_workload(fp8_scenario("fp8"), {});
  for (const Op& op : delayed.ranks[0].ops) {
    if (op.type == Op::Type::Compute && delayed.names[op.name] == "fc1") {
      EXPECT_FALSE(delayed.kernels[op.desc].block_scaled);
    }
  }
}

// FP8 parameters (training.fp8_param_gather, on by default where Megatron allows it): no weight cast. On Hopper, whose
// FP8 GEMMs take only TN, the first forward transposes each weight (1 B read, 1 B written) for the dgrad; on
// Blackwell nothing; MXFP8 parameters are gathered in BF16 and quantized as before.
TEST(Fp8Quantize, Fp8ParametersAreTransposedNotCast) {
  const auto hopper = ops_by_name(generate_workload(fp8_scenario("fp8"), {}));
  EXPECT_EQ(hopper.count("fp8.cast_weight.fc1"), 0u);
  ASSERT_TRUE(hopper.count("fp8.transpose_weight.fc1"));
  EXPECT_EQ(hopper.at("fp8.transpose_weight.fc1").count, kLayers);
  EXPECT_DOUBLE_EQ(hopper.at("fp8.transpose_weight.fc1").bytes, double(kFfn) * kHidden * 2.0);
  const auto tensorwise =
      ops_by_name(generate_workload(fp8_scenario("fp8", "", {"training.fp8_recipe=tensorwise"}), {}));
  EXPECT_EQ(tensorwise.count("fp8.amax_weight.fc1"), 0u);
  EXPECT_EQ(tensorwise.at("fp8.transpose_weight.fc1").count, kLayers);
  const auto blackwell = ops_by_name(generate_workload(test::small_gpt_scenario("fp8", "B200", {}), {}));
  for (const auto& [name, seen] : blackwell) EXPECT_EQ(name.find("_weight."), name.npos) << name;
  const auto mxfp8 =
      ops_by_name(generate_workload(test::small_gpt_scenario("fp8", "B200", {"training.fp8_recipe=mxfp8"}), {}));
  EXPECT_EQ(mxfp8.at("fp8.quantize_weight.fc1").count, kLayers);
}

// Under TP 2 with sequence parallelism TE quantizes an all-gathered input's local shard (T/2 rows) before the
// gather and transposes the gathered T rows for the wgrad: proj's and fc2's dY get a cast (3 B per element) on the
// shard and a transpose (2 B) on the whole; qkv's norm-fused input only the transpose; tensorwise adds an amax
// pass on the shard; MXFP8 quantizes both copies on the shard. proj's forward input is not gathered: as before.
TEST(Fp8Quantize, SequenceParallelInputsAreQuantizedOnTheShard) {
  const double tokens = kSeq, shard = kSeq / 2.0;
  const std::vector<std::string> tp2{"parallelism.tensor=2", "parallelism.sequence_parallel=true"};
  const auto ops = ops_by_name(generate_workload(fp8_scenario("fp8", "", tp2), {}));
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast.fc2.dgrad").bytes, shard * kHidden * 3.0);
  EXPECT_DOUBLE_EQ(ops.at("fp8.transpose.fc2.dgrad").bytes, tokens * kHidden * 2.0);
  EXPECT_EQ(ops.count("fp8.cast_transpose.fc2.dgrad"), 0u);
  EXPECT_DOUBLE_EQ(ops.at("fp8.transpose.qkv").bytes, tokens * kHidden * 2.0);
  EXPECT_EQ(ops.count("fp8.cast.qkv"), 0u);
  EXPECT_DOUBLE_EQ(ops.at("fp8.cast_transpose.proj").bytes, tokens * (kHidden / 2) * 4.0);
  std::vector<std::string> tensorwise = tp2;
  tensorwise.push_back("training.fp8_recipe=tensorwise");
  const auto tw = ops_by_name(generate_workload(fp8_scenario("fp8", "", tensorwise), {}));
  EXPECT_DOUBLE_EQ(tw.at("fp8.amax.fc2.dgrad").bytes, shard * kHidden * 2.0);
  EXPECT_DOUBLE_EQ(tw.at("fp8.cast.fc1").bytes, shard * kHidden * 3.0);
  EXPECT_DOUBLE_EQ(tw.at("fp8.transpose.fc1").bytes, tokens * kHidden * 2.0);
  std::vector<std::string> mxfp8 = tp2;
  mxfp8.push_back("training.fp8_recipe=mxfp8");
  const auto mx = ops_by_name(generate_workload(test::small_gpt_scenario("fp8", "B200", mxfp8), {}));
  EXPECT_DOUBLE_EQ(mx.at("fp8.quantize.qkv").bytes, shard * kHidden * (2.0 + 2.0 * (1.0 + 1.0 / 32.0)));
}

// The recipe key acts under fp8 only, and MXFP8 needs Blackwell; each refusal names the key.
TEST(Fp8Quantize, RecipeKeyIsRefusedWhereItCannotAct) {
  const auto message = [](const std::string& precision, const std::string& gpu, const std::string& recipe) {
    try {
      test::small_gpt_scenario(precision, gpu, {"training.fp8_recipe=" + recipe});
    } catch (const Error& e) { return std::string(e.what()); }
    return std::string();
  };
  const std::string bf16 = message("bf16", "H100-SXM", "tensorwise");
  EXPECT_NE(bf16.find("training.fp8_recipe"), std::string::npos) << bf16;
  EXPECT_NE(bf16.find("fp8 only"), std::string::npos) << bf16;
  const std::string hopper = message("fp8", "H100-SXM", "mxfp8");
  EXPECT_NE(hopper.find("training.fp8_recipe"), std::string::npos) << hopper;
  EXPECT_NE(hopper.find("Blackwell"), std::string::npos) << hopper;
  EXPECT_EQ(message("fp8", "B200", "mxfp8"), "");
  EXPECT_EQ(message("fp8", "H100-SXM", "tensorwise"), "");
}

TEST(Fp8Quantize, Bf16HasNoQuantizationKernels) {
  const auto ops = ops_by_name(generate_workload(fp8_scenario("bf16"), {}));
  for (const auto& [name, seen] : ops) EXPECT_NE(name.rfind("fp8.", 0), 0u) << name;
}

}  // namespace trainsim

namespace trainsim {
// tp_comm_overlap: Transformer Engine's userbuffers hold their own SM counts (ring exchange 1, pipelined
// and bulk 16); without it every TP call is NCCL's (sms = -1, one CTA per channel).
TEST(UserbuffersSms, TpOverlapCallsCarryTheirSmCounts) {
  auto with = [](bool overlap) {
    const std::string yaml = std::string(R"(
model: {family: gpt, num_layers: 2, hidden_size: 512, num_attention_heads: 8, ffn_hidden_size: 2048,
        vocab_size: 1024, seq_length: 1024}
training: {global_batch_size: 8, micro_batch_size: 1, precision: bf16}
parallelism: {tensor: 2, pipeline: 1, sequence_parallel: true, tp_comm_overlap: )") +
                             (overlap ? "true" : "false") + R"(}
cluster: {gpu: H100-SXM, num_gpus: 8, gpus_per_node: 8}
)";
    const Workload wl = generate_workload(parse_scenario(yaml, "ub.yaml"), {});
    std::map<std::string, int> sms;
    for (const Op& op : wl.ranks[0].ops)
      if (op.type == Op::Type::Collective) sms[wl.names[op.name]] = wl.collectives[op.desc].sms;
    return sms;
  };
  const auto ub = with(true);
  EXPECT_EQ(ub.at("tp.ag.qkv_input"), 16);  // the backward's bulk all-gather of the input comes last
  EXPECT_EQ(ub.at("tp.rs.proj"), 16);
  EXPECT_EQ(ub.at("tp.rs.qkv_dgrad"), 16);
  EXPECT_EQ(ub.at("tp.ag.proj_dy"), 1);
  for (const auto& [name, n] : with(false)) EXPECT_EQ(n, -1) << name;
}
}  // namespace trainsim

namespace trainsim {
// Under FP8 and NVFP4 Transformer Engine quantizes the local shard and all-gathers the quantized copy (distributed.py
// gather_along_first_dim with the quantizer): the TP all-gathers of the linears' inputs and dYs move 1 B per element
// (MXFP8 1 + 1/32, NVFP4 0.5625), the output layer's input and every reduce-scatter the training dtype.
TEST(Fp8Quantize, TensorParallelAllGathersMoveTheQuantizedCopy) {
  const auto bytes_by_layer = [](const std::string& precision, const std::string& gpu,
                                 const std::vector<std::string>& extra) {
    std::vector<std::string> overrides{"parallelism.tensor=2", "parallelism.sequence_parallel=true"};
    overrides.insert(overrides.end(), extra.begin(), extra.end());
    const Workload wl = generate_workload(test::small_gpt_scenario(precision, gpu, overrides), {});
    std::map<std::pair<std::string, int>, double> out;
    for (const Op& op : wl.ranks[0].ops)
      if (op.type == Op::Type::Collective)
        out[{wl.names[op.name], op.layer}] = static_cast<double>(wl.collectives[op.desc].bytes);
    return out;
  };
  const auto bf16 = bytes_by_layer("bf16", "H100-SXM", {});
  const double act = bf16.at({"tp.ag.qkv_input", 0});
  EXPECT_DOUBLE_EQ(act, 1024.0 * 512 * 2);  // T x h x 2 B: 1,024 tokens of one micro-batch
  const auto check = [&](const std::map<std::pair<std::string, int>, double>& q, double per_element, int layer) {
    for (const char* name : {"tp.ag.qkv_input", "tp.ag.fc1_input", "tp.ag.proj_dy", "tp.ag.fc2_dy"})
      EXPECT_DOUBLE_EQ(q.at({name, layer}), std::floor(act / 2 * per_element)) << name << " layer " << layer;
    EXPECT_DOUBLE_EQ(q.at({"tp.rs.fc2", layer}), act);
  };
  const auto fp8 = bytes_by_layer("fp8", "H100-SXM", {});
  check(fp8, 1.0, 0);
  check(fp8, 1.0, 1);
  EXPECT_DOUBLE_EQ(fp8.at({"tp.ag.lm_head_input", -1}), act);
  check(bytes_by_layer("fp8", "B200", {"training.fp8_recipe=mxfp8"}), 1.0 + 1.0 / 32.0, 1);
  const auto fp4 = bytes_by_layer("fp4", "B200", {"training.bf16_layers_at_start=1"});
  check(fp4, 2.0, 0);  // kept in BF16
  check(fp4, 0.5625, 1);
}
}  // namespace trainsim
