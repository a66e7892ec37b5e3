#include "workload/layer_dims.hpp"

#include "workload/kernels_factory.hpp"

namespace trainsim {

LayerDims LayerDims::of(const Scenario& sc) {
  const auto& m = sc.model;
  const auto& p = sc.parallelism;
  LayerDims d;
  d.s = m.seq_length;
  d.b = sc.training.micro_batch_size;
  d.h = m.hidden_size;
  d.a = m.num_attention_heads;
  d.g = m.num_query_groups;
  d.d = m.kv_channels;
  d.ffn = m.ffn_hidden_size;
  d.t = p.tensor;
  d.c = p.context;
  d.G = m.gated_mlp ? 2 : 1;
  d.sp = p.sequence_parallel && p.tensor > 1;
  d.flash = sc.training.flash_attention;
  d.rope = m.position_embedding == PositionEmbedding::Rope;
  d.bias = m.add_bias_linear;
  d.layernorm = m.normalization == Normalization::LayerNorm;
  d.precision = sc.training.precision;
  d.vocab_padded = padded_vocab_size(m.vocab_size, p.tensor);
  d.T = d.s / d.c * d.b;
  d.rows = d.sp ? d.T / d.t : d.T;
  d.qkv_out = (static_cast<std::int64_t>(d.a) + 2 * static_cast<std::int64_t>(d.g)) * d.d / d.t;
  d.attn_local = static_cast<std::int64_t>(d.a) * d.d / d.t;
  d.ffn_local = d.ffn / d.t;
  d.act_bytes = static_cast<std::int64_t>(static_cast<double>(d.T * d.h) * activation_bytes(d.precision));
  return d;
}

double LayerDims::layer_params() const {
  const double H = static_cast<double>(h);
  // TP-sharded weights (and the column-parallel biases, sharded with them) ...
  double w = H * static_cast<double>(qkv_out) + static_cast<double>(attn_local) * H +
             H * static_cast<double>(G * ffn_local) + static_cast<double>(ffn_local) * H;
  if (bias) w += static_cast<double>(qkv_out) + static_cast<double>(G * ffn_local);
  // ... plus the parameters replicated across TP: norms and the row-parallel biases.
  return w + layer_sp_params();
}

double LayerDims::layer_sp_params() const {
  const double H = static_cast<double>(h);
  const double norms = 2 * H * (layernorm ? 2 : 1);  // two norms; LayerNorm has gamma and beta
  return norms + (bias ? 2 * H : 0);                 // proj and fc2 biases are replicated across TP
}

double LayerDims::embedding_params() const {
  double p = static_cast<double>(vocab_padded) / t * static_cast<double>(h);
  if (!rope) p += static_cast<double>(s) * static_cast<double>(h);  // learned absolute positions
  return p;
}

double LayerDims::lm_head_params() const { return static_cast<double>(vocab_padded) / t * static_cast<double>(h); }

double LayerDims::final_norm_params() const { return static_cast<double>(h) * (layernorm ? 2 : 1); }

}  // namespace trainsim
