// `model.hf_config`: start a model from a Hugging Face transformers config.json.
// JSON is YAML's flow syntax, so yaml-cpp reads it and the typed getters check its values.
// Field names are those of transformers' configuration classes (LlamaConfig, MistralConfig, MixtralConfig,
// Qwen2Config, DeepseekV2Config / DeepseekV3Config, GPT2Config). Only these model_types are read: another
// architecture's config has fields this reader would not understand (Gemma 2's soft-capping and alternating
// local/global attention, a GELU-tanh gated MLP ...) and would become a plausible but different model.
#include <filesystem>

#include "core/strings.hpp"
#include "scenario/model_section.hpp"

namespace trainsim::scenario_detail {

namespace {

// How each supported model_type maps onto the model's keys.
struct HfArchitecture {
  const char* model_type;
  const char* family;  // gpt | llama | mixtral | deepseek: norm, positions, gated MLP, biases (model_resolve.cpp)
  bool gpt2_names;     // GPT2Config's own field names (n_embd, n_layer, ...)
  bool qkv_bias;       // biases on q, k, v always (Qwen2Attention: bias=True on q/k/v, not on o)
};

constexpr HfArchitecture kArchitectures[] = {
    {"llama", "llama", false, false},
    {"mistral", "llama", false, false},
    {"mixtral", "mixtral", false, false},
    {"qwen2", "llama", false, true},
    {"deepseek_v2", "deepseek", false, false},
    {"deepseek_v3", "deepseek", false, false},
    {"gpt2", "gpt", true, false},
};

std::vector<std::string> supported_types() {
  std::vector<std::string> names;
  for (const auto& a : kArchitectures) names.emplace_back(a.model_type);
  return names;
}

const HfArchitecture& architecture_of(const Section& hf, const Section& model) {
  const std::string supported = join(supported_types());
  if (!hf.has("model_type"))
    model.fail("hf_config", hf.file() + " has no model_type; trainsim reads the configs of " + supported +
                                " (or describe the model with model.* keys instead of hf_config)");
  const std::string type = *hf.string("model_type");
  for (const auto& a : kArchitectures)
    if (type == a.model_type) return a;
  std::string message = hf.file() + ": model_type '" + type + "' is not supported";
  if (const std::string guess = closest_match(type, supported_types()); !guess.empty())
    message += " (did you mean " + guess + "?)";
  model.fail("hf_config", message + "; trainsim reads the configs of " + supported +
                              " (describe other models with model.* keys instead of hf_config)");
}

YAML::Node load_json(const std::filesystem::path& file, const Section& model) {
  if (!std::filesystem::is_regular_file(file))
    model.fail("hf_config", "cannot read Hugging Face config '" + file.string() + "': no such file");
  try {
    return YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) { throw ScenarioError(file.string(), "", "not a valid config.json: " + e.msg); }
}

// GPT-2: n_inner null = 4 x n_embd (GPT2MLP), tied embeddings unless tie_word_embeddings says otherwise.
void read_gpt2(const Section& hf, ModelDraft& draft) {
  take(draft.hidden_size, hf.integer("n_embd", Bound::Positive));
  take(draft.num_layers, hf.int_value("n_layer", Bound::Positive));
  take(draft.num_attention_heads, hf.int_value("n_head", Bound::Positive));
  take(draft.ffn_hidden_size, hf.integer("n_inner", Bound::Positive));
  take(draft.vocab_size, hf.integer("vocab_size", Bound::Positive));
  draft.hf_max_position_embeddings = hf.integer("n_positions", Bound::Positive);
}

// Sliding-window attention: Mistral and Mixtral give `sliding_window` (null = full attention); Qwen2 applies its
// `sliding_window` only with use_sliding_window, and then to the layers from max_window_layers on. One window
// for every layer is what the model describes, so a Qwen2 config that slides only some layers is refused.
void read_sliding_window(const Section& hf, const HfArchitecture& a, const Section& model, ModelDraft& draft) {
  const std::string type = a.model_type;
  if (type == "mistral" || type == "mixtral") {
    if (hf.contains("sliding_window")) draft.sliding_window.set(hf.integer("sliding_window", Bound::Positive));
    return;
  }
  if (type != "qwen2" || !hf.boolean("use_sliding_window").value_or(false)) return;
  const auto window = hf.integer("sliding_window", Bound::Positive);
  const int layers = draft.num_layers.value;
  const int full_layers = hf.int_value("max_window_layers", Bound::NonNegative).value_or(0);
  if (!window || full_layers >= layers) return;  // no window, or every layer below max_window_layers: full attention
  if (full_layers > 0)
    model.fail("hf_config", hf.file() + ": use_sliding_window with max_window_layers " + std::to_string(full_layers) +
                                " of " + std::to_string(layers) +
                                " layers slides only some layers; the model has one "
                                "model.sliding_window for every layer");
  draft.sliding_window.set(window);
}

}  // namespace

void read_hf_config(const std::string& path, const Section& model, ModelDraft& draft) {
  std::filesystem::path file(path);
  if (file.is_relative()) file = std::filesystem::path(model.file()).parent_path() / file;
  const Section hf(load_json(file, model), "", file.string());
  const HfArchitecture& arch = architecture_of(hf, model);
  draft.family.set(arch.family);
  if (auto tied = hf.boolean("tie_word_embeddings")) draft.untie_embeddings.set(!*tied);
  if (arch.gpt2_names) {
    read_gpt2(hf, draft);
    return;
  }

  take(draft.hidden_size, hf.integer("hidden_size", Bound::Positive));
  take(draft.num_layers, hf.int_value("num_hidden_layers", Bound::Positive));
  take(draft.num_attention_heads, hf.int_value("num_attention_heads", Bound::Positive));
  take(draft.num_query_groups, hf.int_value("num_key_value_heads", Bound::Positive));
  take(draft.ffn_hidden_size, hf.integer("intermediate_size", Bound::Positive));
  take(draft.vocab_size, hf.integer("vocab_size", Bound::Positive));
  // The longest sequence the model's positions were built for, not the length a job trains at (Llama 3.1 says
  // 131072): kept only for the message asking for model.seq_length (model_resolve.cpp).
  draft.hf_max_position_embeddings = hf.integer("max_position_embeddings", Bound::Positive);
  take(draft.kv_channels, hf.integer("head_dim", Bound::Positive));
  // Qwen2 always biases q, k and v; LlamaConfig's attention_bias biases q, k, v and o (the o bias, h values per
  // layer, is not counted: a millionth of the layer's parameters).
  if (arch.qkv_bias || hf.boolean("attention_bias").value_or(false)) draft.add_qkv_bias.set(true);
  read_sliding_window(hf, arch, model, draft);

  // Mixtral: every layer is MoE with experts as wide as intermediate_size.
  if (auto experts = hf.int_value("num_local_experts", Bound::NonNegative)) {
    draft.num_experts.set(*experts);
    take(draft.expert_ffn_hidden_size, hf.integer("intermediate_size", Bound::Positive));
  }
  // DeepSeek-V2/V3. Their multi-token-prediction module (num_nextn_predict_layers) is left off, as Megatron's
  // --mtp-num-layers and the deepseek-v3 preset leave it: model.mtp_layers turns it on.
  take(draft.num_experts, hf.int_value("n_routed_experts", Bound::NonNegative));
  take(draft.router_topk, hf.int_value("num_experts_per_tok", Bound::Positive));
  take(draft.expert_ffn_hidden_size, hf.integer("moe_intermediate_size", Bound::Positive));
  take(draft.shared_experts, hf.int_value("n_shared_experts", Bound::NonNegative));
  take(draft.first_dense_layers, hf.int_value("first_k_dense_replace", Bound::NonNegative));
  take(draft.layer_freq, hf.int_value("moe_layer_freq", Bound::Positive));
  // Group-limited (DeepSeek-V3: node-limited) routing: n_group expert groups, each token's experts from topk_group.
  take(draft.router_num_groups, hf.int_value("n_group", Bound::Positive));
  take(draft.router_group_topk, hf.int_value("topk_group", Bound::Positive));
  if (hf.has("kv_lora_rank")) {
    MlaSpec mla;
    mla.q_lora_rank = hf.integer("q_lora_rank", Bound::NonNegative).value_or(0);
    mla.kv_lora_rank = hf.require_integer("kv_lora_rank", Bound::Positive);
    mla.qk_nope_head_dim = hf.require_integer("qk_nope_head_dim", Bound::Positive);
    mla.qk_rope_head_dim = hf.require_integer("qk_rope_head_dim", Bound::Positive);
    mla.v_head_dim = hf.require_integer("v_head_dim", Bound::Positive);
    draft.mla.set(mla);
  }
}

}  // namespace trainsim::scenario_detail
