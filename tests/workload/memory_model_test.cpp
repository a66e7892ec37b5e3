// Memory model: model states against hand counts, activations against Korthikanti et al. 2022's closed forms,
// pipeline in-flight micro-batches against the schedules, and ZeRO/FSDP sharding against the ZeRO paper.
// Scenarios are built in code (the parser is tested elsewhere); every expected number is derived in a comment.
#include <gtest/gtest.h>

#include "core/units.hpp"
#include "workload/memory_model.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace {

ModelSpec gpt(int layers, std::int64_t h, int a, std::int64_t seq) {
  ModelSpec m;
  m.name = "test-gpt";
  m.family = "gpt";
  m.num_layers = layers;
  m.hidden_size = h;
  m.num_attention_heads = a;
  m.num_query_groups = a;
  m.kv_channels = h / a;
  m.ffn_hidden_size = 4 * h;
  m.vocab_size = 51200;
  m.seq_length = seq;
  return m;
}

Scenario memory_scenario(const ModelSpec& m, int t, int p, int d, std::int64_t global_batch, int micro_batch) {
  Scenario s;
  s.model = m;
  s.parallelism.tensor = t;
  s.parallelism.pipeline = p;
  s.parallelism.data = d;
  s.cluster.num_gpus = t * p * d;
  s.training.global_batch_size = global_batch;
  s.training.micro_batch_size = micro_batch;
  return s;
}

using test::gib;

// GPT-3 175B, TP 8, PP 8, DP 16 (Narayanan et al. 2021's 1024-GPU layout), bf16, Megatron distributed optimizer.
// One layer has 12h^2 + 13h parameters (Narayanan eq. 2); 6h of them (2 LayerNorms, 2 row-parallel output biases) are
// replicated over TP. A middle stage holds 96/8 = 12 layers: 12 * ((12h^2 + 7h)/8 + 6h) = 2.7183e9 parameters,
// i.e. about 175e9/64 = 2.73e9. Stage 0 adds the vocab-parallel embedding 51200*h/8 and learned positions 2048*h;
// the last stage adds the tied LM-head copy 51200*h/8 and the final LayerNorm 2h.
TEST(MemoryModel, Gpt3_175B_ModelStatesPerRank) {
  Scenario s = memory_scenario(gpt(96, 12288, 96, 2048), 8, 8, 16, 1536, 1);
  s.parallelism.zero_stage = 1;
  const auto stages = estimate_memory(s);
  ASSERT_EQ(stages.size(), 8u);
  const double h = 12288;
  const double middle = 12 * ((12 * h * h + 7 * h) / 8 + 6 * h);
  EXPECT_NEAR(middle / (175e9 / 64), 1.0, 0.01);
  EXPECT_NEAR(stages[3].weights_gib, gib(2 * middle), 1e-6);          // bf16 weights
  EXPECT_NEAR(stages[3].grads_gib, gib(4 * middle), 1e-6);            // fp32 main grads
  EXPECT_NEAR(stages[3].optimizer_gib, gib(12 * middle / 16), 1e-6);  // master+m+v over dp=16
  const double first = middle + 51200 * h / 8 + 2048 * h;
  const double last = middle + 51200 * h / 8 + 2 * h;
  EXPECT_NEAR(stages[0].weights_gib, gib(2 * first), 1e-6);
  EXPECT_NEAR(stages[7].weights_gib, gib(2 * last), 1e-6);
  for (const auto& st : stages) EXPECT_GT(st.total_gib(), st.weights_gib + st.grads_gib + st.optimizer_gib);
}

// Without the distributed optimizer (zero_stage 0) every rank keeps all 12 B/param of optimizer state.
TEST(MemoryModel, ZeroStageZeroKeepsFullOptimizer) {
  Scenario s = memory_scenario(gpt(96, 12288, 96, 2048), 8, 8, 16, 1536, 1);
  s.parallelism.zero_stage = 0;
  const auto stages = estimate_memory(s);
  EXPECT_NEAR(stages[3].optimizer_gib, 3 * stages[3].weights_gib * 2, 1e-9);  // 12 B vs 2 B per param
}

