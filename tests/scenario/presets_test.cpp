// model.preset starts from a catalog model (data/models/*.yaml) and the scenario's keys override
// it; model.hf_config starts from a Hugging Face config.json.
#include <filesystem>
#include <fstream>

#include "model/model_catalog.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

std::string with_preset(const char* preset) {
  std::string yaml = edit(kValidScenario, "model", "{}");
  return edit(yaml, "model.preset", preset);
}

TEST(Presets, PresetSuppliesTheModel) {
  const ModelPreset* preset = ModelCatalog::builtin().find("gpt3-175b");
  if (preset == nullptr) GTEST_SKIP() << "gpt3-175b not in the model catalog";
  // tensor 2 x pipeline 2 on 16 GPUs: 96 layers split over 2 stages, 96 heads over 2 ranks.
  const Scenario s = parse_scenario(with_preset("gpt3-175b"), "test.yaml");
  EXPECT_EQ(s.model.name, "gpt3-175b");
  // Numbers from Brown et al. 2020, Table 2.1 (the preset's own source).
  EXPECT_EQ(s.model.num_layers, 96);
  EXPECT_EQ(s.model.hidden_size, 12288);
  EXPECT_EQ(s.model.num_attention_heads, 96);
  EXPECT_EQ(s.model.seq_length, 2048);
  EXPECT_EQ(s.model.ffn_hidden_size, 4 * 12288);
}

TEST(Presets, UserKeysOverrideThePreset) {
  if (ModelCatalog::builtin().find("llama3-70b") == nullptr) GTEST_SKIP() << "llama3-70b not in the model catalog";
  std::string yaml = with_preset("llama3-70b");
  yaml = edit(yaml, "model.seq_length", "4096");
  yaml = edit(yaml, "model.num_layers", "40");
  const Scenario s = parse_scenario(yaml, "test.yaml");
  EXPECT_EQ(s.model.seq_length, 4096);   // overridden
  EXPECT_EQ(s.model.num_layers, 40);     // overridden
  EXPECT_EQ(s.model.hidden_size, 8192);  // from the preset (Llama 3 70B config.json)
  EXPECT_EQ(s.model.num_query_groups, 8);
  EXPECT_TRUE(s.model.gated_mlp);
  EXPECT_EQ(s.model.normalization, Normalization::RMSNorm);  // llama family default
}

TEST(Presets, UnknownPresetListsKnownOnes) {
  const std::vector<std::string> known = ModelCatalog::builtin().names();
  if (known.empty()) GTEST_SKIP() << "model catalog is empty";
  EXPECT_SCENARIO_ERROR(with_preset("no-such-model"), "model.preset", "unknown preset 'no-such-model'",
                        "known presets:", known.front());
}

TEST(Presets, CloseMisspellingIsSuggested) {
  if (ModelCatalog::builtin().find("gpt3-175b") == nullptr) GTEST_SKIP();
  EXPECT_SCENARIO_ERROR(with_preset("gpt3-176b"), "model.preset", "did you mean gpt3-175b?");
}

TEST(Presets, PresetAndHfConfigTogetherIsAnError) {
  const std::string yaml = edit(with_preset("gpt3-175b"), "model.hf_config", "config.json");
  EXPECT_SCENARIO_ERROR(yaml, "model.hf_config", "not both");
}

class HfConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("trainsim-hf-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_ / "models");
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  void write(const std::filesystem::path& file, const std::string& text) { std::ofstream(dir_ / file) << text; }
  std::filesystem::path dir_;
};

TEST_F(HfConfigTest, ReadsConfigRelativeToTheScenario) {
  // A Llama-3-8B-shaped config.json (values as in meta-llama/Meta-Llama-3-8B), pretty-printed JSON.
  write("models/config.json", R"({
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "num_hidden_layers": 32,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 8192,
    "vocab_size": 128256,
    "tie_word_embeddings": false,
    "rope_theta": 500000.0,
    "torch_dtype": "bfloat16"
  })");
  std::string yaml = edit(kValidScenario, "model", "{hf_config: models/config.json, seq_length: 4096}");
  write("case.yaml", yaml);
  const Scenario s = load_scenario((dir_ / "case.yaml").string());
  EXPECT_EQ(s.model.family, "llama");  // from model_type
  EXPECT_EQ(s.model.hidden_size, 4096);
  EXPECT_EQ(s.model.num_layers, 32);
  EXPECT_EQ(s.model.num_attention_heads, 32);
  EXPECT_EQ(s.model.num_query_groups, 8);
  EXPECT_EQ(s.model.ffn_hidden_size, 14336);
  EXPECT_EQ(s.model.vocab_size, 128256);
  EXPECT_TRUE(s.model.untie_embeddings);  // tie_word_embeddings false
  EXPECT_EQ(s.model.kv_channels, 4096 / 32);
  EXPECT_EQ(s.model.seq_length, 4096);  // the scenario's key beats max_position_embeddings
  EXPECT_TRUE(s.model.gated_mlp);
}

TEST_F(HfConfigTest, HeadDimIsRead) {
  write("config.json",
        R"({"model_type": "llama", "hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16,
    "head_dim": 256, "intermediate_size": 8192, "vocab_size": 32000, "max_position_embeddings": 2048})");
  write("case.yaml", edit(kValidScenario, "model", "{hf_config: config.json, seq_length: 2048}"));
  const Scenario s = load_scenario((dir_ / "case.yaml").string());
  EXPECT_EQ(s.model.kv_channels, 256);  // head_dim, not hidden / heads = 128
}

TEST_F(HfConfigTest, MissingFileNamesTheKey) {
  write("case.yaml", edit(kValidScenario, "model", "{hf_config: nowhere.json}"));
  try {
    load_scenario((dir_ / "case.yaml").string());
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "model.hf_config");
    EXPECT_NE(std::string(e.what()).find("nowhere.json"), std::string::npos) << e.what();
  }
}

TEST_F(HfConfigTest, BadValueNamesTheConfigFileAndField) {
  write("config.json", R"({"model_type": "llama", "hidden_size": "big", "num_hidden_layers": 4})");
  write("case.yaml", edit(kValidScenario, "model", "{hf_config: config.json}"));
  try {
    load_scenario((dir_ / "case.yaml").string());
    FAIL() << "expected a ScenarioError";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "hidden_size");
    EXPECT_NE(e.file().find("config.json"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace trainsim
