// DeepSpeed ZeRO in the generated workload, counted by hand (stage_1_and_2.py, stage3.py; docs/zero-and-fsdp.md
// §3). The model: GPT, 2 layers, h 1024, 16 heads, F 4096, vocab 51200 (already a multiple of 128), s 1024,
// tied embeddings, on 8 GPUs (DP 8, TP 1), micro-batch 1, global batch 32 -> GA = 4 micro-batches, bf16.
//
// Tensors on the rank (forward order) and their elements:
//   embedding 51200 x 1024 = 52,428,800   position embedding 1024 x 1024 = 1,048,576
//   per layer: input_norm 1024 + 1024, qkv 3,145,728 + 3072, proj 1,048,576 + 1024, pre_mlp_norm 1024 + 1024,
//              fc1 4,194,304 + 4096, fc2 4,194,304 + 1024  = 12,596,224 (12h^2 + 13h)
//   final norm 1024 + 1024
//   Psi = 52,428,800 + 1,048,576 + 2 x 12,596,224 + 2048 = 78,671,872 elements (157,343,744 B in bf16).
// Parameter groups: weights (decay) 52,428,800 + 1,048,576 + 2 x 12,582,912 = 78,643,200; vectors 28,672.
// Both are multiples of 2N = 16 and of N = 8, so no padding anywhere.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

#include "core/units.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"
#include "workload/memory_model.hpp"
#include "workload_test_support.hpp"

