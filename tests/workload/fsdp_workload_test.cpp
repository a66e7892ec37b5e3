// PyTorch FSDP FULL_SHARD (framework: fsdp, zero_stage: 3): per layer one parameter all-gather in forward and one
// in backward in the training dtype, and one gradient reduce-scatter in fp32 after the gradient's cast up
// (reduce_dtype float32, as Composer's mixed_precision DEFAULT and torchtitan configure it). SHARD_GRAD_OP
// (zero_stage: 2) keeps each layer gathered from its forward to its backward: no gather in backward.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/layer_dims.hpp"

namespace trainsim {
namespace {

Scenario fsdp_scenario(const std::string& precision, int zero_stage = 3) {
  return parse_scenario(test::small_gpt_job("  precision: " + precision + "\n",
                                            "  tensor: 1\n  pipeline: 1\n  framework: fsdp\n  zero_stage: " +
                                                std::to_string(zero_stage) + "\n"),
                        "fsdp.yaml");
}

struct Calls {
  int count = 0;
  double bytes = 0;  // of the last call
};

std::map<std::string, Calls> by_name(const Workload& wl) {
  std::map<std::string, Calls> out;
  for (const Op& op : wl.ranks[0].ops) {
    Calls& c = out[wl.names[op.name]];
    ++c.count;
    c.bytes =
        op.type == Op::Type::Compute ? wl.kernels[op.desc].bytes : static_cast<double>(wl.collectives[op.desc].bytes);
  }
  return out;
}

TEST(FsdpWorkload, GathersInTheTrainingDtypeReducesInFp32) {
  const Scenario s = fsdp_scenario("bf16");
  const double layer_params = LayerDims::of(s).layer_params;
  const int micro_batches = s.micro_batches_per_iteration();
  auto ops = by_name(generate_workload(s, {}));
  EXPECT_EQ(ops["fsdp.allgather.fwd"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.allgather.fwd"].bytes, layer_params * 2.0, 1.0);
  EXPECT_NEAR(ops["fsdp.allgather.bwd"].bytes, layer_params * 2.0, 1.0);
  EXPECT_EQ(ops["fsdp.reduce_scatter"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.reduce_scatter"].bytes, layer_params * 4.0, 1.0);
  // The cast before each reduce-scatter: read bf16, write fp32. Every unit reduces every micro-batch: the layers,
  // the root (final norm) and the embedding.
  EXPECT_EQ(ops["fsdp.grad_cast"].count, (4 + 2) * micro_batches);
  EXPECT_EQ(ops["fsdp.reduce_scatter.root"].count, micro_batches);
  EXPECT_EQ(ops["fsdp.reduce_scatter.embedding"].count, micro_batches);
}

// The embedding is a unit of its own (Composer's MPT wraps wte, torchtitan shards tok_embeddings): gathered for its
// forward and resharded; a tied LM head (MPT's wte(x, unembed=True)) gathers it again, and the backward gathers it
// once, before the head's backward, keeping it to the embedding's. An untied head belongs to the root unit, gathered
// once per micro-batch; the embedding's backward gather is then prefetched during the first layer's backward.
TEST(FsdpWorkload, TheEmbeddingIsAUnitGatheredAgainForATiedHead) {
  const Scenario tied = fsdp_scenario("bf16");
  const int micro_batches = tied.micro_batches_per_iteration();
  const LayerDims dims = LayerDims::of(tied);
  auto ops = by_name(generate_workload(tied, {}));
  EXPECT_EQ(ops["fsdp.allgather.embedding"].count, 3 * micro_batches);
  EXPECT_NEAR(ops["fsdp.allgather.embedding"].bytes, dims.embedding_params * 2.0, 1.0);
  EXPECT_NEAR(ops["fsdp.allgather.root"].bytes, dims.final_norm_params * 2.0, 1.0);
  Scenario untied = tied;
  untied.model.untie_embeddings = true;
  ops = by_name(generate_workload(untied, {}));
  EXPECT_EQ(ops["fsdp.allgather.embedding"].count, 2 * micro_batches);
  EXPECT_NEAR(ops["fsdp.allgather.root"].bytes, (dims.final_norm_params + LayerDims::of(untied).lm_head_params) * 2.0,
              1.0);
  // SHARD_GRAD_OP keeps every unit gathered from its forward: the embedding once per micro-batch.
  EXPECT_EQ(by_name(generate_workload(fsdp_scenario("bf16", 2), {}))["fsdp.allgather.embedding"].count, micro_batches);
}

// FSDP's final callback at the end of every backward makes the compute stream wait for the micro-batch's
// reductions: the next micro-batch's first kernel depends on every reduce-scatter issued before it.
TEST(FsdpWorkload, EachMicroBatchEndsWaitingForItsReductions) {
  const Scenario s = fsdp_scenario("bf16");
  ASSERT_GE(s.micro_batches_per_iteration(), 2);
  const Workload wl = generate_workload(s, {});
  const RankProgram& p = wl.ranks[0];
  std::vector<std::uint32_t> scatters;
  for (std::uint32_t i = 0; i < p.ops.size(); ++i) {
    const Op& op = p.ops[i];
    if (op.micro_batch == 0 && wl.names[op.name].rfind("fsdp.reduce_scatter", 0) == 0) scatters.push_back(i);
    if (op.micro_batch != 1 || op.type != Op::Type::Compute || op.stream != Stream::Compute) continue;
    const std::vector<std::uint32_t> deps(p.deps.begin() + op.first_dep, p.deps.begin() + op.first_dep + op.num_deps);
    ASSERT_EQ(scatters.size(), 6u);
    for (const std::uint32_t rs : scatters)
      EXPECT_NE(std::find(deps.begin(), deps.end(), rs), deps.end()) << wl.names[p.ops[rs].name];
    return;
  }
  ADD_FAILURE() << "no kernel of the second micro-batch";
}

TEST(FsdpWorkload, Fp32TrainingNeedsNoCast) {
  auto ops = by_name(generate_workload(fsdp_scenario("fp32"), {}));
  EXPECT_EQ(ops.count("fsdp.grad_cast"), 0u);
  EXPECT_GT(ops["fsdp.reduce_scatter"].count, 0);
}

TEST(FsdpWorkload, ShardGradOpGathersOnlyForTheForward) {
  const Scenario s = fsdp_scenario("bf16", 2);
  const double layer_params = LayerDims::of(s).layer_params;
  const int micro_batches = s.micro_batches_per_iteration();
  auto ops = by_name(generate_workload(s, {}));
  EXPECT_EQ(ops["fsdp.allgather.fwd"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.allgather.fwd"].bytes, layer_params * 2.0, 1.0);
  EXPECT_EQ(ops.count("fsdp.allgather.bwd"), 0u);
  EXPECT_EQ(ops["fsdp.reduce_scatter"].count, 4 * micro_batches);
  EXPECT_NEAR(ops["fsdp.reduce_scatter"].bytes, layer_params * 4.0, 1.0);
  // Not Megatron's bucketed gradient all-reduce.
  for (const auto& [name, calls] : ops) EXPECT_EQ(name.find("grad_all_reduce"), std::string::npos) << name;
  EXPECT_EQ(ops["fsdp.reduce_scatter.root"].count, micro_batches);
}

// NO_SHARD (zero_stage 0 or 1 for fsdp): every rank holds and updates the whole optimizer state, so its Adam step
// reads 8x what a FULL_SHARD or SHARD_GRAD_OP rank's shard does on 8 GPUs.
TEST(FsdpWorkload, NoShardUpdatesTheWholeOptimizerState) {
  const auto adam_bytes = [](int zero_stage) {
    return by_name(generate_workload(fsdp_scenario("bf16", zero_stage), {}))["optimizer.adam"].bytes;
  };
  const double full = adam_bytes(3);
  ASSERT_GT(full, 0);
  EXPECT_NEAR(adam_bytes(2), full, 1e-6 * full);
  EXPECT_NEAR(adam_bytes(1), 8 * full, 1e-6 * full);
  EXPECT_NEAR(adam_bytes(0), 8 * full, 1e-6 * full);
}

// parallelism.fsdp_version (zero-fsdp.md §3.1, §3.2). FSDP1 (the default) casts a unit's gradient on the post-backward
// stream, in order before its reduce-scatter there, and uses the gathered FlatParameter in place. FSDP2 copies each
// gathered unit out of the all-gather buffer on the compute stream (read and write 2 B per parameter) and
// chunk-cats the gradients into the reduce-scatter input there, cast included (2 + 4 B; 2 + 2 B with a bf16 reduce).
TEST(FsdpWorkload, Fsdp1CastsBesideComputeFsdp2CopiesOnIt) {
  const auto streams_of = [](const Workload& wl, const std::string& name) {
    std::map<Stream, int> out;
    for (const Op& op : wl.ranks[0].ops)
      if (wl.names[op.name] == name) out[op.stream] += 1;
    return out;
  };
  Scenario s = fsdp_scenario("bf16");
  const int micro_batches = s.micro_batches_per_iteration();
  const Workload v1 = generate_workload(s, {});
  EXPECT_EQ(streams_of(v1, "fsdp.grad_cast"), (std::map<Stream, int>{{Stream::DpComm, (4 + 2) * micro_batches}}));
  EXPECT_EQ(by_name(v1).count("fsdp.copy_out"), 0u);
  // On the post-backward stream the cast and the pre-divide run before the reduce-scatter they feed.
  EXPECT_EQ(streams_of(v1, "fsdp.grad_predivide"), (std::map<Stream, int>{{Stream::DpComm, (4 + 2) * micro_batches}}));
  for (std::size_t i = 0; i + 2 < v1.ranks[0].ops.size(); ++i) {
    if (v1.names[v1.ranks[0].ops[i].name] == "fsdp.grad_cast") {
      EXPECT_EQ(v1.names[v1.ranks[0].ops[i + 1].name], "fsdp.grad_predivide");
      EXPECT_EQ(v1.names[v1.ranks[0].ops[i + 2].name].rfind("fsdp.reduce_scatter", 0), 0u);
    }
  }

  s.parallelism.fsdp_version = 2;
  const Workload v2 = generate_workload(s, {});
  auto ops = by_name(v2);
  EXPECT_EQ(ops.count("fsdp.grad_cast"), 0u);
  EXPECT_EQ(streams_of(v2, "fsdp.grad_chunk_cat"), (std::map<Stream, int>{{Stream::Compute, (4 + 2) * micro_batches}}));
  // One copy-out per gather: every layer twice (forward and backward), the root once and the (tied) embedding
  // three times, per micro-batch.
  EXPECT_EQ(ops["fsdp.copy_out"].count, (2 * 4 + 1 + 3) * micro_batches);
  EXPECT_EQ(streams_of(v2, "fsdp.copy_out").count(Stream::Compute), 1u);
  s.training.grad_reduce_in_bf16 = true;
  auto bf16_reduce = by_name(generate_workload(s, {}));
  EXPECT_NEAR(bf16_reduce["fsdp.grad_chunk_cat"].bytes / ops["fsdp.grad_chunk_cat"].bytes, 4.0 / 6.0, 1e-9);
}

TEST(FsdpWorkload, FsdpVersionIsCheckedAndOnlyForFsdp) {
  const auto fails_on = [](const std::string& parallelism) {
    try {
      parse_scenario(test::small_gpt_job("", parallelism), "fsdp-version.yaml");
    } catch (const ScenarioError& e) { return e.key(); }
    return std::string();
  };
  EXPECT_EQ(fails_on("  framework: fsdp\n  zero_stage: 3\n  fsdp_version: 3\n"), "parallelism.fsdp_version");
  EXPECT_EQ(fails_on("  framework: megatron\n  fsdp_version: 2\n"), "parallelism.fsdp_version");
  EXPECT_EQ(fails_on("  framework: fsdp\n  zero_stage: 3\n  fsdp_version: 2\n"), "");
}

}  // namespace
}  // namespace trainsim
