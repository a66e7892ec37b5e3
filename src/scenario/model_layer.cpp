// Reading one layer of `model:` keys onto a ModelDraft (see model_section.hpp).
#include "scenario/model_section.hpp"

namespace trainsim::scenario_detail {

namespace {

std::optional<MlaSpec> read_mla(const Section& mla) {
  if (!mla.present()) return std::nullopt;
  MlaSpec spec;
  // q_lora_rank null or 0: queries are not compressed (DeepSeek-V2-Lite).
  spec.q_lora_rank = mla.integer("q_lora_rank", Bound::NonNegative).value_or(0);
  spec.kv_lora_rank = mla.require_integer("kv_lora_rank", Bound::Positive);
  spec.qk_nope_head_dim = mla.require_integer("qk_nope_head_dim", Bound::Positive);
  spec.qk_rope_head_dim = mla.require_integer("qk_rope_head_dim", Bound::Positive);
  spec.v_head_dim = mla.require_integer("v_head_dim", Bound::Positive);
  return spec;
}

}  // namespace

void read_model_layer(const Section& model, ModelDraft& draft) {
  if (!model.present()) return;
  if (auto family = model.choice<std::string>(
          "family", {{"gpt", "gpt"}, {"llama", "llama"}, {"mixtral", "mixtral"}, {"deepseek", "deepseek"}}))
    draft.family.set(*family);
  take(draft.num_layers, model.int_value("num_layers", Bound::Positive));
  take(draft.mtp_layers, model.int_value("mtp_layers", Bound::NonNegative));
  take(draft.hidden_size, model.integer("hidden_size", Bound::Positive));
  take(draft.num_attention_heads, model.int_value("num_attention_heads", Bound::Positive));
  take(draft.num_query_groups, model.int_value("num_query_groups", Bound::Positive));
  take(draft.kv_channels, model.integer("kv_channels", Bound::Positive));
  take(draft.ffn_hidden_size, model.integer("ffn_hidden_size", Bound::Positive));
  take(draft.gated_mlp, model.boolean("gated_mlp"));
  take(draft.vocab_size, model.integer("vocab_size", Bound::Positive));
  take(draft.seq_length, model.integer("seq_length", Bound::Positive));
  take(draft.untie_embeddings, model.boolean("untie_embeddings"));
  take(draft.parallel_block, model.boolean("parallel_block"));
  take(draft.add_bias_linear, model.boolean("add_bias_linear"));
  take(draft.add_qkv_bias, model.boolean("add_qkv_bias"));
  // An explicit null is a value here: it switches a preset's sliding window / MLA off.
  if (model.contains("sliding_window")) draft.sliding_window.set(model.integer("sliding_window", Bound::Positive));
  if (model.contains("mla")) draft.mla.set(read_mla(model.child("mla")));
  take(draft.normalization, model.choice<Normalization>("normalization", {{"layernorm", Normalization::LayerNorm},
                                                                          {"rmsnorm", Normalization::RMSNorm}}));
  take(draft.position_embedding,
       model.choice<PositionEmbedding>(
           "position_embedding", {{"learned", PositionEmbedding::LearnedAbsolute}, {"rope", PositionEmbedding::Rope}}));

  const Section moe = model.child("moe");
  take(draft.num_experts, moe.int_value("num_experts", Bound::NonNegative));
  take(draft.router_topk, moe.int_value("router_topk", Bound::Positive));
  take(draft.expert_ffn_hidden_size, moe.integer("expert_ffn_hidden_size", Bound::Positive));
  take(draft.shared_experts, moe.int_value("shared_experts", Bound::NonNegative));
  take(draft.layer_freq, moe.int_value("layer_freq", Bound::Positive));
  take(draft.first_dense_layers, moe.int_value("first_dense_layers", Bound::NonNegative));
  if (moe.contains("capacity_factor")) draft.capacity_factor.set(moe.number("capacity_factor", Bound::Positive));
  take(draft.router_num_groups, moe.int_value("router_num_groups", Bound::NonNegative));
  take(draft.router_group_topk, moe.int_value("router_group_topk", Bound::NonNegative));
}

}  // namespace trainsim::scenario_detail
