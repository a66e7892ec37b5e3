// model.hf_config without traps: the training sequence length is the scenario's (a config's
// max_position_embeddings is not it), and only the model_types trainsim maps are read, each with what its
// architecture implies (Qwen2's QKV bias, Mistral's sliding window, GPT-2's own field names).
#include <filesystem>
#include <fstream>

#include "model/layer_shapes.hpp"
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

// meta-llama/Llama-3.1-8B config.json (the fields trainsim reads).
constexpr const char* kLlama31 = R"({"architectures": ["LlamaForCausalLM"], "model_type": "llama",
  "hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
  "num_key_value_heads": 8, "max_position_embeddings": 131072, "vocab_size": 128256, "tie_word_embeddings": false,
  "hidden_act": "silu", "rope_scaling": {"factor": 8.0, "rope_type": "llama3"}})";

// Qwen/Qwen2-7B config.json: q/k/v carry biases; the sliding window is off (use_sliding_window false).
constexpr const char* kQwen2 = R"({"model_type": "qwen2", "hidden_size": 3584, "intermediate_size": 18944,
  "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4, "max_position_embeddings": 131072,
  "vocab_size": 152064, "tie_word_embeddings": false, "use_sliding_window": false, "sliding_window": 131072,
  "max_window_layers": 28})";

// mistralai/Mistral-7B-v0.1 config.json: a 4096-token sliding window on every layer.
constexpr const char* kMistral = R"({"model_type": "mistral", "hidden_size": 4096, "intermediate_size": 14336,
  "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8, "max_position_embeddings": 32768,
  "vocab_size": 32000, "sliding_window": 4096, "tie_word_embeddings": false})";

class HfConfig : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("trainsim-hfc-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The scenario's model block is `model` (YAML flow) with hf_config: config.json holding `json`.
  Scenario load(const std::string& json, const std::string& model = "{hf_config: config.json, seq_length: 4096}",
                const std::string& base = kValidScenario) {
    std::ofstream(dir_ / "config.json") << json;
    std::ofstream(dir_ / "case.yaml") << edit(base, "model", model.c_str());
    return load_scenario((dir_ / "case.yaml").string());
  }
  ScenarioError error(const std::string& json,
                      const std::string& model = "{hf_config: config.json, seq_length: 4096}") {
    try {
      load(json, model);
    } catch (const ScenarioError& e) { return e; }
    ADD_FAILURE() << "expected a ScenarioError";
    return ScenarioError("", "", "");
  }
  std::filesystem::path dir_;
};

// Llama 3.1 was pre-trained at 8192 tokens; its config says 131072. Without model.seq_length the scenario is an
// error on that key quoting the config's value, rather than a job silently trained at 131072.
TEST_F(HfConfig, SequenceLengthMustBeGiven) {
  const ScenarioError e = error(kLlama31, "{hf_config: config.json}");
  EXPECT_EQ(e.key(), "model.seq_length");
  EXPECT_NE(std::string(e.what()).find("max_position_embeddings (131072)"), std::string::npos) << e.what();
  EXPECT_EQ(load(kLlama31, "{hf_config: config.json, seq_length: 8192}").model.seq_length, 8192);
}

// gemma2 (GELU-tanh gated MLP, logit soft-capping, alternating local/global attention) used to become a plain GPT
// with a GELU MLP. Unknown and missing model_types are errors on model.hf_config listing what is read.
TEST_F(HfConfig, UnknownModelTypeIsRefusedWithTheSupportedList) {
  const ScenarioError e = error(R"({"model_type": "gemma2", "hidden_size": 2304, "num_hidden_layers": 26,
      "num_attention_heads": 8, "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 9216,
      "vocab_size": 256000})");
  EXPECT_EQ(e.key(), "model.hf_config");
  const std::string what = e.what();
  EXPECT_NE(what.find("model_type 'gemma2' is not supported"), std::string::npos) << what;
  for (const char* type : {"llama", "mistral", "mixtral", "qwen2", "deepseek_v2", "deepseek_v3", "gpt2"})
    EXPECT_NE(what.find(type), std::string::npos) << type << ": " << what;
  const ScenarioError missing = error(R"({"hidden_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 16})");
  EXPECT_EQ(missing.key(), "model.hf_config");
  EXPECT_NE(std::string(missing.what()).find("has no model_type"), std::string::npos) << missing.what();
}

TEST_F(HfConfig, LlamaIsAGatedRmsNormRopeModelWithoutBiases) {
  const ModelSpec m = load(kLlama31).model;
  EXPECT_EQ(m.family, "llama");
  EXPECT_TRUE(m.gated_mlp);
  EXPECT_EQ(m.normalization, Normalization::RMSNorm);
  EXPECT_EQ(m.position_embedding, PositionEmbedding::Rope);
  EXPECT_FALSE(m.add_bias_linear);
  EXPECT_FALSE(m.add_qkv_bias);
  EXPECT_EQ(m.num_query_groups, 8);
  EXPECT_FALSE(m.sliding_window.has_value());
}

