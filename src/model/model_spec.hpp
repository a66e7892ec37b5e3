#pragma once
// The shape of a transformer model, independent of how it is parallelised or what it runs on.
// Field names follow the scenario keys (docs/scenario-keys.md, `model` section).
#include <cstdint>
#include <optional>
#include <string>

namespace trainsim {

enum class Normalization { LayerNorm, RMSNorm };
enum class PositionEmbedding { LearnedAbsolute, Rope };

// DeepSeek multi-head latent attention dimensions.
struct MlaSpec {
  std::int64_t q_lora_rank = 0;
  std::int64_t kv_lora_rank = 0;
  std::int64_t qk_nope_head_dim = 0;
  std::int64_t qk_rope_head_dim = 0;
  std::int64_t v_head_dim = 0;
};

struct MoeSpec {
  int num_experts = 0;  // 0 = dense model
  int router_topk = 2;
  std::int64_t expert_ffn_hidden_size = 0;
  int shared_experts = 0;
  int layer_freq = 1;                     // every Nth layer is MoE
  int first_dense_layers = 0;             // the first N layers stay dense
  std::optional<double> capacity_factor;  // nullopt = dropless, balanced routing
  // Group-limited routing (Megatron --moe-router-num-groups / --moe-router-group-topk; DeepSeek-V3's node-limited
  // routing, n_group 8 / topk_group 4): the experts fall into router_num_groups equal groups and a token's top-k come
  // from its router_group_topk best groups. 0 = no groups.
  int router_num_groups = 0;
  int router_group_topk = 0;
  bool enabled() const { return num_experts > 0; }
};

struct ModelSpec {
  std::string name;    // preset name or "custom"
  std::string family;  // gpt | llama | mixtral | deepseek
  int num_layers = 0;
  std::int64_t hidden_size = 0;
  int num_attention_heads = 0;
  int num_query_groups = 0;      // KV heads; = num_attention_heads without GQA
  std::int64_t kv_channels = 0;  // head dim
  std::int64_t ffn_hidden_size = 0;
  bool gated_mlp = false;       // SwiGLU: fc1 produces 2*ffn columns
  std::int64_t vocab_size = 0;  // as given; Megatron pads it (see padded_vocab_size)
  std::int64_t seq_length = 0;
  bool untie_embeddings = false;
  bool parallel_block = false;
  // DeepSeek-V3 multi-token prediction (Megatron's --mtp-num-layers): MTP blocks after the last decoder layer,
  // each an embedding of the shifted tokens, enorm/hnorm, eh_proj (2h -> h), one transformer layer of the last
  // decoder layer's type, a final norm and the (shared) output layer with its own loss. Global layer ids
  // num_layers .. num_layers + mtp_layers - 1 denote their transformer layers.
  int mtp_layers = 0;
  std::optional<std::int64_t> sliding_window;
  std::optional<MlaSpec> mla;
  MoeSpec moe;
  // Family-derived details (set by the family defaults, overridable).
  Normalization normalization = Normalization::LayerNorm;
  PositionEmbedding position_embedding = PositionEmbedding::LearnedAbsolute;
  bool add_bias_linear = true;
  // Biases on the query, key and value projections only (Megatron's --add-qkv-bias; Qwen2): implied by
  // add_bias_linear, which biases every linear layer.
  bool add_qkv_bias = false;
};

// Megatron pads the vocabulary to a multiple of 128 * tensor (megatron/training/vocab_utils.py).
std::int64_t padded_vocab_size(std::int64_t vocab_size, int tensor_parallel);

}  // namespace trainsim
