// Where layers land (StageLayout) under an explicit pipeline_layout, the embedding / loss counted as layers and MTP
// blocks without a layout (get_transformer_layer_offset; pipeline_parallel_layer_layout.py, transformer_block.py).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "scenario/scenario_loader.hpp"
#include "workload/stage_layout.hpp"

namespace trainsim {
namespace {

// 24 layers on tensor 2 x pipeline 2 x data 4 (16 H100s), with `parallel` appended to the parallelism block.
Scenario gpt24(const std::string& parallel, const std::string& model = "") {
  return parse_scenario(R"(
model:
  family: gpt
  num_layers: 24
  hidden_size: 2048
  num_attention_heads: 16
  vocab_size: 51200
  seq_length: 2048
)" + model + R"(
training:
  global_batch_size: 64
  micro_batch_size: 2
parallelism:
  tensor: 2
  pipeline: 2
)" + parallel + R"(
cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
)",
                        "layout.yaml");
}

TEST(StageLayoutRecipes, LayoutEntriesAreChunkMajorAsMegatron) {
  // pipeline 2 x virtual 2: entries 0..3 are (rank 0, chunk 0), (rank 1, chunk 0), (rank 0, chunk 1), (rank 1, chunk 1)
  // (pipeline_parallel_layer_layout.py: layout[vpp_rank * pp + pp_rank]).
  const StageLayout layout(gpt24("  virtual_pipeline: 2\n  pipeline_layout: \"Ettt|t*5|t*7|t*9L\"\n"));
  EXPECT_EQ(layout.layers(0, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(layout.layers(1, 0).size(), 5u);
  EXPECT_EQ(layout.layers(1, 0).front(), 3);
  EXPECT_EQ(layout.layers(0, 1).size(), 7u);
  EXPECT_EQ(layout.layers(0, 1).front(), 8);
  EXPECT_EQ(layout.layers(1, 1).size(), 9u);
  EXPECT_EQ(layout.layers(1, 1).back(), 23);
  EXPECT_EQ(layout.layers_on_stage(0), 10);
  EXPECT_EQ(layout.layers_on_stage(1), 14);
}

TEST(StageLayoutRecipes, LayoutPlacesMtp) {
  const StageLayout layout(gpt24("  pipeline_layout: \"Et*12|t*12mL\"\n", "  mtp_layers: 1\n"));
  EXPECT_EQ(layout.mtp_layers(1, 0), (std::vector<int>{24}));
  EXPECT_EQ(layout.mtp_layers_on_stage(0), 0);
  EXPECT_EQ(layout.layers_on_stage(1), 12);
}

TEST(StageLayoutRecipes, MtpDefaultsToTheLastChunkOfTheLastStage) {
  const StageLayout layout(gpt24("  virtual_pipeline: 2\n", "  mtp_layers: 2\n"));
  EXPECT_EQ(layout.mtp_layers(1, 1), (std::vector<int>{24, 25}));
  EXPECT_TRUE(layout.mtp_layers(1, 0).empty());
  EXPECT_EQ(layout.mtp_layers_on_stage(0), 0);
}

// Llama 3.1 405B's recipe: 126 layers on pipeline 8 x virtual 8 with the embedding and the loss each counted as a
// layer: 128 / 64 = 2 slots per chunk; the first chunk holds the embedding + 1 decoder layer, the last 1 + the loss.
Scenario llama405b_split(int virtual_pipeline) {
  return parse_scenario(R"(
model:
  family: llama
  num_layers: 126
  hidden_size: 1024
  num_attention_heads: 8
  ffn_hidden_size: 2048
  vocab_size: 1024
  seq_length: 1024
training:
  global_batch_size: 16
  micro_batch_size: 1
parallelism:
  tensor: 1
  pipeline: 8
  virtual_pipeline: )" + std::to_string(virtual_pipeline) +
                            R"(
  account_for_embedding_in_pipeline_split: true
  account_for_loss_in_pipeline_split: true
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)",
                        "llama.yaml");
}

TEST(StageLayoutRecipes, Llama405bOnPipeline8Virtual8) {
  const StageLayout layout(llama405b_split(8));
  EXPECT_EQ(layout.layers(0, 0), (std::vector<int>{0}));       // embedding + layer 0
  EXPECT_EQ(layout.layers(1, 0), (std::vector<int>{1, 2}));    // offset reduced by the embedding's slot
  EXPECT_EQ(layout.layers(0, 1), (std::vector<int>{15, 16}));  // chunk 0 of the 8 ranks holds 8 x 2 - 1 layers
  EXPECT_EQ(layout.layers(7, 7), (std::vector<int>{125}));     // layer 125 + loss
  int total = 0;
  for (int r = 0; r < 8; ++r) {
    for (int j = 0; j < 8; ++j) {
      if ((r == 0 && j == 0) || (r == 7 && j == 7)) continue;
      EXPECT_EQ(layout.layers(r, j).size(), 2u) << "rank " << r << " chunk " << j;
    }
    total += layout.layers_on_stage(r);
  }
  EXPECT_EQ(total, 126);
}

TEST(StageLayoutRecipes, EmbeddingAndLossSlotsWithoutInterleaving) {
  // 128 slots / 8 stages = 16: 15 decoder layers on the first and on the last stage, 16 elsewhere.
  const StageLayout layout(llama405b_split(1));
  EXPECT_EQ(layout.layers_on_stage(0), 15);
  EXPECT_EQ(layout.layers_on_stage(3), 16);
  EXPECT_EQ(layout.layers_on_stage(7), 15);
  EXPECT_EQ(layout.layers(1, 0).front(), 15);
}

}  // namespace
}  // namespace trainsim