// One extra layer adds exactly one layer's activations. Korthikanti et al. 2022 (§4.1-4.2), bf16, per layer:
//   no parallelism                  s*b*h*(34 + 5*a*s/h)
//   TP t with sequence parallelism  s*b*h*(34/t + 5*a*s/(h*t))
//   TP t without SP                 s*b*h*(10 + 24/t + 5*a*s/(h*t))
// Flash attention (or selective recompute) removes the 5as/h term. p = 1, so one micro-batch is in flight.
class KorthikantiPerLayer : public ::testing::Test {
 protected:
  static constexpr double s = 2048, b = 2, h = 1024, a = 16;
  double one_layer_gib(int t, bool sp, bool flash, RecomputeGranularity rc = RecomputeGranularity::None,
                       Precision precision = Precision::BF16, Framework framework = Framework::Megatron) {
    auto run = [&](int layers) {
      Scenario sc = memory_scenario(gpt(layers, 1024, 16, 2048), t, 1, 1, 2, 2);
      sc.parallelism.sequence_parallel = sp;
      sc.parallelism.framework = framework;
      sc.training.flash_attention = flash;
      sc.training.recompute = rc;
      sc.training.precision = precision;
      return estimate_memory(sc)[0].activations_gib;
    };
    return run(3) - run(2);
  }
};

TEST_F(KorthikantiPerLayer, NoParallelism) {
  EXPECT_NEAR(one_layer_gib(1, false, false), gib(s * b * h * (34 + 5 * a * s / h)), 1e-9);
}

TEST_F(KorthikantiPerLayer, TensorParallelWithSequenceParallel) {
  EXPECT_NEAR(one_layer_gib(4, true, false), gib(s * b * h * (34.0 / 4 + 5 * a * s / (h * 4))), 1e-9);
}

TEST_F(KorthikantiPerLayer, TensorParallelWithoutSequenceParallel) {
  EXPECT_NEAR(one_layer_gib(4, false, false), gib(s * b * h * (10 + 24.0 / 4 + 5 * a * s / (h * 4))), 1e-9);
}

TEST_F(KorthikantiPerLayer, FlashAttentionAndSelectiveRecomputeDropTheSoftmaxTerm) {
  EXPECT_NEAR(one_layer_gib(1, false, true), gib(s * b * h * 34), 1e-9);
  EXPECT_NEAR(one_layer_gib(1, false, false, RecomputeGranularity::Selective), gib(s * b * h * 34), 1e-9);
}

// Transformer Engine's linears keep the quantized copy of their input for wgrad (1 B under FP8, 0.5625 B under
// NVFP4) instead of the BF16 tensor: QKV input 2 -> q, fc1 input 2 -> q, fc2 input 8 -> 4q (its 4h GELU output); the
// projection keeps q beside the BF16 attention output O that fused attention keeps for itself (2 -> 2 + q). The norm
// inputs, Q, K, V, the GELU input and the dropout masks stay. Per layer, flash, no parallelism:
//   34 - 1 - 1 - 4 + 1 = 29 sbh (FP8);  34 - 6 * 1.4375 + 0.5625 = 25.9375 sbh (NVFP4).
TEST_F(KorthikantiPerLayer, TransformerEngineKeepsQuantizedLinearInputs) {
  EXPECT_NEAR(one_layer_gib(1, false, true, RecomputeGranularity::None, Precision::FP8), gib(s * b * h * 29), 1e-9);
  EXPECT_NEAR(one_layer_gib(1, false, true, RecomputeGranularity::None, Precision::FP4), gib(s * b * h * 25.9375),
              1e-9);
  // Unfused attention keeps no O: the projection's quantized copy is its only input (34 - 7 = 27 sbh + softmax).
  EXPECT_NEAR(one_layer_gib(1, false, false, RecomputeGranularity::None, Precision::FP8),
              gib(s * b * h * (27 + 5 * a * s / h)), 1e-9);
  // torchao's Float8Linear (the FSDP stacks) saves the BF16 input: FP8 keeps what BF16 keeps there.
  EXPECT_NEAR(one_layer_gib(1, false, true, RecomputeGranularity::None, Precision::FP8, Framework::FSDP),
              one_layer_gib(1, false, true, RecomputeGranularity::None, Precision::BF16, Framework::FSDP), 1e-9);
}