namespace trainsim {
namespace {

constexpr double kPsi = 78'671'872;
constexpr double kDecay = 78'643'200;  // also the non-persistent elements of ZeRO-3 (every vector is <= 1e5)
constexpr double kEmbedding = 52'428'800;
constexpr int kMicroBatches = 4;

Scenario deepspeed_scenario(int zero_stage, const std::string& deepspeed_block = "") {
  std::string yaml = R"(
model:
  family: gpt
  num_layers: 2
  hidden_size: 1024
  num_attention_heads: 16
  vocab_size: 51200
  seq_length: 1024
training:
  global_batch_size: 32
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 1
  pipeline: 1
  framework: deepspeed
  zero_stage: )" + std::to_string(zero_stage) +
                     "\n";
  if (!deepspeed_block.empty()) yaml += "  deepspeed: " + deepspeed_block + "\n";
  yaml += R"(cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";
  return parse_scenario(yaml, "deepspeed.yaml");
}

bool on_dp(const Workload& wl, const Op& op) {
  return op.type == Op::Type::Collective && wl.groups[wl.collectives[op.desc].group].kind == GroupKind::DP;
}

// DP collectives of one rank: bytes (NCCL nBytes) and calls per op name.
struct DpTraffic {
  std::map<std::string, double> bytes;
  std::map<std::string, int> calls;
  std::vector<double> sizes(const Workload& wl, const RankProgram& r, const std::string& name) const {
    std::vector<double> out;
    for (const Op& op : r.ops)
      if (on_dp(wl, op) && wl.names[op.name] == name) out.push_back(static_cast<double>(wl.collectives[op.desc].bytes));
    return out;
  }
};

DpTraffic dp_traffic(const Workload& wl, const RankProgram& r) {
  DpTraffic t;
  for (const Op& op : r.ops) {
    if (!on_dp(wl, op)) continue;
    t.bytes[wl.names[op.name]] += static_cast<double>(wl.collectives[op.desc].bytes);
    ++t.calls[wl.names[op.name]];
  }
  return t;
}

using test::count_named;

bool depends_on(const RankProgram& r, const Op& op, std::uint32_t target) {
  for (std::uint32_t i = 0; i < op.num_deps; ++i)
    if (r.deps[op.first_dep + i] == target) return true;
  return false;
}

// The next compute op after `index` in issue order.
const Op* next_compute(const RankProgram& r, std::size_t index) {
  for (std::size_t i = index + 1; i < r.ops.size(); ++i)
    if (r.ops[i].type == Op::Type::Compute) return &r.ops[i];
  return nullptr;
}

// ZeRO-1, overlap_comm false (its default), reduce_bucket_size 3e7. Only the boundary micro-batch reduces, after
// its whole backward, in parameter-group order (weights in forward order, then vectors): the embedding alone
// (52,428,800 > 3e7, and the next tensor would overflow), then position embedding + both layers' weights +
// all vectors = 26,243,072. All-reduce bytes = Psi x 2 B = 157,343,744 (NCCL nBytes: the buffer), plus two 4-byte
// grad-norm all-reduces (one per group); then one parameter all-gather per group: 78,643,200 x 2 and 28,672 x 2.
TEST(DeepSpeedWorkload, Zero1ReducesOnceAfterTheLastBackward) {
  const Workload wl = generate_workload(deepspeed_scenario(1, "{reduce_bucket_size: 3e7}"));
  const RankProgram& r = wl.ranks[0];
  const DpTraffic t = dp_traffic(wl, r);
  EXPECT_EQ(t.sizes(wl, r, "zero.grad_all_reduce"), std::vector<double>({kEmbedding * 2, 26'243'072.0 * 2}));
  EXPECT_DOUBLE_EQ(t.bytes.at("zero.grad_all_reduce"), kPsi * 2);
  EXPECT_EQ(t.sizes(wl, r, "zero.grad_norm_all_reduce"), std::vector<double>({4, 4}));
  EXPECT_EQ(t.sizes(wl, r, "zero.param_allgather"), std::vector<double>({kDecay * 2, 28'672.0 * 2}));
  EXPECT_EQ(t.calls.size(), 3u);  // nothing else on DP (bf16: no overflow all-reduce)
  // No DP collective before the last micro-batch's backward has been issued completely.
  std::size_t last_backward = 0, first_dp = r.ops.size();
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    const Op& op = r.ops[i];
    if (op.type == Op::Type::Compute && op.phase == Phase::Backward && op.micro_batch == kMicroBatches - 1)
      last_backward = i;
    if (on_dp(wl, op)) first_dp = std::min(first_dp, i);
  }
  EXPECT_GT(first_dp, last_backward);
  // Each bucket is flushed synchronously: the next kernel waits for its all-reduce.
  for (std::size_t i = 0; i < r.ops.size(); ++i)
    if (on_dp(wl, r.ops[i]) && wl.names[r.ops[i].name] == "zero.grad_all_reduce") {
      EXPECT_TRUE(depends_on(r, *next_compute(r, i), static_cast<std::uint32_t>(i)));
    }
}

// ZeRO-2 reduces every micro-batch during backward, in autograd order: final norm, layer 1, layer 0, position
// embedding = 26,243,072 fit one 3e7 bucket; the embedding (last) would overflow it and is alone.
// Per iteration: GA x Psi x 2 B of all-reduce (4 x 157,343,744) + the same all-gathers as ZeRO-1 (2 Psi GA + Psi).
// Every gradient but the oversize embedding is copied into the ipg buffer: 2 x 12 + 1 + 2 = 27 copies per
// micro-batch. Micro-batches 1..3 add their reduced partition into the accumulated one.
TEST(DeepSpeedWorkload, Zero2ReducesEveryMicroBatch) {
  const Workload wl = generate_workload(deepspeed_scenario(2, "{reduce_bucket_size: 3e7}"));
  const RankProgram& r = wl.ranks[0];
  const DpTraffic t = dp_traffic(wl, r);
  const auto ar = t.sizes(wl, r, "zero.grad_all_reduce");
  ASSERT_EQ(ar.size(), 2u * kMicroBatches);
  for (int mb = 0; mb < kMicroBatches; ++mb) {
    EXPECT_DOUBLE_EQ(ar[2 * static_cast<std::size_t>(mb)], 26'243'072.0 * 2);
    EXPECT_DOUBLE_EQ(ar[2 * static_cast<std::size_t>(mb) + 1], kEmbedding * 2);
  }
  EXPECT_DOUBLE_EQ(t.bytes.at("zero.grad_all_reduce"), kMicroBatches * kPsi * 2);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero.param_allgather"), kPsi * 2);
  EXPECT_EQ(count_named(wl, r, "zero.grad_to_ipg_buffer"), 27 * kMicroBatches);
  EXPECT_EQ(count_named(wl, r, "zero.partition_grad_add"), kMicroBatches - 1);
}

// overlap_comm true with reduce_bucket_size 1e7: autograd order fills
//   bucket 0: final norm 2048 + layer 1 from fc2 to qkv's bias = 9,450,496 (+ qkv's weight would overflow),
//   bucket 1: layer 1 qkv weight + input norm + layer 0 fc2 + fc1 bias = 7,347,200,
//   bucket 2: layer 0 fc1 weight ... input norm + position embedding = 9,445,376, bucket 3: the embedding;
// 78,671,872 in all. Bucket 0's all-reduce runs on the reduction stream while backward goes on (the next kernel,
// the next gradient's copy into the ipg buffer, does not wait for it, and it is issued before the embedding's
// backward); launching bucket 1 makes the compute stream wait for bucket 0; the epilogue's device synchronize
// waits for the last one.
TEST(DeepSpeedWorkload, Zero2OverlapCommWaitsForThePreviousBucket) {
  const Workload wl = generate_workload(deepspeed_scenario(2, "{reduce_bucket_size: 1e7, overlap_comm: true}"));
  const RankProgram& r = wl.ranks[0];
  const DpTraffic t = dp_traffic(wl, r);
  const auto sizes = t.sizes(wl, r, "zero.grad_all_reduce");
  ASSERT_EQ(sizes.size(), 4u * kMicroBatches);
  EXPECT_EQ(std::vector<double>(sizes.begin(), sizes.begin() + 4),
            std::vector<double>({9'450'496.0 * 2, 7'347'200.0 * 2, 9'445'376.0 * 2, kEmbedding * 2}));
  std::vector<std::uint32_t> ars;
  std::size_t embedding_bwd = 0;
  for (std::size_t i = 0; i < r.ops.size(); ++i) {
    if (wl.names[r.ops[i].name] == "zero.grad_all_reduce") ars.push_back(static_cast<std::uint32_t>(i));
    if (embedding_bwd == 0 && wl.names[r.ops[i].name] == "embedding.bwd") embedding_bwd = i;
  }
  EXPECT_LT(ars[0], embedding_bwd);
  const Op& after_first = *next_compute(r, ars[0]);
  EXPECT_FALSE(depends_on(r, after_first, ars[0]));
  EXPECT_EQ(wl.names[after_first.name], "zero.grad_to_ipg_buffer");
  bool waited_first = false;
  for (std::uint32_t i = ars[0] + 1; i < ars[1]; ++i)
    if (r.ops[i].type == Op::Type::Compute && depends_on(r, r.ops[i], ars[0])) waited_first = true;
  EXPECT_TRUE(waited_first);
  EXPECT_TRUE(depends_on(r, *next_compute(r, ars[3]), ars[3]));  // micro-batch 0's epilogue
}

// ZeRO-3 with DeepSpeed's defaults (prefetch 5e7, max_live 1e9, reuse distance 1e9, persistence 1e5). Per
// micro-batch the trace is embedding, position embedding, the layers' modules, final norm, embedding (tied LM
// head), then backward. Visit 0 gathers the embedding on demand (52,428,800) and its prefetch consumes the whole
// trace (the other modules add 26,214,400 < 5e7): one batch with everything else. Every module recurs within 1e9
// elements, so nothing is released before its last visit and backward gathers nothing:
//   AG per micro-batch = 78,643,200 x 2 B in 2 calls (= Psi_nonpersistent; AG_b = 0).
// Gradients: one 5e8 bucket per micro-batch, reduce-scattered: Psi x 2 B (all tensors, persistent ones too).
// Step: 2 grad-norm all-reduces (one sub-group per parameter group), then one all-gather per persistent tensor:
// 8 per layer (2 + 2 norm weights/biases, 4 biases) x 2 + the final norm's 2 = 18, 28,672 x 2 B in all.
TEST(DeepSpeedWorkload, Zero3GathersEachModuleOncePerMicroBatchWithDefaults) {
  const Workload wl = generate_workload(deepspeed_scenario(3));
  const RankProgram& r = wl.ranks[0];
  const DpTraffic t = dp_traffic(wl, r);
  EXPECT_EQ(t.calls.at("zero3.allgather"), kMicroBatches);
  EXPECT_EQ(t.calls.at("zero3.prefetch_allgather"), kMicroBatches);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero3.allgather"), kMicroBatches * kEmbedding * 2);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero3.allgather") + t.bytes.at("zero3.prefetch_allgather"), kMicroBatches * kDecay * 2);
  EXPECT_EQ(t.calls.at("zero3.reduce_scatter"), kMicroBatches);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero3.reduce_scatter"), kMicroBatches * kPsi * 2);
  EXPECT_EQ(t.calls.at("zero3.persistent_allgather"), 18);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero3.persistent_allgather"), 28'672.0 * 2);
  EXPECT_EQ(t.calls.at("zero.grad_norm_all_reduce"), 2);
  for (const Op& op : r.ops)
    if (wl.names[op.name] == "zero3.persistent_allgather") { EXPECT_EQ(op.phase, Phase::Optimizer); }
  // Each micro-batch's backward ends with the CPU waiting for its reduce-scatter: the next kernel depends on it.
  for (std::size_t i = 0; i < r.ops.size(); ++i)
    if (wl.names[r.ops[i].name] == "zero3.reduce_scatter") {
      const Op* next = next_compute(r, i);
      ASSERT_NE(next, nullptr);
      EXPECT_TRUE(depends_on(r, *next, static_cast<std::uint32_t>(i)));
    }
}

// The textbook case: no prefetch (stage3_prefetch_bucket_size 0) and release after every use
// (stage3_max_reuse_distance 0). Every visit of a module with non-persistent parameters gathers it on demand:
// forward embedding, position embedding, 4 per layer x 2, embedding again for the LM head = 11; backward the same
// 11. AG per micro-batch = 2 x (78,643,200 + 52,428,800) elements = 262,144,000 x 2 B (AG_f + AG_b = 2 Psi,
// plus the tied embedding's second use). Each forward GEMM of a layer waits for its own module's gather.
TEST(DeepSpeedWorkload, Zero3WithoutPrefetchOrReuseRegathersInBackward) {
  const Workload wl =
      generate_workload(deepspeed_scenario(3, "{stage3_prefetch_bucket_size: 0, stage3_max_reuse_distance: 0}"));
  const RankProgram& r = wl.ranks[0];
  const DpTraffic t = dp_traffic(wl, r);
  EXPECT_EQ(t.calls.at("zero3.allgather"), 22 * kMicroBatches);
  EXPECT_EQ(t.calls.count("zero3.prefetch_allgather"), 0u);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero3.allgather"), kMicroBatches * 2 * (kDecay + kEmbedding) * 2);
  std::map<std::string, double> module_bytes = {
      {"qkv", 3'145'728.0 * 2}, {"proj", 1'048'576.0 * 2}, {"fc1", 4'194'304.0 * 2}, {"fc2", 4'194'304.0 * 2}};
  int checked = 0;
  for (const Op& op : r.ops) {
    if (op.type != Op::Type::Compute || op.phase != Phase::Forward || op.layer < 0) continue;
    const auto it = module_bytes.find(wl.names[op.name]);
    if (it == module_bytes.end()) continue;
    bool waits_gather = false;
    for (std::uint32_t i = 0; i < op.num_deps; ++i) {
      const Op& dep = r.ops[r.deps[op.first_dep + i]];
      if (wl.names[dep.name] == "zero3.allgather" && dep.layer == op.layer &&
          static_cast<double>(wl.collectives[dep.desc].bytes) == it->second)
        waits_gather = true;
    }
    EXPECT_TRUE(waits_gather) << wl.names[op.name] << " layer " << op.layer << " mb " << op.micro_batch;
    ++checked;
  }
  EXPECT_EQ(checked, 4 * 2 * kMicroBatches);
}

// Full recompute re-runs each layer's forward in backward: with reuse distance 0 and no prefetch, its modules are
// gathered once more (4 per layer x 2 layers = 8 more calls, 2 x 12,582,912 elements, per micro-batch).
TEST(DeepSpeedWorkload, Zero3RecomputeGathersAgain) {
  const std::string block = "{stage3_prefetch_bucket_size: 0, stage3_max_reuse_distance: 0}";
  Scenario s = deepspeed_scenario(3, block);
  s.training.recompute = RecomputeGranularity::Full;
  const Workload wl = generate_workload(s);
  const DpTraffic t = dp_traffic(wl, wl.ranks[0]);
  EXPECT_EQ(t.calls.at("zero3.allgather"), 30 * kMicroBatches);
  EXPECT_DOUBLE_EQ(t.bytes.at("zero3.allgather"), kMicroBatches * (2 * (kDecay + kEmbedding) + 2 * 12'582'912.0) * 2);
}

// reduce_bucket_size 1e7 gives four buckets per micro-batch (the same as ZeRO-2's above: 9,450,496, 7,347,200,
// 9,445,376 and the embedding; all multiples of N = 8, so no padding). With more than 2 flushes outstanding the CPU
// synchronizes on the oldest: the fourth reduce-scatter of a micro-batch is issued only after the first finished.
TEST(DeepSpeedWorkload, Zero3ReduceScatterBackPressure) {
  const Workload wl = generate_workload(deepspeed_scenario(3, "{reduce_bucket_size: 1e7}"));
  const RankProgram& r = wl.ranks[0];
  std::vector<std::uint32_t> rs;
  for (std::size_t i = 0; i < r.ops.size(); ++i)
    if (wl.names[r.ops[i].name] == "zero3.reduce_scatter") rs.push_back(static_cast<std::uint32_t>(i));
  ASSERT_EQ(rs.size(), 4u * kMicroBatches);
  EXPECT_EQ(dp_traffic(wl, r).sizes(wl, r, "zero3.reduce_scatter")[2], 9'445'376.0 * 2);
  EXPECT_TRUE(depends_on(r, r.ops[rs[3]], rs[0]));
  EXPECT_FALSE(depends_on(r, r.ops[rs[2]], rs[0]));
}

// Multi-latent attention is one "attention" module (its replicated part, 106,688 elements, is fetched; the
// TP-sharded part, 81,920 <= 1e5, is persistent). With neither prefetch nor reuse every visit of a fetchable module
// gathers it: per layer attention, proj, fc1, fc2, plus the tied embedding twice: forward 1 + 8 + 1 = 10, backward
// 10, per micro-batch (2 micro-batches).
TEST(DeepSpeedWorkload, Zero3WithMultiLatentAttention) {
  const std::string yaml = R"(
model:
  family: deepseek
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: 512
  untie_embeddings: false
  mla: {q_lora_rank: 128, kv_lora_rank: 64, qk_nope_head_dim: 32, qk_rope_head_dim: 16, v_head_dim: 32}
training: {global_batch_size: 4, micro_batch_size: 1}
parallelism:
  framework: deepspeed
  zero_stage: 3
  deepspeed: {stage3_prefetch_bucket_size: 0, stage3_max_reuse_distance: 0}
cluster: {gpu: H100-SXM, num_gpus: 2, gpus_per_node: 2, nics_per_node: 1, nic_gbps: 400}
)";
  const Workload wl = generate_workload(parse_scenario(yaml, "mla.yaml"));
  const DpTraffic t = dp_traffic(wl, wl.ranks[0]);
  EXPECT_EQ(t.calls.at("zero3.allgather"), 2 * 20);
  // ZeRO-2 walks the same hooks for its gradients.
  EXPECT_NO_THROW(generate_workload(parse_scenario(yaml, "mla.yaml", {"parallelism.zero_stage=2"})));
}

