#include "model/layer_shapes.hpp"

#include <string>

#include "core/error.hpp"

namespace trainsim {

std::int64_t head_dim(const ModelSpec& m) {
  if (m.kv_channels > 0) return m.kv_channels;
  return m.num_attention_heads > 0 ? m.hidden_size / m.num_attention_heads : 0;
}

int kv_heads(const ModelSpec& m) { return m.num_query_groups > 0 ? m.num_query_groups : m.num_attention_heads; }

int mlp_matrices(const ModelSpec& m) { return m.gated_mlp ? 3 : 2; }

bool is_moe_layer(const ModelSpec& m, int layer) {
  if (!m.moe.enabled()) return false;
  if (layer >= m.num_layers && m.num_layers > 0) layer = m.num_layers - 1;  // an MTP block's layer
  const int freq = m.moe.layer_freq > 0 ? m.moe.layer_freq : 1;
  return layer >= m.moe.first_dense_layers && layer % freq == 0;
}

int num_moe_layers(const ModelSpec& m) {
  int n = 0;
  for (int i = 0; i < m.num_layers; ++i) n += is_moe_layer(m, i) ? 1 : 0;
  return n;
}

namespace {

// One norm: LayerNorm has gamma and beta, RMSNorm only gamma.
double norm_params(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size);
  return m.normalization == Normalization::LayerNorm ? 2 * h : h;
}

// An MLP of width f: fc1 is h -> f (2f when gated: gate and up stacked), fc2 is f -> h. Column-parallel fc1
// (weights and bias) is TP-sharded; fc2's output bias is replicated (Megatron's RowParallelLinear keeps the full bias).
void add_mlp(const ModelSpec& m, double f, bool bias, double& sharded, double& replicated) {
  const double h = static_cast<double>(m.hidden_size);
  const double fc1_cols = m.gated_mlp ? 2 * f : f;
  sharded += h * fc1_cols + f * h;
  if (bias) {
    sharded += fc1_cols;
    replicated += h;
  }
}

void add_attention(const ModelSpec& m, LayerParams& p) {
  const double h = static_cast<double>(m.hidden_size);
  const double a = m.num_attention_heads;
  if (m.mla) {
    // DeepSeek MLA (Megatron MLASelfAttention). Down-projections (h -> q_lora, h -> kv_lora + rope) and their
    // norms are not TP-split; up-projections and the output projection are (column / row parallel).
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    const double kvl = static_cast<double>(x.kv_lora_rank), ql = static_cast<double>(x.q_lora_rank);
    const double rope = static_cast<double>(x.qk_rope_head_dim), v = static_cast<double>(x.v_head_dim);
    if (x.q_lora_rank > 0) {
      p.replicated += h * ql + ql;  // q down-projection + q norm (RMSNorm gamma)
      p.tp_sharded += ql * a * qk;
    } else {
      p.tp_sharded += h * a * qk;
    }
    p.replicated += h * (kvl + rope) + kvl;  // kv down-projection (latent + shared rope key) + kv norm
    p.tp_sharded += kvl * a * (static_cast<double>(x.qk_nope_head_dim) + v) + a * v * h;
    return;
  }
  const double q = a * static_cast<double>(head_dim(m));
  const double kv = kv_heads(m) * static_cast<double>(head_dim(m));
  p.tp_sharded += h * (q + 2 * kv) + q * h;  // fused QKV (column parallel) + output projection (row parallel)
  if (m.add_bias_linear || m.add_qkv_bias) p.tp_sharded += q + 2 * kv;
  if (m.add_bias_linear) p.replicated += h;
}

}  // namespace

LayerParams layer_params(const ModelSpec& m, int layer) {
  LayerParams p;
  // Pre-attention and pre-MLP norms (a parallel block, GPT-J style, shares one norm).
  p.replicated += (m.parallel_block ? 1 : 2) * norm_params(m);
  add_attention(m, p);
  if (!is_moe_layer(m, layer)) {
    add_mlp(m, static_cast<double>(m.ffn_hidden_size), m.add_bias_linear, p.tp_sharded, p.replicated);
    return p;
  }
  const double h = static_cast<double>(m.hidden_size);
  const double fe = static_cast<double>(m.moe.expert_ffn_hidden_size);
  p.replicated += h * m.moe.num_experts;  // router (Megatron TopKRouter: replicated, flagged sequence_parallel)
  // Routed and shared experts carry no biases (Megatron's MoE recipes: Mixtral, DeepSeek, Qwen-MoE).
  double expert_weights = 0, unused_bias = 0;
  add_mlp(m, fe, false, expert_weights, unused_bias);
  p.expert += m.moe.num_experts * expert_weights;
  // Shared experts are an ordinary TP-sharded MLP of width shared_experts x expert_ffn_hidden_size.
  if (m.moe.shared_experts > 0) add_mlp(m, fe * m.moe.shared_experts, false, p.tp_sharded, p.replicated);
  return p;
}

