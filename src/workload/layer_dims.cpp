#include "workload/layer_dims.hpp"

#include "model/layer_shapes.hpp"
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
  const LayerParams lp = trainsim::layer_params(m, 0);  // dense models: every layer has the same shape
  const double t_ranks = static_cast<double>(d.t);
  d.layer_params = lp.tp_sharded / t_ranks + lp.replicated;
  d.layer_sp_params = lp.replicated;
  d.lm_head_params = word_embedding_params(m, d.t) / t_ranks;
  d.embedding_params = d.lm_head_params + position_embedding_params(m);
  d.final_norm_params = trainsim::final_norm_params(m);
  return d;
}

}  // namespace trainsim