// A layer kept in BF16 under NVFP4 (training.bf16_layers_at_start) keeps BF16 inputs: 34sbh instead of 25.9375sbh.
TEST_F(KorthikantiPerLayer, Bf16LayersUnderNvfp4KeepBf16Inputs) {
  auto run = [&](int bf16_at_start) {
    Scenario sc = memory_scenario(gpt(3, 1024, 16, 2048), 1, 1, 1, 2, 2);
    sc.training.precision = Precision::FP4;
    sc.training.bf16_layers_at_start = bf16_at_start;
    return estimate_memory(sc)[0].activations_gib;
  };
  EXPECT_NEAR(run(1) - run(0), gib(s * b * h * (34 - 25.9375)), 1e-9);
}

// Full recompute keeps only each layer's input, 2sbh (2sbh/t with SP).
TEST_F(KorthikantiPerLayer, FullRecomputeKeepsLayerInputs) {
  EXPECT_NEAR(one_layer_gib(1, false, true, RecomputeGranularity::Full), gib(2 * s * b * h), 1e-9);
  EXPECT_NEAR(one_layer_gib(4, true, true, RecomputeGranularity::Full), gib(2 * s * b * h / 4), 1e-9);
}

// Full recompute of all L layers: L * 2sbh + one layer's full activations (rebuilt during backward) + the stage's
// embedding/head terms, which do not depend on recompute; compare against no recompute on the same model.
TEST(MemoryModel, FullRecomputeTotal) {
  const double s = 2048, b = 1, h = 1024, L = 8;
  auto run = [&](RecomputeGranularity rc) {
    Scenario sc = memory_scenario(gpt(8, 1024, 16, 2048), 1, 1, 1, 1, 1);
    sc.training.recompute = rc;
    return estimate_memory(sc)[0].activations_gib;
  };
  const double full_layer = s * b * h * 34;
  const double none = run(RecomputeGranularity::None), full = run(RecomputeGranularity::Full);
  EXPECT_NEAR(none - full, gib(L * full_layer - (L * 2 * s * b * h + full_layer)), 1e-9);
}

// recompute_num_layers = [2]: two layers keep 2sbh, the rest keep full activations.
TEST(MemoryModel, PartialFullRecompute) {
  const double s = 2048, h = 1024;
  Scenario a = memory_scenario(gpt(8, 1024, 16, 2048), 1, 1, 1, 1, 1);
  a.training.recompute = RecomputeGranularity::Full;
  a.training.recompute_num_layers = {2};
  Scenario none = a;
  none.training.recompute = RecomputeGranularity::None;
  const double saved = 2 * (34 * s * h - 2 * s * h) - 34 * s * h;  // two layers checkpointed, one rebuilt at a time
  EXPECT_NEAR(estimate_memory(none)[0].activations_gib - estimate_memory(a)[0].activations_gib, gib(saved), 1e-9);
}

// 1F1B: stage i holds min(p - i, m) micro-batches; GPipe holds all m; no pipeline holds 1.
TEST(MemoryModel, InFlightMicroBatchesFollowTheSchedule) {
  Scenario s = memory_scenario(gpt(8, 1024, 16, 2048), 1, 4, 2, 16, 1);  // m = 16 / (1 * 2) = 8
  auto counts = [&] {
    std::vector<int> c;
    for (const auto& st : estimate_memory(s)) c.push_back(st.in_flight_micro_batches);
    return c;
  };
  EXPECT_EQ(counts(), (std::vector<int>{4, 3, 2, 1}));
  s.training.global_batch_size = 4;  // m = 2
  EXPECT_EQ(counts(), (std::vector<int>{2, 2, 2, 1}));
  s.parallelism.schedule = PipelineSchedule::GPipe;
  EXPECT_EQ(counts(), (std::vector<int>{2, 2, 2, 2}));
  Scenario flat = memory_scenario(gpt(8, 1024, 16, 2048), 1, 1, 8, 64, 1);
  EXPECT_EQ(estimate_memory(flat)[0].in_flight_micro_batches, 1);
}