LayerParams layer_linear_weights(const ModelSpec& m, int layer) {
  // add_attention and add_mlp without biases give the weights; MLA's down-projections come with their norms'
  // gains (q_lora_rank and kv_lora_rank elements), taken off again.
  ModelSpec weights_only = m;
  weights_only.add_bias_linear = false;
  weights_only.add_qkv_bias = false;
  LayerParams p;
  add_attention(weights_only, p);
  if (m.mla) p.replicated -= static_cast<double>(m.mla->q_lora_rank + m.mla->kv_lora_rank);
  if (!is_moe_layer(m, layer)) {
    add_mlp(weights_only, static_cast<double>(m.ffn_hidden_size), false, p.tp_sharded, p.replicated);
    return p;
  }
  const double fe = static_cast<double>(m.moe.expert_ffn_hidden_size);
  double expert_weights = 0, unused_bias = 0;
  add_mlp(weights_only, fe, false, expert_weights, unused_bias);
  p.expert += m.moe.num_experts * expert_weights;
  if (m.moe.shared_experts > 0) add_mlp(weights_only, fe * m.moe.shared_experts, false, p.tp_sharded, p.replicated);
  return p;
}

LayerParams block_linear_weights(const ModelSpec& m, int layer) {
  LayerParams w = layer_linear_weights(m, layer);
  if (layer >= m.num_layers) w.tp_sharded += mtp_extra_params(m).tp_sharded;  // eh_proj; the norms are not linears
  return w;
}

LayerParams mtp_extra_params(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size);
  LayerParams p;
  p.tp_sharded = 2 * h * h;           // eh_proj: [2h -> h], bias=False
  p.replicated = 3 * norm_params(m);  // enorm, hnorm, final_layernorm
  return p;
}

std::vector<ParamTensor> layer_param_tensors(const ModelSpec& m, int layer) {
  if (is_moe_layer(m, layer))
    throw Error("layer_param_tensors: layer " + std::to_string(layer) +
                " is an MoE layer; only dense layers are listed");
  const double h = static_cast<double>(m.hidden_size);
  const double a = m.num_attention_heads;
  const bool bias = m.add_bias_linear;
  std::vector<ParamTensor> out;
  const auto add_norm = [&](const char* module) {
    out.push_back({module, h, false, true});
    if (m.normalization == Normalization::LayerNorm) out.push_back({module, h, false, true});
  };
  add_norm("input_norm");
  if (m.mla) {
    // The same terms as add_attention's MLA branch, minus the output projection listed as "proj" below.
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim);
    const double kvl = static_cast<double>(x.kv_lora_rank), ql = static_cast<double>(x.q_lora_rank);
    const double rope = static_cast<double>(x.qk_rope_head_dim), v = static_cast<double>(x.v_head_dim);
    double sharded = kvl * a * (static_cast<double>(x.qk_nope_head_dim) + v);
    double replicated = h * (kvl + rope) + kvl;
    if (x.q_lora_rank > 0) {
      sharded += ql * a * qk;
      replicated += h * ql + ql;
    } else {
      sharded += h * a * qk;
    }
    out.push_back({"attention", sharded, true, false});
    out.push_back({"attention", replicated, false, false});
    out.push_back({"proj", a * v * h, true, false});  // MLA carries no linear biases (add_attention)
  } else {
    const double q = a * static_cast<double>(head_dim(m));
    const double kv = kv_heads(m) * static_cast<double>(head_dim(m));
    out.push_back({"qkv", h * (q + 2 * kv), true, false});
    if (bias || m.add_qkv_bias) out.push_back({"qkv", q + 2 * kv, true, true});
    out.push_back({"proj", q * h, true, false});
    if (bias) out.push_back({"proj", h, false, true});  // row-parallel output bias: replicated
  }
  if (!m.parallel_block) add_norm("pre_mlp_norm");
  const double f = static_cast<double>(m.ffn_hidden_size);
  const double fc1_cols = m.gated_mlp ? 2 * f : f;
  out.push_back({"fc1", h * fc1_cols, true, false});
  if (bias) out.push_back({"fc1", fc1_cols, true, true});
  out.push_back({"fc2", f * h, true, false});
  if (bias) out.push_back({"fc2", h, false, true});
  return out;
}

double word_embedding_params(const ModelSpec& m, int tensor_parallel) {
  return static_cast<double>(padded_vocab_size(m.vocab_size, tensor_parallel)) * static_cast<double>(m.hidden_size);
}

double position_embedding_params(const ModelSpec& m) {
  if (m.position_embedding != PositionEmbedding::LearnedAbsolute) return 0;
  return static_cast<double>(m.seq_length) * static_cast<double>(m.hidden_size);
}

double final_norm_params(const ModelSpec& m) { return norm_params(m); }

double total_params(const ModelSpec& m, int tensor_parallel) {
  double total = word_embedding_params(m, tensor_parallel) * (m.untie_embeddings ? 2 : 1);
  total += position_embedding_params(m) + final_norm_params(m);
  for (int i = 0; i < m.num_layers; ++i) total += layer_params(m, i).total();
  // MTP blocks: their transformer layer and eh_proj/norms (embedding and output layer are the model's own).
  for (int k = 0; k < m.mtp_layers; ++k)
    total += layer_params(m, m.num_layers + k).total() + mtp_extra_params(m).total();
  return total;
}

}  // namespace trainsim
