#pragma once
// The `model:` block. A model is built in layers: a starting point (a preset from the model catalog
// or a Hugging Face config.json), then the user's keys on top, then the family defaults for
// whatever is still unset. The draft records which values were given so that a default never
// overwrites a value from a lower layer.
#include <cstdint>
#include <optional>
#include <string>

#include "model/model_spec.hpp"
#include "scenario/yaml_reader.hpp"

namespace trainsim::scenario_detail {

template <class T>
struct Given {
  bool given = false;
  T value{};
  void set(T v) {
    given = true;
    value = std::move(v);
  }
};

// Sets `slot` when the source (YAML key, HF config field) had a value; leaves it alone otherwise.
template <class T>
void take(Given<T>& slot, const std::optional<T>& value) {
  if (value) slot.set(*value);
}

struct ModelDraft {
  std::string name = "custom";
  Given<std::string> family;
  Given<int> num_layers, num_attention_heads, num_query_groups, mtp_layers;
  Given<std::int64_t> hidden_size, kv_channels, ffn_hidden_size, vocab_size, seq_length;
  Given<bool> gated_mlp, untie_embeddings, parallel_block, add_bias_linear, add_qkv_bias;
  Given<std::optional<std::int64_t>> sliding_window;  // given as null = full attention
  Given<std::optional<MlaSpec>> mla;                  // given as null = plain MHA/GQA
  Given<Normalization> normalization;
  Given<PositionEmbedding> position_embedding;
  // moe.*
  Given<int> num_experts, router_topk, shared_experts, layer_freq, first_dense_layers, router_num_groups,
      router_group_topk;
  Given<std::int64_t> expert_ffn_hidden_size;
  Given<std::optional<double>> capacity_factor;  // given as null = dropless
  // A Hugging Face config's max_position_embeddings (n_positions): not a training length, only quoted when the
  // scenario leaves model.seq_length out.
  std::optional<std::int64_t> hf_max_position_embeddings;
};

// Applies the keys of one `model:` mapping (a preset's or the user's) onto the draft.
// `model.preset` and `model.hf_config` are not read here.
void read_model_layer(const Section& model, ModelDraft& draft);

// Reads a Hugging Face config.json (path relative to the scenario file's directory) onto the draft.
void read_hf_config(const std::string& path, const Section& model, ModelDraft& draft);

// Family defaults and derived values; ScenarioError naming the key for anything missing or inconsistent.
ModelSpec resolve_model(const ModelDraft& draft, const Section& model);

// The whole `model:` block: preset or hf_config, the user's keys, defaults.
ModelSpec read_model(const Section& model);

}  // namespace trainsim::scenario_detail
