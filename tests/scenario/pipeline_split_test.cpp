// Layers over pipeline stages (even, interleaved, uneven first/last) and recompute_num_layers.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// Base: 24 layers; pipeline 2 on 16 GPUs (tensor 2, data 4).
TEST(PipelineSplit, EvenSplit) {
  EXPECT_NO_THROW(parse_scenario(kValidScenario, "test.yaml"));
  // Pipeline 16 (tensor 1, data 1) keeps the world valid, but 24 layers do not split over 16 stages.
  std::string yaml = edit(kValidScenario, "parallelism", "{tensor: 1, pipeline: 16}");
  yaml = edit(yaml, "training.global_batch_size", "16");
  EXPECT_SCENARIO_ERROR(yaml, "parallelism.pipeline", "model.num_layers 24 does not split evenly over pipeline 16");
}

TEST(PipelineSplit, InterleavedNeedsLayersPerChunk) {
  // 24 layers / (pipeline 2 x virtual 4) = 3 per chunk: fine; virtual 5 gives 24 / 10: not whole.
  EXPECT_NO_THROW(parse_scenario(edit(kValidScenario, "parallelism.virtual_pipeline", "4"), "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "parallelism.virtual_pipeline", "5"), "parallelism.virtual_pipeline",
                        "pipeline 2 x virtual_pipeline 5 = 10");
}

TEST(PipelineSplit, InterleavedNeedsPipeline) {
  std::string yaml = edit(kValidScenario, "parallelism.pipeline", "1");
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.virtual_pipeline", "2"), "parallelism.virtual_pipeline",
                        "needs parallelism.pipeline > 1");
  EXPECT_SCENARIO_ERROR(
      edit(kValidScenario, "parallelism", "{tensor: 2, pipeline: 2, virtual_pipeline: 2, schedule: gpipe}"),
      "parallelism.virtual_pipeline", "gpipe");
}

// 4 stages (tensor 1, pipeline 4, data 4 on 16 GPUs).
std::string four_stages() {
  std::string yaml = edit(kValidScenario, "parallelism", "{tensor: 1, pipeline: 4}");
  return yaml;
}

TEST(PipelineSplit, UnevenFirstAndLast) {
  // 24 = 4 (first) + 2 x 9 (middle) + 2 (last).
  std::string yaml = edit(four_stages(), "parallelism.first_stage_layers", "4");
  yaml = edit(yaml, "parallelism.last_stage_layers", "2");
  EXPECT_NO_THROW(parse_scenario(yaml, "test.yaml"));
  // 24 - 5 - 2 = 17 over 2 middle stages: not even.
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.first_stage_layers", "5"), "parallelism.first_stage_layers",
                        "17 layers left", "2 middle stages");
  // Too many at the ends.
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.first_stage_layers", "23"), "parallelism.first_stage_layers",
                        "exceeds model.num_layers 24");
}

TEST(PipelineSplit, UnevenOnlyLast) {
  // last 3, the other 3 stages share 21 = 3 x 7.
  EXPECT_NO_THROW(parse_scenario(edit(four_stages(), "parallelism.last_stage_layers", "3"), "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(four_stages(), "parallelism.last_stage_layers", "4"), "parallelism.last_stage_layers",
                        "20 layers left", "3 middle stages");
}

TEST(PipelineSplit, UnevenWithInterleavingNeedsDivisibleStages) {
  // first 4, last 2, middle 9 each: virtual 2 divides 4 and 2 but not 9.
  std::string yaml = edit(four_stages(), "parallelism.first_stage_layers", "4");
  yaml = edit(yaml, "parallelism.last_stage_layers", "2");
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.virtual_pipeline", "2"), "parallelism.virtual_pipeline",
                        "each middle stage gets 9 layers, not divisible by virtual_pipeline 2");
  // first 6, last 6, middle 6: virtual 3 divides all; virtual 4 does not divide first 6.
  std::string even =
      edit(edit(four_stages(), "parallelism.first_stage_layers", "6"), "parallelism.last_stage_layers", "6");
  EXPECT_NO_THROW(parse_scenario(edit(even, "parallelism.virtual_pipeline", "3"), "test.yaml"));
  EXPECT_SCENARIO_ERROR(edit(even, "parallelism.virtual_pipeline", "4"), "parallelism.first_stage_layers",
                        "first_stage_layers 6 is not divisible by virtual_pipeline 4");
}

TEST(PipelineSplit, UnevenNeedsPipeline) {
  std::string yaml = edit(kValidScenario, "parallelism.pipeline", "1");
  EXPECT_SCENARIO_ERROR(edit(yaml, "parallelism.first_stage_layers", "4"), "parallelism.first_stage_layers",
                        "needs parallelism.pipeline > 1");
}

TEST(PipelineSplit, RecomputeLayersOnlyWithFull) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "training.recompute_num_layers", "4"), "training.recompute_num_layers",
                        "only applies with training.recompute: full");
}

TEST(PipelineSplit, RecomputeLayersPerStage) {
  const std::string full = edit(kValidScenario, "training.recompute", "full");
  // Pipeline 2 with 12 layers per stage.
  const Scenario s = parse_scenario(edit(full, "training.recompute_num_layers", "[4, 0]"), "test.yaml");
  EXPECT_EQ(s.training.recompute_num_layers, (std::vector<int>{4, 0}));
  EXPECT_EQ(parse_scenario(edit(full, "training.recompute_num_layers", "6"), "test.yaml").training.recompute_num_layers,
            std::vector<int>{6});
  EXPECT_SCENARIO_ERROR(edit(full, "training.recompute_num_layers", "[4, 0, 1]"), "training.recompute_num_layers",
                        "3 values for pipeline 2");
  EXPECT_SCENARIO_ERROR(edit(full, "training.recompute_num_layers", "[13, 0]"), "training.recompute_num_layers",
                        "recomputes 13 layers on pipeline stage 0, which has only 12");
  EXPECT_SCENARIO_ERROR(edit(full, "training.recompute_num_layers", "[4, -1]"), "training.recompute_num_layers[1]",
                        "expected a non-negative integer");
}

}  // namespace
}  // namespace trainsim