// Interleaved 1F1B (Megatron): warm-up (p - i - 1)*2 + (v - 1)*p chunk-micro-batches + 1, each chunk 1/v of the
// stage's layers. p = 4, v = 2, m = 8: stage 0 holds 6 + 4 + 1 = 11 chunks = 5.5 micro-batches' worth of layers.
TEST(MemoryModel, InterleavedScheduleHoldsMoreOnFirstStage) {
  Scenario s = memory_scenario(gpt(16, 1024, 16, 2048), 1, 4, 1, 8, 1);
  s.training.flash_attention = true;
  Scenario flat = s;
  s.parallelism.virtual_pipeline = 2;
  const auto inter = estimate_memory(s);
  const auto plain = estimate_memory(flat);
  EXPECT_EQ(inter[0].in_flight_micro_batches, 6);  // ceil(11 / 2)
  // Middle stage 1: plain 1F1B holds 3 micro-batches of 4 layers; interleaved 4 + 4 + 1 = 9 chunks of 2 layers.
  const double layer = 2048.0 * 1024 * 34;
  EXPECT_NEAR(plain[1].activations_gib, gib(3 * 4 * layer), 1e-9);
  EXPECT_NEAR(inter[1].activations_gib, gib(9 * 2 * layer), 1e-9);
  // Last stage 3: (v - 1) p + 1 = 5 chunks in flight, but the loss's buffers are the last chunk's, whose forward is
  // followed at once by its backward there: one micro-batch's, s (4h + 6V), not ceil(5 / 2) = 3.
  const double sq = 2048, h = 1024, V = 51200;
  EXPECT_EQ(inter[3].in_flight_micro_batches, 3);
  EXPECT_NEAR(inter[3].activations_gib, gib(5 * 2 * layer + sq * (4 * h + 6 * V)), 1e-9);
}

// Last stage: final-norm and LM-head inputs (2 B each) plus the fp32 cross-entropy softmax 4 B x V/t, and the
// transient bf16 logits 2 B x V/t: with p = 1, t = 1, b = 1: s*(4h + 6V) on top of the layers.
TEST(MemoryModel, LogitsOnLastStage) {
  Scenario s = memory_scenario(gpt(1, 1024, 16, 2048), 1, 1, 1, 1, 1);
  s.training.flash_attention = true;
  const double sq = 2048, h = 1024, V = 51200;
  const double layer = sq * h * 34, embedding_mask = sq * h;
  EXPECT_NEAR(estimate_memory(s)[0].activations_gib, gib(layer + embedding_mask + sq * (4 * h + 6 * V)), 1e-9);
}

// FSDP (llm-foundry) trains without dropout and its fused cross-entropy keeps only the bf16 logits (2 B) plus a bf16
// gradient in backward (2 B): per token 32h per layer (34h minus the two masks), no embedding mask, and s*(4h + 4V).
TEST(MemoryModel, FsdpStackHasNoDropoutAndFusedCrossEntropy) {
  Scenario s = memory_scenario(gpt(1, 1024, 16, 2048), 1, 1, 1, 1, 1);
  s.parallelism.framework = Framework::FSDP;
  s.parallelism.zero_stage = 3;
  const double sq = 2048, h = 1024, V = 51200;
  EXPECT_NEAR(estimate_memory(s)[0].activations_gib, gib(sq * h * 32 + sq * (4 * h + 4 * V)), 1e-9);
}

