// The `model:` block end to end: starting point (preset / hf_config), user keys, family defaults.
#include <string>
#include <utility>

#include "core/strings.hpp"
#include "model/model_catalog.hpp"
#include "scenario/key_schema.hpp"
#include "scenario/model_section.hpp"

namespace trainsim::scenario_detail {

namespace {

// Megatron-LM's GPT-2 BPE tokenizer (gpt2-vocab.json) has 50257 entries; it is Megatron's and
// NeMo's GPT default, so a gpt-family scenario that does not state its vocabulary gets it.
constexpr std::int64_t kGpt2VocabSize = 50257;

template <class T>
T value_or(const Given<T>& slot, T fallback) {
  return slot.given ? slot.value : fallback;
}

void apply_preset(const Section& model, ModelDraft& draft) {
  const std::string name = *model.string("preset");
  const ModelCatalog& catalog = ModelCatalog::builtin();
  const ModelPreset* preset = catalog.find(name);
  if (preset == nullptr) {
    const std::vector<std::string> known = catalog.names();
    std::string message = "unknown preset '" + name + "'";
    if (const std::string guess = closest_match(name, known); !guess.empty())
      message += "; did you mean " + guess + "?";
    model.fail("preset", message + " (known presets: " + (known.empty() ? "none found" : join(known)) + ")");
  }
  check_known_model_keys(preset->model, preset->file);
  const Section layer(preset->model, "model", preset->file);
  if (layer.has("preset") || layer.has("hf_config"))
    throw ScenarioError(preset->file, "model", "a preset cannot itself name a preset or hf_config");
  read_model_layer(layer, draft);
  draft.name = preset->name;
}

}  // namespace

namespace {

// Megatron's group-limited routing (moe_utils.py group_limited_topk): both keys together, groups of equal size, and
// enough experts in the chosen groups for a token's top-k.
void check_router_groups(const MoeSpec& moe, const Section& keys) {
  const int groups = moe.router_num_groups, chosen = moe.router_group_topk;
  if (groups == 0 && chosen == 0) return;
  if (groups == 0)
    keys.fail("router_num_groups", "router_group_topk " + std::to_string(chosen) +
                                       " needs router_num_groups, the number of expert groups it chooses from");
  if (chosen == 0)
    keys.fail("router_group_topk",
              "router_num_groups " + std::to_string(groups) +
                  " needs router_group_topk, how many of the groups each token's experts come from");
  if (moe.num_experts % groups != 0)
    keys.fail("router_num_groups", "router_num_groups " + std::to_string(groups) + " does not divide num_experts " +
                                       std::to_string(moe.num_experts) + " into equal groups");
  if (chosen > groups)
    keys.fail("router_group_topk",
              "router_group_topk " + std::to_string(chosen) + " exceeds router_num_groups " + std::to_string(groups));
  if (static_cast<std::int64_t>(chosen) * (moe.num_experts / groups) < moe.router_topk)
    keys.fail("router_group_topk", "router_group_topk " + std::to_string(chosen) + " groups of " +
                                       std::to_string(moe.num_experts / groups) +
                                       " experts hold fewer than router_topk " + std::to_string(moe.router_topk));
}

}  // namespace

ModelSpec resolve_model(const ModelDraft& d, const Section& model) {
  ModelSpec m;
  m.name = d.name;
  // Without a family the model is Megatron's default GPTModel: LayerNorm, learned positions, biases.
  m.family = value_or(d.family, std::string("gpt"));
  const bool gpt = m.family == "gpt";

  if (!d.num_layers.given) model.missing("num_layers");
  if (!d.hidden_size.given) model.missing("hidden_size");
  if (!d.num_attention_heads.given) model.missing("num_attention_heads");
  if (!d.seq_length.given) model.missing("seq_length", "tokens per sequence");
  // Far beyond any model (the largest are ~2^17 wide), and small enough that the FLOP and memory
  // formulas downstream cannot overflow 64-bit integers when they multiply a few of these.
  constexpr std::int64_t kMaxDimension = std::int64_t{1} << 32;
  const struct {
    const char* key;
    const Given<std::int64_t>& value;
  } dimensions[] = {{"hidden_size", d.hidden_size}, {"seq_length", d.seq_length},
                    {"kv_channels", d.kv_channels}, {"ffn_hidden_size", d.ffn_hidden_size},
                    {"vocab_size", d.vocab_size},   {"moe.expert_ffn_hidden_size", d.expert_ffn_hidden_size}};
  for (const auto& dim : dimensions)
    if (dim.value.given && dim.value.value > kMaxDimension)
      model.fail(dim.key,
                 std::string(dim.key) + " " + std::to_string(dim.value.value) + " exceeds 2^32; not a plausible model");
  m.num_layers = d.num_layers.value;
  m.mtp_layers = value_or(d.mtp_layers, 0);
  m.hidden_size = d.hidden_size.value;
  m.num_attention_heads = d.num_attention_heads.value;
  m.seq_length = d.seq_length.value;

  m.num_query_groups = value_or(d.num_query_groups, m.num_attention_heads);
  if (m.num_attention_heads % m.num_query_groups != 0)
    model.fail("num_query_groups", "num_attention_heads " + std::to_string(m.num_attention_heads) +
                                       " is not divisible by num_query_groups " + std::to_string(m.num_query_groups) +
                                       " (each KV head serves the same number of query heads)");
  if (d.kv_channels.given) {
    m.kv_channels = d.kv_channels.value;
  } else {
    // Megatron: kv_channels = hidden_size // num_attention_heads, asserting divisibility.
    if (m.hidden_size % m.num_attention_heads != 0)
      model.fail("hidden_size",
                 "hidden_size " + std::to_string(m.hidden_size) + " is not divisible by num_attention_heads " +
                     std::to_string(m.num_attention_heads) + "; give model.kv_channels (the head dimension)");
    m.kv_channels = m.hidden_size / m.num_attention_heads;
  }

  m.gated_mlp = value_or(d.gated_mlp, !gpt);
  if (d.ffn_hidden_size.given) {
    m.ffn_hidden_size = d.ffn_hidden_size.value;
  } else if (!m.gated_mlp) {
    m.ffn_hidden_size = 4 * m.hidden_size;  // GPT-2/3's MLP, Megatron's default without --swiglu
  } else {
    // Gated MLPs use model-specific widths (Llama: 8h/3 rounded to a multiple of 256, times a
    // multiplier), so there is no safe default.
    model.missing("ffn_hidden_size", "a " + m.family + "-family model has a gated MLP whose width must be given");
  }

  if (d.vocab_size.given) {
    m.vocab_size = d.vocab_size.value;
  } else if (gpt) {
    m.vocab_size = kGpt2VocabSize;
  } else {
    model.missing("vocab_size", "no default for family " + m.family);
  }

  m.untie_embeddings = value_or(d.untie_embeddings, false);
  m.parallel_block = value_or(d.parallel_block, false);
  m.sliding_window = value_or(d.sliding_window, std::optional<std::int64_t>{});
  m.mla = value_or(d.mla, std::optional<MlaSpec>{});
  // Multi-latent attention sizes its heads from model.mla (the q/kv LoRA ranks and head dims): the plain-attention
  // keys would be read by nothing, so a scenario that writes them on an MLA model is refused.
  if (m.mla)
    for (const char* key : {"kv_channels", "num_query_groups", "add_qkv_bias"})
      if (model.has(key))
        model.fail(
            key, std::string(key) + " does not apply to multi-latent attention (model.mla sizes the heads); remove it");
  m.normalization = value_or(d.normalization, gpt ? Normalization::LayerNorm : Normalization::RMSNorm);
  m.position_embedding =
      value_or(d.position_embedding, gpt ? PositionEmbedding::LearnedAbsolute : PositionEmbedding::Rope);
  m.add_bias_linear = value_or(d.add_bias_linear, gpt);
  m.add_qkv_bias = value_or(d.add_qkv_bias, false);

  MoeSpec& moe = m.moe;
  moe.num_experts = value_or(d.num_experts, 0);
  moe.router_topk = value_or(d.router_topk, moe.router_topk);
  // Megatron: moe_ffn_hidden_size defaults to ffn_hidden_size.
  moe.expert_ffn_hidden_size = value_or(d.expert_ffn_hidden_size, m.ffn_hidden_size);
  moe.shared_experts = value_or(d.shared_experts, 0);
  moe.layer_freq = value_or(d.layer_freq, 1);
  moe.first_dense_layers = value_or(d.first_dense_layers, 0);
  moe.capacity_factor = value_or(d.capacity_factor, std::optional<double>{});
  moe.router_num_groups = value_or(d.router_num_groups, 0);
  moe.router_group_topk = value_or(d.router_group_topk, 0);
  // MoE settings on a dense model would be read by nothing (a block that forgot num_experts would run dense).
  if (!moe.enabled()) {
    const std::pair<bool, const char*> set[] = {{d.router_topk.given, "router_topk"},
                                                {d.expert_ffn_hidden_size.given, "expert_ffn_hidden_size"},
                                                {d.shared_experts.given, "shared_experts"},
                                                {d.layer_freq.given, "layer_freq"},
                                                {d.first_dense_layers.given, "first_dense_layers"},
                                                {d.capacity_factor.given, "capacity_factor"}};
    for (const auto& [given, key] : set)
      if (given)
        model.child("moe").fail(key, std::string(key) +
                                         " needs an MoE model: model.moe.num_experts is 0 or missing, so the model "
                                         "is dense");
  }
  if (!moe.enabled() && (moe.router_num_groups > 0 || moe.router_group_topk > 0))
    model.child("moe").fail(moe.router_num_groups > 0 ? "router_num_groups" : "router_group_topk",
                            "router groups need an MoE model (model.moe.num_experts > 0)");
  if (moe.enabled()) {
    const Section moe_keys = model.child("moe");
    check_router_groups(moe, moe_keys);
    if (moe.router_topk > moe.num_experts)
      moe_keys.fail("router_topk", "router_topk " + std::to_string(moe.router_topk) + " exceeds num_experts " +
                                       std::to_string(moe.num_experts));
    if (moe.first_dense_layers >= m.num_layers)
      moe_keys.fail("first_dense_layers", "first_dense_layers " + std::to_string(moe.first_dense_layers) +
                                              " leaves no MoE layer among num_layers " + std::to_string(m.num_layers));
  }
  return m;
}

ModelSpec read_model(const Section& model) {
  if (!model.present()) model.fail("", "missing required section model");
  ModelDraft draft;
  if (model.has("preset") && model.has("hf_config"))
    model.fail("hf_config", "give model.preset or model.hf_config, not both");
  if (model.has("preset")) apply_preset(model, draft);
  if (auto hf = model.string("hf_config")) read_hf_config(*hf, model, draft);
  read_model_layer(model, draft);
  // A config.json describes the architecture, not the job: its max_position_embeddings is the longest context
  // the positions allow (131072 for Llama 3.1), which taken as the sequence length would train 16x longer
  // sequences than the published 8192 without a word. The training length is the scenario's to give.
  if (model.has("hf_config") && !draft.seq_length.given) {
    std::string message =
        "missing required key model.seq_length: a Hugging Face config gives no training sequence "
        "length";
    if (draft.hf_max_position_embeddings)
      message += "; its max_position_embeddings (" + std::to_string(*draft.hf_max_position_embeddings) +
                 ") is the longest context the model supports, not the length a job trains at";
    model.fail("seq_length", message + "; set model.seq_length (tokens per sequence, e.g. 4096)");
  }
  return resolve_model(draft, model);
}

}  // namespace trainsim::scenario_detail
