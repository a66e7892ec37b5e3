// Megatron's DDP gradient buffers on one rank (workload/grad_buffers.hpp): the dense buffer always, the expert buffer
// only with expert parameters, buckets split on the first chunk only, the parameters the optimizer updates, and the
// rank's parameter items in backprop order.
#include "workload/grad_buffers.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "support/small_gpt_job.hpp"
#include "workload/generator.hpp"
#include "workload/rank_context.hpp"

namespace trainsim {
namespace {

const GradBufferReduction kDense{"dp", 1, Stream::DpComm, 8};
const GradBufferReduction kExpert{"edp", 2, Stream::ExpertDpComm, 2};

// Two chunks in backprop order: chunk 0 holds items of 10, 20, 30 and 40 elements, chunk 1 one of 5.
std::vector<ChunkParamItems> dense_items() {
  std::vector<ChunkParamItems> chunks(2);
  for (const double p : {10.0, 20.0, 30.0, 40.0}) {
    chunks[0].dense.push_back({0, p});
    chunks[0].expert.push_back({0, 0});
  }
  chunks[1].dense.push_back({1, 5});
  chunks[1].expert.push_back({1, 0});
  return chunks;
}

TEST(GradBuffers, WithoutExpertsOnlyTheDenseBufferSplitOnTheFirstChunk) {
  const GradBuffers buffers(dense_items(), kDense, kExpert, 30);
  ASSERT_EQ(buffers.buffers().size(), 1u);
  const GradBuffer& dense = buffers.dense();
  EXPECT_EQ(dense.op_name("grad_all_reduce"), "dp.grad_all_reduce");
  EXPECT_DOUBLE_EQ(dense.local_params, 105);
  EXPECT_DOUBLE_EQ(buffers.local_params(), 105);
  EXPECT_EQ(buffers.items_in_chunk(0), 4);
  EXPECT_EQ(buffers.items_in_chunk(1), 1);
  // A bucket closes once it holds 30 elements: {10, 20}, {30}, {40}; chunk 1 is one bucket whatever its size.
  ASSERT_EQ(dense.buckets_by_chunk[0].size(), 3u);
  EXPECT_EQ(dense.buckets_by_chunk[0][0].first_item, 0);
  EXPECT_EQ(dense.buckets_by_chunk[0][0].last_item, 1);
  EXPECT_DOUBLE_EQ(dense.buckets_by_chunk[0][0].params, 30);
  EXPECT_EQ(dense.buckets_by_chunk[0][2].last_item, 3);
  ASSERT_EQ(dense.buckets_by_chunk[1].size(), 1u);
  EXPECT_DOUBLE_EQ(dense.buckets_by_chunk[1][0].params, 5);
  // Without a bucket size every chunk is one bucket.
  EXPECT_EQ(GradBuffers(dense_items(), kDense, kExpert, 0).dense().buckets_by_chunk[0].size(), 1u);
}

TEST(GradBuffers, ExpertParametersGetTheirOwnBufferWithoutEmptyBuckets) {
  std::vector<ChunkParamItems> chunks = dense_items();
  chunks[0].expert[2].params = 60;  // the third item is a MoE layer: 60 expert elements beside its 30 dense ones
  const GradBuffers buffers(chunks, kDense, kExpert, 30);
  ASSERT_EQ(buffers.buffers().size(), 2u);
  const GradBuffer& expert = buffers.buffers()[1];
  EXPECT_EQ(expert.op_name("grad_reduce_scatter"), "edp.grad_reduce_scatter");
  EXPECT_EQ(expert.reduction.group, 2u);
  EXPECT_EQ(expert.reduction.stream, Stream::ExpertDpComm);
  EXPECT_DOUBLE_EQ(expert.local_params, 60);
  EXPECT_DOUBLE_EQ(buffers.local_params(), 165);
  // The expert buffer closes buckets by its own elements: items 0-2 (the MoE layer's 60), then item 3, which holds
  // no expert element and is dropped.
  ASSERT_EQ(expert.buckets_by_chunk[0].size(), 1u);
  EXPECT_EQ(expert.buckets_by_chunk[0][0].first_item, 0);
  EXPECT_EQ(expert.buckets_by_chunk[0][0].last_item, 2);
  EXPECT_TRUE(expert.buckets_by_chunk[1].empty());
  // The distributed optimizer updates 1/8 of the dense and 1/2 of the expert elements; unsharded, all.
  EXPECT_DOUBLE_EQ(buffers.optimizer_params(true), 105.0 / 8 + 60.0 / 2);
  EXPECT_DOUBLE_EQ(buffers.optimizer_params(false), 165);
}

Scenario two_stage_scenario() {
  return parse_scenario(test::small_gpt_job("", "  tensor: 1\n  pipeline: 2\n"), "grad_buffers.yaml");
}

// Backprop order: the last stage holds the LM head (a weight of its own with a pipeline) and the final norm, then its
// layers from the last; the first stage its layers from the last, then the embedding.
TEST(GradBuffers, RankParamItemsAreInBackpropOrder) {
  const Scenario s = two_stage_scenario();
  const ParallelPlan plan = parallel_plan_of(s);
  const StageLayout layout(s);
  const LayerDims dims = LayerDims::of(s);
  WorkloadBuilder wb(plan.world_size(), {0});
  RankBuilder builder = wb.rank_builder(0);
  LayerEmitter emitter(builder, dims, {}, false);
  const RankCommunicators communicators;
  for (int stage = 0; stage < 2; ++stage) {
    const RankContext rank{s, plan, layout, dims, builder, emitter, communicators, 0, stage, 2, 1, 16};
    const auto chunks = rank_param_items(rank);
    ASSERT_EQ(chunks.size(), 1u);
    const auto& items = chunks[0].dense;
    ASSERT_EQ(items.size(), stage == 0 ? 3u : 4u);
    ASSERT_EQ(chunks[0].expert.size(), items.size());
    if (stage == 0) {
      EXPECT_EQ(items[0].layer, 1);
      EXPECT_EQ(items[1].layer, 0);
      EXPECT_EQ(items[2].layer, -1);
      EXPECT_DOUBLE_EQ(items[2].params, dims.embedding_params);
    } else {
      EXPECT_EQ(items[0].layer, -1);
      EXPECT_DOUBLE_EQ(items[0].params, dims.lm_head_params);
      EXPECT_DOUBLE_EQ(items[1].params, dims.final_norm_params);
      EXPECT_EQ(items[2].layer, 3);
      EXPECT_EQ(items[3].layer, 2);
      EXPECT_DOUBLE_EQ(items[3].params, dims.dense_params_by_layer[2]);
    }
    for (const ParamItem& e : chunks[0].expert) EXPECT_DOUBLE_EQ(e.params, 0);  // a dense model
  }
}

}  // namespace
}  // namespace trainsim
