// `model.hf_config`: start a model from a Hugging Face transformers config.json.
// JSON is YAML's flow syntax, so yaml-cpp reads it and the typed getters check its values.
// Field names are those of transformers' LlamaConfig / MixtralConfig / DeepseekV3Config.
#include <filesystem>

#include "scenario/model_section.hpp"

namespace trainsim::scenario_detail {

namespace {

// model_type -> family, only where the architecture matches the family's defaults (RMSNorm, RoPE,
// SwiGLU, no bias). Anything else leaves the family to the scenario.
std::optional<std::string> family_of(const std::string& model_type) {
  if (model_type == "llama" || model_type == "mistral" || model_type == "qwen2") return "llama";
  if (model_type == "mixtral") return "mixtral";
  if (model_type == "deepseek_v2" || model_type == "deepseek_v3") return "deepseek";
  if (model_type == "gpt2") return "gpt";
  return std::nullopt;
}

YAML::Node load_json(const std::filesystem::path& file, const Section& model) {
  if (!std::filesystem::is_regular_file(file))
    model.fail("hf_config", "cannot read Hugging Face config '" + file.string() + "': no such file");
  try {
    return YAML::LoadFile(file.string());
  } catch (const YAML::Exception& e) {
    throw ScenarioError(file.string(), "", "not a valid config.json: " + e.msg);
  }
}

}  // namespace

void read_hf_config(const std::string& path, const Section& model, ModelDraft& draft) {
  std::filesystem::path file(path);
  if (file.is_relative()) file = std::filesystem::path(model.file()).parent_path() / file;
  const Section hf(load_json(file, model), "", file.string());

  if (auto type = hf.string("model_type"))
    if (auto family = family_of(*type)) draft.family.set(*family);
  take(draft.hidden_size, hf.integer("hidden_size", Bound::Positive));
  take(draft.num_layers, hf.int_value("num_hidden_layers", Bound::Positive));
  take(draft.num_attention_heads, hf.int_value("num_attention_heads", Bound::Positive));
  take(draft.num_query_groups, hf.int_value("num_key_value_heads", Bound::Positive));
  take(draft.ffn_hidden_size, hf.integer("intermediate_size", Bound::Positive));
  take(draft.vocab_size, hf.integer("vocab_size", Bound::Positive));
  // The longest sequence the model was built for; a scenario usually sets model.seq_length itself.
  take(draft.seq_length, hf.integer("max_position_embeddings", Bound::Positive));
  if (auto tied = hf.boolean("tie_word_embeddings")) draft.untie_embeddings.set(!*tied);
  take(draft.kv_channels, hf.integer("head_dim", Bound::Positive));

  // Mixtral: every layer is MoE with experts as wide as intermediate_size.
  if (auto experts = hf.int_value("num_local_experts", Bound::NonNegative)) {
    draft.num_experts.set(*experts);
    take(draft.expert_ffn_hidden_size, hf.integer("intermediate_size", Bound::Positive));
  }
  // DeepSeek-V2/V3.
  take(draft.num_experts, hf.int_value("n_routed_experts", Bound::NonNegative));
  take(draft.router_topk, hf.int_value("num_experts_per_tok", Bound::Positive));
  take(draft.expert_ffn_hidden_size, hf.integer("moe_intermediate_size", Bound::Positive));
  take(draft.shared_experts, hf.int_value("n_shared_experts", Bound::NonNegative));
  take(draft.first_dense_layers, hf.int_value("first_k_dense_replace", Bound::NonNegative));
  take(draft.layer_freq, hf.int_value("moe_layer_freq", Bound::Positive));
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
