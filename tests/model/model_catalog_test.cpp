// The built-in presets load, say what the papers/model cards say, and bad preset files are rejected by name.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <unistd.h>

#include "core/error.hpp"
#include "model/layer_shapes.hpp"
#include "model/model_catalog.hpp"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kRequired = {"gpt3-1.3b", "gpt3-2.7b",  "gpt3-6.7b",  "gpt3-13b",   "gpt3-22b",
                                            "gpt3-175b", "llama-65b",  "llama2-7b",  "llama2-13b", "llama2-70b",
                                            "llama3-8b", "llama3-70b", "llama3-405b"};

// Test-local translation of a preset's `model:` mapping (the scenario parser does this for real, with family
// defaults); enough to count parameters.
ModelSpec to_spec(const YAML::Node& y) {
  ModelSpec m;
  m.family = y["family"].as<std::string>();
  m.num_layers = y["num_layers"].as<int>();
  m.hidden_size = y["hidden_size"].as<std::int64_t>();
  m.num_attention_heads = y["num_attention_heads"].as<int>();
  m.num_query_groups = y["num_query_groups"].as<int>();
  m.ffn_hidden_size = y["ffn_hidden_size"].as<std::int64_t>();
  m.gated_mlp = y["gated_mlp"].as<bool>();
  m.vocab_size = y["vocab_size"].as<std::int64_t>();
  m.seq_length = y["seq_length"].as<std::int64_t>();
  m.untie_embeddings = y["untie_embeddings"].as<bool>();
  if (y["kv_channels"]) m.kv_channels = y["kv_channels"].as<std::int64_t>();
  if (m.family == "llama") {
    m.normalization = Normalization::RMSNorm;
    m.position_embedding = PositionEmbedding::Rope;
    m.add_bias_linear = false;
  }
  return m;
}

TEST(ModelCatalog, BuiltinHasEveryRequiredPreset) {
  const ModelCatalog& cat = ModelCatalog::builtin();
  for (const auto& name : kRequired) {
    const ModelPreset* p = cat.find(name);
    ASSERT_NE(p, nullptr) << name;
    EXPECT_EQ(p->name, name);
    EXPECT_FALSE(p->description.empty()) << name;
    EXPECT_TRUE(p->model.IsMap()) << name;
  }
  const auto names = cat.names();
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_GE(names.size(), kRequired.size());
}

TEST(ModelCatalog, LookupIsCaseInsensitiveAndUnknownIsNull) {
  const ModelCatalog& cat = ModelCatalog::builtin();
  ASSERT_NE(cat.find("GPT3-175B"), nullptr);
  EXPECT_EQ(cat.find("GPT3-175B")->name, "gpt3-175b");
  EXPECT_EQ(cat.find("gpt3-176b"), nullptr);
  EXPECT_EQ(cat.find(""), nullptr);
}

// The size in each preset's name is the published parameter count; counting the preset's shapes must land
// within 5% of it (Llama 2 7B is really 6.74B, the largest gap). Catches a wrong layer count, width or FFN size.
TEST(ModelCatalog, PresetShapesReproduceTheirNominalSize) {
  const std::map<std::string, double> nominal_billions = {
      {"gpt3-1.3b", 1.3}, {"gpt3-2.7b", 2.7}, {"gpt3-6.7b", 6.7},  {"gpt3-13b", 13},   {"gpt3-22b", 22},
      {"gpt3-175b", 175}, {"llama-65b", 65},  {"llama2-7b", 7},    {"llama2-13b", 13}, {"llama2-70b", 70},
      {"llama3-8b", 8},   {"llama3-70b", 70}, {"llama3-405b", 405}};
  for (const auto& [name, billions] : nominal_billions) {
    const ModelPreset* p = ModelCatalog::builtin().find(name);
    ASSERT_NE(p, nullptr) << name;
    const double n = total_params(to_spec(p->model), 1) / 1e9;
    EXPECT_NEAR(n, billions, 0.05 * billions) << name << " counts " << n << "B";
  }
}

// Spot values straight from the Llama 3 70B config.json / model card and GPT-3 Table 2.1.
TEST(ModelCatalog, SpotValuesMatchSources) {
  const YAML::Node l = ModelCatalog::builtin().find("llama3-70b")->model;
  EXPECT_EQ(l["hidden_size"].as<int>(), 8192);
  EXPECT_EQ(l["num_layers"].as<int>(), 80);
  EXPECT_EQ(l["num_attention_heads"].as<int>(), 64);
  EXPECT_EQ(l["num_query_groups"].as<int>(), 8);
  EXPECT_EQ(l["ffn_hidden_size"].as<int>(), 28672);
  EXPECT_EQ(l["vocab_size"].as<int>(), 128256);
  EXPECT_EQ(l["seq_length"].as<int>(), 8192);
  EXPECT_TRUE(l["untie_embeddings"].as<bool>());
  EXPECT_TRUE(l["gated_mlp"].as<bool>());
  const YAML::Node g = ModelCatalog::builtin().find("gpt3-175b")->model;
  EXPECT_EQ(g["hidden_size"].as<int>(), 12288);
  EXPECT_EQ(g["num_layers"].as<int>(), 96);
  EXPECT_EQ(g["seq_length"].as<int>(), 2048);
  EXPECT_FALSE(g["gated_mlp"].as<bool>());
}