// ZeRO-1 with pipeline parallelism (2 stages, DP 4): each stage reduces and gathers its own parameters. Stage 0:
// embedding + position embedding + layer 0 = 52,428,800 + 1,048,576 + 12,596,224 = 66,073,600; stage 1: layer 1 +
// final norm + its copy of the tied LM head = 12,596,224 + 2048 + 52,428,800 = 65,027,072. One 5e8 bucket each.
TEST(DeepSpeedWorkload, Zero1WithPipelineReducesEachStagesOwnParameters) {
  Scenario s = deepspeed_scenario(1);
  s.parallelism.pipeline = 2;
  s.parallelism.data = 4;
  const Workload wl = generate_workload(s);
  ASSERT_EQ(wl.ranks.size(), 2u);
  const double expected[] = {66'073'600.0 * 2, 65'027'072.0 * 2};
  for (std::size_t stage = 0; stage < 2; ++stage) {
    const DpTraffic t = dp_traffic(wl, wl.ranks[stage]);
    EXPECT_EQ(t.sizes(wl, wl.ranks[stage], "zero.grad_all_reduce"), std::vector<double>({expected[stage]})) << stage;
    EXPECT_DOUBLE_EQ(t.bytes.at("zero.param_allgather"), expected[stage]) << stage;
  }
}