// Qwen2: the llama architecture plus biases on q, k and v: (28 + 2 x 4) heads x 128 = 4608 more parameters per
// layer than the same model without them, and no bias on o or the MLP.
TEST_F(HfConfig, Qwen2HasQkvBias) {
  const ModelSpec m = load(kQwen2).model;
  EXPECT_EQ(m.family, "llama");
  EXPECT_TRUE(m.add_qkv_bias);
  EXPECT_FALSE(m.add_bias_linear);
  EXPECT_FALSE(m.sliding_window.has_value());  // use_sliding_window: false
  ModelSpec without = m;
  without.add_qkv_bias = false;
  EXPECT_DOUBLE_EQ(layer_params(m, 0).total() - layer_params(without, 0).total(), (28 + 2 * 4) * 128.0);
}

// Qwen2 slides its window on layers from max_window_layers on: all of them (0) is the model's one window, some of
// them cannot be described and is refused.
TEST_F(HfConfig, Qwen2SlidingWindowAppliesOnlyToEveryLayerOrNone) {
  std::string json = kQwen2;
  json.replace(json.find(R"("use_sliding_window": false)"), 27, R"("use_sliding_window": true)");
  EXPECT_FALSE(load(json).model.sliding_window.has_value());  // max_window_layers 28 = every layer full
  std::string all = json;
  all.replace(all.find(R"("max_window_layers": 28)"), 23, R"("max_window_layers": 0)");
  all.replace(all.find(R"("sliding_window": 131072)"), 24, R"("sliding_window": 4096)");
  EXPECT_EQ(load(all).model.sliding_window, 4096);
  std::string some = json;
  some.replace(some.find(R"("max_window_layers": 28)"), 23, R"("max_window_layers": 14)");
  const ScenarioError e = error(some);
  EXPECT_EQ(e.key(), "model.hf_config");
  EXPECT_NE(std::string(e.what()).find("slides only some layers"), std::string::npos) << e.what();
}

TEST_F(HfConfig, MistralSlidingWindowIsRead) {
  EXPECT_EQ(load(kMistral).model.sliding_window, 4096);
  std::string full = kMistral;
  full.replace(full.find(R"("sliding_window": 4096)"), 22, R"("sliding_window": null)");
  EXPECT_FALSE(load(full).model.sliding_window.has_value());
}

// GPT-2 names its fields differently (n_embd, n_layer, n_head, n_inner, n_positions); n_inner null = 4 x n_embd.
TEST_F(HfConfig, Gpt2FieldNames) {
  const ModelSpec m = load(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12, "n_inner": null,
      "n_positions": 1024, "vocab_size": 50257, "activation_function": "gelu_new"})",
                           "{hf_config: config.json, seq_length: 1024}")
                          .model;
  EXPECT_EQ(m.family, "gpt");
  EXPECT_EQ(m.hidden_size, 768);
  EXPECT_EQ(m.num_layers, 12);
  EXPECT_EQ(m.num_attention_heads, 12);
  EXPECT_EQ(m.ffn_hidden_size, 4 * 768);
  EXPECT_FALSE(m.gated_mlp);
  EXPECT_FALSE(m.untie_embeddings);
  const ScenarioError e = error(R"({"model_type": "gpt2", "n_embd": 768, "n_layer": 12, "n_head": 12,
      "n_positions": 1024, "vocab_size": 50257})",
                                "{hf_config: config.json}");
  EXPECT_NE(std::string(e.what()).find("max_position_embeddings (1024)"), std::string::npos) << e.what();
}

// DeepSeek-V3's shape (4 layers here): MLA, routed and shared experts, the first layer dense.
TEST_F(HfConfig, DeepseekV3IsMlaWithExperts) {
  const std::string base = edit(kValidScenario, "parallelism.pipeline", "1");
  const ModelSpec m = load(R"({"model_type": "deepseek_v3", "hidden_size": 7168, "intermediate_size": 18432,
      "moe_intermediate_size": 2048, "num_hidden_layers": 4, "num_attention_heads": 128, "num_key_value_heads": 128,
      "n_routed_experts": 256, "n_shared_experts": 1, "num_experts_per_tok": 8, "first_k_dense_replace": 1,
      "moe_layer_freq": 1, "q_lora_rank": 1536, "kv_lora_rank": 512, "qk_nope_head_dim": 128, "qk_rope_head_dim": 64,
      "v_head_dim": 128, "vocab_size": 129280, "max_position_embeddings": 163840, "num_nextn_predict_layers": 1,
      "tie_word_embeddings": false})",
                           "{hf_config: config.json, seq_length: 4096}", base)
                          .model;
  EXPECT_EQ(m.family, "deepseek");
  ASSERT_TRUE(m.mla.has_value());
  EXPECT_EQ(m.mla->kv_lora_rank, 512);
  EXPECT_EQ(m.moe.num_experts, 256);
  EXPECT_EQ(m.moe.first_dense_layers, 1);
  EXPECT_EQ(m.mtp_layers, 0);  // as Megatron and the deepseek-v3 preset: model.mtp_layers turns it on
}

// model.add_qkv_bias is a key of its own (Megatron's --add-qkv-bias), overriding what a config implies.
TEST_F(HfConfig, QkvBiasKeyOverridesTheConfig) {
  EXPECT_FALSE(load(kQwen2, "{hf_config: config.json, seq_length: 4096, add_qkv_bias: false}").model.add_qkv_bias);
  EXPECT_TRUE(parse_scenario(edit(kValidScenario, "model.add_qkv_bias", "true"), "test.yaml").model.add_qkv_bias);
  EXPECT_FALSE(parse_scenario(kValidScenario, "test.yaml").model.add_qkv_bias);
}

}  // namespace
}  // namespace trainsim
