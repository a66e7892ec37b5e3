// A preset whose layers do not split evenly takes its published recipe's pipeline layout
// (data/models/deepseek-v3.yaml pipeline_layouts; scenario/pipeline_validation.cpp adopt_recipe_layout), says so in
// Scenario::inferred, and never overrides a split the scenario gives.
#include <algorithm>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// DeepSeek-V3 (61 layers) on tensor 1 x pipeline P x data, virtual pipeline V.
std::string deepseek(const char* pipeline, const char* virtual_pipeline) {
  std::string yaml = edit(kValidScenario, "model", "{preset: deepseek-v3}");
  yaml = edit(yaml, "parallelism", "{tensor: 1, context: 1, sequence_parallel: false}");
  yaml = edit(yaml, "parallelism.pipeline", pipeline);
  yaml = edit(yaml, "parallelism.virtual_pipeline", virtual_pipeline);
  yaml = edit(yaml, "cluster.num_gpus", "16");
  return yaml;
}

int count(const std::string& s, char c) { return static_cast<int>(std::count(s.begin(), s.end(), c)); }

TEST(RecipeLayout, DeepSeekV3OnEightByTwoTakesTheRecipesLayout) {
  const Scenario s = parse_scenario(deepseek("8", "2"), "test.yaml");
  const auto& stages = s.parallelism.pipeline_layout_stages;
  ASSERT_EQ(stages.size(), 16u);
  EXPECT_EQ(stages.front(), "Etttt");  // embedding + 4 decoder layers
  EXPECT_EQ(stages[7], "tttt");
  EXPECT_EQ(stages.back(), "tL");  // one decoder layer + output layer and loss
  int layers = 0;
  for (const auto& st : stages) layers += count(st, 't');
  EXPECT_EQ(layers, 61);
  ASSERT_EQ(s.inferred.size(), 1u);
  EXPECT_EQ(s.inferred[0].key, "parallelism.pipeline_layout");
  EXPECT_EQ(s.inferred[0].value, "Et*4|(t*4|)*14tL");
  EXPECT_NE(s.inferred[0].why.find("does not split evenly over pipeline 8 x virtual_pipeline 2"), std::string::npos);
  EXPECT_NE(s.inferred[0].why.find("pretrain_deepseek_v3.py"), std::string::npos) << "names its source";
}

TEST(RecipeLayout, MtpLayersGoBeforeTheLoss) {
  const Scenario s = parse_scenario(edit(deepseek("4", "1"), "model.mtp_layers", "1"), "test.yaml");
  ASSERT_EQ(s.parallelism.pipeline_layout_stages.size(), 4u);
  EXPECT_EQ(s.parallelism.pipeline_layout_stages.back(), std::string(13, 't') + "mL");
}

TEST(RecipeLayout, AGivenSplitIsNeverOverridden) {
  // first/last stage counts given: Megatron's uneven split, no recipe layout.
  std::string y =
      edit(edit(deepseek("4", "1"), "parallelism.first_stage_layers", "16"), "parallelism.last_stage_layers", "13");
  const Scenario s = parse_scenario(y, "test.yaml");
  EXPECT_TRUE(s.inferred.empty());
  EXPECT_TRUE(s.parallelism.pipeline_layout_stages.empty());
  // An explicit layout is the user's, even where the recipe has one.
  const Scenario t =
      parse_scenario(edit(deepseek("4", "1"), "parallelism.pipeline_layout", "\"Et*15|t*16|t*16|t*14L\""), "test.yaml");
  EXPECT_TRUE(t.inferred.empty());
  EXPECT_EQ(t.parallelism.pipeline_layout_stages.front(), "E" + std::string(15, 't'));
}

TEST(RecipeLayout, NoRecipeShapeOrChangedModelStillFailsWithTheKey) {
  // pipeline 2: the recipe has no layout for it, so the even-split error stands.
  EXPECT_SCENARIO_ERROR(deepseek("2", "1"), "parallelism.pipeline", "model.num_layers 61 does not split evenly");
  // A model that is no longer the preset's 61 layers gets no recipe layout either.
  EXPECT_SCENARIO_ERROR(edit(deepseek("8", "2"), "model.num_layers", "59"), "parallelism.virtual_pipeline",
                        "model.num_layers 59 does not split evenly");
}

TEST(RecipeLayout, EvenSplitsNeedNoLayout) {
  // 60 layers over 4 stages split evenly: nothing is inferred.
  const Scenario s = parse_scenario(edit(deepseek("4", "1"), "model.num_layers", "60"), "test.yaml");
  EXPECT_TRUE(s.inferred.empty());
  EXPECT_TRUE(s.parallelism.pipeline_layout_stages.empty());
}

}  // namespace
}  // namespace trainsim