// The ipg bucket in the memory estimate (stage_1_and_2.py, stage3.py): reduce_bucket_size x 2 B, twice for ZeRO-1/2
// with overlap_comm, once for ZeRO-3 (default 5e8 -> 1e9 B). Measured against the same job with Megatron, whose
// other allowance is the same apart from it.
TEST(DeepSpeedWorkload, MemoryCountsTheIpgBucket) {
  const auto other = [](const Scenario& s) { return estimate_memory(s)[0].other_gib * kGiB; };
  Scenario megatron = deepspeed_scenario(1);
  megatron.parallelism.framework = Framework::Megatron;
  const double base = other(megatron);
  EXPECT_NEAR(other(deepspeed_scenario(3)) - base, 5e8 * 2, 1.0);
  EXPECT_NEAR(other(deepspeed_scenario(2)) - base, 5e8 * 2, 1.0);
  EXPECT_NEAR(other(deepspeed_scenario(2, "{overlap_comm: true}")) - base, 2 * 5e8 * 2, 1.0);
  EXPECT_NEAR(other(deepspeed_scenario(1, "{reduce_bucket_size: 1e8}")) - base, 1e8 * 2, 1.0);
}

// fp16 adds the overflow check: all-reduce(MAX) of 1 byte over DP before the grad norms.
TEST(DeepSpeedWorkload, Fp16AddsTheOverflowAllReduce) {
  Scenario s = deepspeed_scenario(2);
  s.training.precision = Precision::FP16;
  const Workload wl = generate_workload(s);
  const DpTraffic t = dp_traffic(wl, wl.ranks[0]);
  EXPECT_EQ(t.sizes(wl, wl.ranks[0], "zero.overflow_all_reduce"), std::vector<double>({1}));
  const Workload bf16 = generate_workload(deepspeed_scenario(2));
  EXPECT_EQ(dp_traffic(bf16, bf16.ranks[0]).calls.count("zero.overflow_all_reduce"), 0u);
}

}  // namespace
}  // namespace trainsim