// DeepSpeed ZeRO (Rajbhandari et al. 2020, §5): 2 + 2 + 12/N (stage 1), 2 + 14/N (stage 2), 16/N (stage 3) bytes
// per parameter, plus ZeRO-3's transient 4 B x largest layer. N = 8 here.
TEST(MemoryModel, DeepSpeedZeroStagesShardAsThePaperSays) {
  const ModelSpec m = gpt(4, 1024, 16, 2048);
  const double h = 1024;
  const double layer = 12 * h * h + 13 * h;
  const double params = 4 * layer + 51200 * h + 2048 * h + 2 * h;  // tied LM head, p = 1
  for (int z : {0, 1, 2, 3}) {
    Scenario s = memory_scenario(m, 1, 1, 8, 8, 1);
    s.parallelism.framework = Framework::DeepSpeed;
    s.parallelism.zero_stage = z;
    const StageMemory st = estimate_memory(s)[0];
    SCOPED_TRACE(z);
    const double largest_unit = std::max(layer, 51200 * h);
    EXPECT_NEAR(st.weights_gib, gib(z >= 3 ? 2 * params / 8 + 4 * largest_unit : 2 * params), 1e-9);
    EXPECT_NEAR(st.grads_gib, gib(z >= 2 ? 2 * params / 8 : 2 * params), 1e-9);
    EXPECT_NEAR(st.optimizer_gib, gib(z >= 1 ? 12 * params / 8 : 12 * params), 1e-9);
  }
}

// FSDP FULL_SHARD: fp32 shard 4/N + fp32 grads 4/N + Adam moments 8/N (PyTorch FSDP; docs/memory-model.md §2).
TEST(MemoryModel, FsdpFullShard) {
  Scenario s = memory_scenario(gpt(4, 1024, 16, 2048), 1, 1, 4, 4, 1);
  s.parallelism.framework = Framework::FSDP;
  s.parallelism.zero_stage = 3;
  const StageMemory st = estimate_memory(s)[0];
  EXPECT_NEAR(st.grads_gib * 2, st.optimizer_gib, 1e-12);
  // grads: 4 B x params / 4 ranks = 1 B per parameter of the (tied, p = 1) model.
  const double params = 4 * (12.0 * 1024 * 1024 + 13 * 1024) + 51200.0 * 1024 + 2048.0 * 1024 + 2 * 1024;
  EXPECT_NEAR(st.grads_gib * kGiB, params, 1.0);
}

// FSDP under a pipeline (SHARD_GRAD_OP) accumulates every unit's unsharded gradient across micro-batches, upcast to
// the fp32 reduce dtype, beside the fp32 shard (zero-fsdp.md §3.2): grads = 4 B x params / 4 ranks + 4 B x params;
// 2 B for the unsharded part with a bf16 reduce. The gradient memory of the same stage without the pipeline's
// accumulation is the shard alone.
TEST(MemoryModel, FsdpUnderPipelineHoldsTheUnshardedGradient) {
  Scenario s = memory_scenario(gpt(4, 1024, 16, 2048), 1, 2, 4, 8, 1);
  s.parallelism.framework = Framework::FSDP;
  s.parallelism.zero_stage = 2;
  const double layer = 12.0 * 1024 * 1024 + 13 * 1024;
  const double last_stage = 2 * layer + 51200.0 * 1024 + 2 * 1024;  // 2 layers, the (untied across stages) head
  const StageMemory fp32_reduce = estimate_memory(s)[1];
  EXPECT_NEAR(fp32_reduce.grads_gib * kGiB, last_stage * (4.0 / 4 + 4.0), 64.0);
  s.training.grad_reduce_in_bf16 = true;
  EXPECT_NEAR(estimate_memory(s)[1].grads_gib * kGiB, last_stage * (4.0 / 4 + 2.0), 64.0);
}