class TempDir {
 public:
  // Unique per process, test and instance, so parallel ctest runs and two dirs in one test never collide.
  TempDir()
      : path_(fs::temp_directory_path() /
              ("trainsim-models-" + std::to_string(::getpid()) + "-" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" + std::to_string(counter_++))) {
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string write(const std::string& file, const std::string& text) const {
    std::ofstream(path_ / file) << text;
    return (path_ / file).string();
  }
  std::string str() const { return path_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

const char* kGood = R"(name: tiny
description: "a tiny model"
source: "made up for a test"
model:
  family: gpt
  num_layers: 2
  hidden_size: 64
  num_attention_heads: 4
  ffn_hidden_size: 256
  vocab_size: 128
  seq_length: 32
)";

// Expect load() to throw an Error whose message contains every fragment.
void expect_error(const std::string& dir, const std::vector<std::string>& fragments) {
  try {
    ModelCatalog::load(dir);
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    for (const auto& f : fragments)
      EXPECT_NE(std::string(e.what()).find(f), std::string::npos) << e.what() << " lacks " << f;
  }
}

TEST(ModelCatalog, LoadsAWellFormedDirectory) {
  TempDir d;
  d.write("tiny.yaml", kGood);
  d.write("README.txt", "not a preset");  // only *.yaml are presets
  const ModelCatalog cat = ModelCatalog::load(d.str());
  ASSERT_EQ(cat.names(), std::vector<std::string>{"tiny"});
  EXPECT_EQ(cat.find("tiny")->model["hidden_size"].as<int>(), 64);
}

TEST(ModelCatalog, MalformedYamlNamesTheFile) {
  TempDir d;
  d.write("tiny.yaml", kGood);
  d.write("broken.yaml", "name: broken\nmodel: [unclosed\n");
  expect_error(d.str(), {"broken.yaml", "malformed YAML"});
}

TEST(ModelCatalog, UnknownModelKeyIsNamedWithSuggestion) {
  TempDir d;
  std::string text = kGood;
  text.replace(text.find("num_layers"), 10, "num_layer");
  d.write("tiny.yaml", text);
  expect_error(d.str(), {"tiny.yaml", "model.num_layer", "did you mean model.num_layers"});
}

TEST(ModelCatalog, NameMustMatchFileStem) {
  TempDir d;
  d.write("other.yaml", kGood);
  expect_error(d.str(), {"other.yaml", "name", "tiny"});
}

TEST(ModelCatalog, MissingOrNonPositiveSizesAreRejected) {
  TempDir d;
  std::string text = kGood;
  text.replace(text.find("hidden_size: 64"), 15, "hidden_size: -64");
  d.write("tiny.yaml", text);
  expect_error(d.str(), {"tiny.yaml", "model.hidden_size", "> 0"});

  TempDir d2;
  std::string no_vocab = kGood;
  no_vocab.erase(no_vocab.find("  vocab_size: 128\n"), 18);
  d2.write("tiny.yaml", no_vocab);
  expect_error(d2.str(), {"tiny.yaml", "model.vocab_size", "missing"});
}

TEST(ModelCatalog, MissingSourceIsRejected) {
  TempDir d;
  std::string text = kGood;
  text.erase(text.find("source:"), text.find("model:") - text.find("source:"));
  d.write("tiny.yaml", text);
  expect_error(d.str(), {"tiny.yaml", "source"});
}

TEST(ModelCatalog, PipelineLayoutsAreReadWithTheirSource) {
  TempDir d;
  d.write("tiny.yaml",
          std::string(kGood) + "pipeline_layouts_source: \"a recipe\"\npipeline_layouts:\n  \"2x1\": \"Et|tL\"\n");
  const ModelCatalog cat = ModelCatalog::load(d.str());
  const ModelPreset* p = cat.find("tiny");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->pipeline_layouts.at({2, 1}), "Et|tL");
  EXPECT_EQ(p->pipeline_layouts_source, "a recipe");
  EXPECT_FALSE(ModelCatalog::builtin().find("deepseek-v3")->pipeline_layouts.empty());
}

TEST(ModelCatalog, MalformedPipelineLayoutsAreRejected) {
  TempDir d;
  d.write("tiny.yaml",
          std::string(kGood) + "pipeline_layouts_source: \"a recipe\"\npipeline_layouts:\n  \"two\": \"Et|tL\"\n");
  expect_error(d.str(), {"tiny.yaml", "pipeline_layouts.two", "PIPELINExVIRTUAL"});
  TempDir d2;
  d2.write("tiny.yaml", std::string(kGood) + "pipeline_layouts:\n  \"2x1\": \"Et|tL\"\n");
  expect_error(d2.str(), {"tiny.yaml", "pipeline_layouts_source"});
  TempDir d3;
  d3.write("tiny.yaml", std::string(kGood) + "pipeline_layouts_source: \"x\"\npipeline_layouts:\n  \"1x1\": \"EtL\"\n");
  expect_error(d3.str(), {"tiny.yaml", "pipeline_layouts.1x1", "pipeline must be >= 2"});
}

TEST(ModelCatalog, MissingDirectoryIsAnError) {
  expect_error("/nonexistent/trainsim/models", {"/nonexistent/trainsim/models"});
}

}  // namespace
}  // namespace trainsim