// MoE: routed experts are divided by EP x TP, and their optimizer state by expert-DP = dp / ep.
// Layer: 8 experts of 2 x 1024 x 4096 (GELU), so 8 * 8h^2 = 64h^2 expert params; EP 4, TP 2 -> 8h^2 per rank;
// dp 8 -> expert-DP 2.
TEST(MemoryModel, MoeExpertsShardOverExpertParallel) {
  ModelSpec m = gpt(1, 1024, 16, 2048);
  m.add_bias_linear = false;
  Scenario dense = memory_scenario(m, 2, 1, 8, 8, 1);
  ModelSpec moe_model = m;
  moe_model.moe.num_experts = 8;
  moe_model.moe.router_topk = 2;
  moe_model.moe.expert_ffn_hidden_size = 4096;
  Scenario moe = dense;
  moe.model = moe_model;
  moe.parallelism.expert = 4;
  const double h = 1024;
  // Dense layer MLP per TP rank: 8h^2 / 2. MoE layer: experts 64h^2 / (4 * 2) + router 8h (replicated).
  const double dense_mlp = 8 * h * h / 2, expert = 64 * h * h / 8, router = 8 * h;
  const auto d = estimate_memory(dense)[0], e = estimate_memory(moe)[0];
  EXPECT_NEAR(e.weights_gib - d.weights_gib, gib(2 * (expert + router - dense_mlp)), 1e-9);
  EXPECT_NEAR(e.optimizer_gib - d.optimizer_gib, gib(12 * (expert / 2 + (router - dense_mlp) / 8)), 1e-9);
}

// Untied embeddings: the last stage holds its own LM head; with p = 1 and tied weights it is counted once.
TEST(MemoryModel, UntiedHeadAndTiedSingleStage) {
  ModelSpec m = gpt(2, 1024, 16, 2048);
  Scenario tied = memory_scenario(m, 1, 1, 1, 1, 1);
  m.untie_embeddings = true;
  Scenario untied = memory_scenario(m, 1, 1, 1, 1, 1);
  EXPECT_NEAR(estimate_memory(untied)[0].weights_gib - estimate_memory(tied)[0].weights_gib, gib(2 * 51200.0 * 1024),
              1e-9);
}

// The allowance is at least the fixed part (CUDA context + workspaces, 1.5 GiB) and grows with communicators.
TEST(MemoryModel, OtherAllowance) {
  const auto single = estimate_memory(memory_scenario(gpt(2, 1024, 16, 2048), 1, 1, 1, 1, 1))[0];
  const auto parallel = estimate_memory(memory_scenario(gpt(2, 1024, 16, 2048), 2, 2, 2, 4, 1))[0];
  EXPECT_GE(single.other_gib, 1.5);
  EXPECT_LT(single.other_gib, 3.0);
  // TP, PP and DP communicators: 3 x 16 channels x (4 MiB + 4,915,200 B + 512 KiB) of NCCL FIFOs.
  const double nccl = 3 * 16 * (4194304.0 + 4915200.0 + 524288.0);
  EXPECT_NEAR(parallel.other_gib - 0.1 * parallel.activations_gib,
              single.other_gib - 0.1 * single.activations_gib + gib(nccl), 1e-9);
}

// tp_comm_overlap: Transformer Engine's 10 userbuffers of [s x b / c, h], bf16 (TE initialize_ub); under FP8 the six
// all-gather buffers are FP8. 2,048 tokens x 1,024 x (10 x 2 B) = 40 MiB; FP8 (6 x 1 + 4 x 2) = 28 MiB.
TEST(MemoryModel, UserbuffersUnderTpCommOverlap) {
  Scenario s = memory_scenario(gpt(2, 1024, 16, 2048), 2, 1, 1, 1, 1);
  const double without = estimate_memory(s)[0].other_gib;
  s.parallelism.tp_comm_overlap = true;
  EXPECT_NEAR(estimate_memory(s)[0].other_gib - without, gib(2048.0 * 1024 * 20), 1e-9);
  s.training.precision = Precision::FP8;
  const double fp8_without = [&] {
    Scenario plain = s;
    plain.parallelism.tp_comm_overlap = false;
    return estimate_memory(plain)[0].other_gib;
  }();
  EXPECT_NEAR(estimate_memory(s)[0].other_gib - fp8_without, gib(2048.0 * 1024 * 14), 1e-9);
}

}  // namespace
}  // namespace trainsim
