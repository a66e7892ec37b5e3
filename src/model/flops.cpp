// FLOPs of one iteration exactly as Megatron-LM counts them: megatron/training/training.py::
// num_floating_point_operations (transformer_flops branch), transcribed below.
//
//   FLOPs = tokens * [ L_dense * mlp_dense + L_moe * mlp_moe + L * attn_linear + logit ] + sqsum * L * attn_core
//
// with tokens = B*s and sqsum = B*s^2 (every sequence full length), and per token, per layer:
//   attn_linear = 6 * [ h*(q + 2kv) + q*h ]           QKV + output projection, q = a*d, kv = g*d (GQA via kv only)
//   mlp_dense   = 6 * h * F * F_eff                    F_eff = 3 gated (SwiGLU), 2 otherwise
//   mlp_moe     = 6 * h * F_e * F_eff * (k + shared)   only the k routed experts (+ shared experts) are counted
//               + 6 * h * E                          the router's gating GEMM (T, E, h); see below
//   logit       = 6 * h * V_pad                        LM head with the padded vocabulary
// and per sequence-squared, per layer:
//   attn_core   = 6 * q                                QK^T and PV, 2 FLOP per MAC, fwd+bwd = 3x, causal mask /2
// The factor 6 = 3 (forward + dgrad + wgrad) x 2 (FLOPs per multiply-accumulate). Embedding lookups, norms,
// softmax, element-wise ops and the optimizer are not counted (Megatron's convention).
//
// Multi-head latent attention (DeepSeek) replaces attn_linear and attn_core by Megatron's MLA branch:
//   attn_linear = 6 * [ q_term + kv_lora*(h + a*(d_nope + d_v) + 1) + h*d_rope + a*d_v*h ]
//     q_term    = q_lora*(h + a*(d_nope + d_rope) + 1)   (or h*a*(d_nope + d_rope) without a q LoRA)
//   attn_core   = 6 * [ a*(d_nope + d_rope)/2 + a*d_v/2 ]  per sequence-squared
// (the "+1" terms are the q/kv RMSNorm, which Megatron counts as one multiply per rank element).
//
// One addition to Megatron's count: the router's gating GEMM, 2*h*E per token forward (x3 with backward), which
// transformer_flops leaves out. It is part of the model's math (verl's DeepSeek-V3 MFU formula counts it) and
// costs 0.5% of DeepSeek-V3's per-token FLOPs (E = 256, h = 7168), 0.01% of Mixtral's (E = 8).
//
// Multi-token prediction (model.mtp_layers = n_mtp), as num_floating_point_operations counts it: every MTP block's
// transformer layer joins L (and L_moe or L_dense, by the type of the last decoder layer), each block adds
// 6 * (3h + 2h^2) per token (its enorm/hnorm/final norm and the eh_proj GEMM), and the logit term is paid
// n_mtp + 1 times (each block has its own output-layer pass and loss).
//
// Not modelled (Megatron does not count it either): sliding-window attention saving.
#include "model/flops.hpp"

#include <algorithm>

#include "model/layer_shapes.hpp"

namespace trainsim {

namespace {

constexpr double kFwdBwd = 3;  // forward + backward (dgrad + wgrad)
constexpr double kFma = 2;     // FLOPs per multiply-accumulate

double attn_linear_per_token_layer(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size);
  const double a = m.num_attention_heads;
  if (m.mla) {
    const MlaSpec& x = *m.mla;
    const double nope = static_cast<double>(x.qk_nope_head_dim), rope = static_cast<double>(x.qk_rope_head_dim);
    const double v = static_cast<double>(x.v_head_dim);
    const double q_term =
        x.q_lora_rank > 0 ? static_cast<double>(x.q_lora_rank) * (h + a * (nope + rope) + 1) : h * a * (nope + rope);
    return kFwdBwd * kFma *
           (q_term + static_cast<double>(x.kv_lora_rank) * (h + a * (nope + v) + 1) + h * rope + a * v * h);
  }
  const double d = static_cast<double>(head_dim(m));
  const double q = a * d, kv = kv_heads(m) * d;
  return kFwdBwd * kFma * (h * (q + 2 * kv) + q * h);
}

// Core attention FLOPs per layer per (sequence length)^2, causal.
double attn_core_per_sqsum_layer(const ModelSpec& m) {
  const double a = m.num_attention_heads;
  if (m.mla) {
    const MlaSpec& x = *m.mla;
    return kFwdBwd * kFma *
           (a * static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim) / 2 +
            a * static_cast<double>(x.v_head_dim) / 2);
  }
  // FF * FMA * q/2 * 2: QK^T and PV each 2*s^2*q per sequence, halved by the causal mask.
  return kFwdBwd * kFma * a * static_cast<double>(head_dim(m)) / 2 * 2;
}

// Layers as Megatron's FLOP count sees them: decoder layers plus the MTP blocks' layers, which take the type of
// the last decoder layer (training.py: num_moe_layers += last_layer_is_moe * mtp_num_layers).
struct LayerCounts {
  double total = 0, moe = 0, dense = 0;
};
LayerCounts layer_counts(const ModelSpec& m) {
  LayerCounts c;
  const int mtp = std::max(0, m.mtp_layers);
  const int l_moe = num_moe_layers(m) + (m.num_layers > 0 && is_moe_layer(m, m.num_layers - 1) ? mtp : 0);
  c.total = static_cast<double>(m.num_layers + mtp);
  c.moe = l_moe;
  c.dense = c.total - c.moe;
  return c;
}

// Per token, fwd + bwd, one dense MLP / one MoE block (router, k routed experts and the shared experts).
double dense_mlp_per_token_layer(const ModelSpec& m) {
  const double f_eff = m.gated_mlp ? 3 : 2;
  return kFwdBwd * kFma * static_cast<double>(m.hidden_size) * static_cast<double>(m.ffn_hidden_size) * f_eff;
}
double shared_experts_per_token_layer(const ModelSpec& m) {
  const double f_eff = m.gated_mlp ? 3 : 2;
  const double fe = static_cast<double>(m.moe.expert_ffn_hidden_size);
  return kFwdBwd * kFma * static_cast<double>(m.hidden_size) * fe * m.moe.shared_experts * f_eff;
}
double moe_block_per_token_layer(const ModelSpec& m) {
  const double f_eff = m.gated_mlp ? 3 : 2;
  const double fe = static_cast<double>(m.moe.expert_ffn_hidden_size);
  const double router = m.moe.num_experts;  // gating GEMM: h -> E
  return kFwdBwd * kFma * static_cast<double>(m.hidden_size) * (fe * m.moe.router_topk * f_eff + router) +
         shared_experts_per_token_layer(m);
}

double mlp_per_token(const ModelSpec& m) {
  const LayerCounts c = layer_counts(m);
  const double h = static_cast<double>(m.hidden_size);
  const double f_eff = m.gated_mlp ? 3 : 2;
  const double fe = static_cast<double>(m.moe.expert_ffn_hidden_size);
  const double moe_width = fe * m.moe.router_topk + fe * m.moe.shared_experts;
  const double router = m.moe.num_experts;  // gating GEMM: h -> E
  return kFwdBwd * kFma * h *
         (static_cast<double>(m.ffn_hidden_size) * f_eff * c.dense + (moe_width * f_eff + router) * c.moe);
}

// MTP blocks' own GEMM and norms: 6 * n_mtp * (3h + 2h^2) per token.
double mtp_per_token(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size);
  return kFwdBwd * kFma * std::max(0, m.mtp_layers) * (3 * h + 2 * h * h);
}

double logit_per_token(const ModelSpec& m, int tensor_parallel) {
  return kFwdBwd * kFma * static_cast<double>(m.hidden_size) *
         static_cast<double>(padded_vocab_size(m.vocab_size, std::max(tensor_parallel, 1))) *
         (1 + std::max(0, m.mtp_layers));
}

// Forward FLOPs per token of the matmuls torchtitan's per-op checkpointing re-runs in one dense block: the
// even-numbered ones of wq, wk, wv, wo, then w1, w3, w2 (gated) or fc1, fc2: wk, wo and w3 or fc2, each h x F.
double torchtitan_op_forward_per_token_layer(const ModelSpec& m) {
  const double h = static_cast<double>(m.hidden_size);
  const double d = static_cast<double>(head_dim(m));
  const double q = m.num_attention_heads * d, kv = kv_heads(m) * d;
  return kFma * h * (kv + q + static_cast<double>(m.ffn_hidden_size));
}

// Forward FLOPs per token of one MLA layer's q/kv up-projections (the mla_up_proj recompute region).
double mla_up_proj_forward_per_token_layer(const ModelSpec& m) {
  if (!m.mla) return 0;
  const MlaSpec& x = *m.mla;
  const double a = m.num_attention_heads;
  const double q_up = x.q_lora_rank > 0 ? static_cast<double>(x.q_lora_rank) * a *
                                              static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim)
                                        : 0;
  const double kv_up = static_cast<double>(x.kv_lora_rank) * a * static_cast<double>(x.qk_nope_head_dim + x.v_head_dim);
  return kFma * (q_up + kv_up);
}

}  // namespace

double causal_window_share(double seq, double window) {
  if (!(window > 0) || window >= seq) return 1.0;
  return (2.0 * window * seq - window * window) / (seq * seq);
}

namespace {
// Sum over the batch's sequences of their squared length, as far as causal attention sees it: a sliding window
// keeps causal_window_share of each sequence's pairs.
double attended_sqsum(const ModelSpec& m, double batch) {
  const double s = static_cast<double>(m.seq_length);
  return batch * s * s * causal_window_share(s, static_cast<double>(m.sliding_window.value_or(0)));
}
}  // namespace

double model_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel) {
  const double B = static_cast<double>(global_batch_size);
  const double s = static_cast<double>(m.seq_length);
  const double tokens = B * s, sqsum = attended_sqsum(m, B);
  const double L = layer_counts(m).total;
  return tokens * (mlp_per_token(m) + L * attn_linear_per_token_layer(m) + mtp_per_token(m) +
                   logit_per_token(m, tensor_parallel)) +
         sqsum * L * attn_core_per_sqsum_layer(m);
}

double hardware_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel,
                                    RecomputeGranularity recompute, int recomputed_layers) {
  return hardware_flops_per_iteration(m, global_batch_size, tensor_parallel, recompute, recomputed_layers,
                                      RecomputeModules{});
}

double hardware_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel,
                                    RecomputeGranularity recompute, int recomputed_layers,
                                    const RecomputeModules& modules) {
  const double model = model_flops_per_iteration(m, global_batch_size, tensor_parallel);
  const double B = static_cast<double>(global_batch_size);
  const double s = static_cast<double>(m.seq_length);
  const double tokens = B * s, sqsum = attended_sqsum(m, B);
  const LayerCounts counts = layer_counts(m);
  const double L = counts.total;
  switch (recompute) {
    case RecomputeGranularity::None: return model;
    case RecomputeGranularity::Selective: {
      // Each recomputed region's forward again: one third of its fwd+bwd count. Megatron's default (`core_attn`)
      // re-runs the attention-core forward of every layer (transformer_flops' selective-recompute term).
      double extra = 0;
      if (modules.core_attn) extra += sqsum * L * attn_core_per_sqsum_layer(m) / kFwdBwd;
      if (modules.mla_up_proj) extra += tokens * L * mla_up_proj_forward_per_token_layer(m);
      if (modules.torchtitan_op) extra += tokens * counts.dense * torchtitan_op_forward_per_token_layer(m);
      if (modules.mlp) extra += tokens * counts.dense * dense_mlp_per_token_layer(m) / kFwdBwd;
      if (modules.moe)
        extra += tokens * counts.moe * moe_block_per_token_layer(m) / kFwdBwd;
      else if (modules.shared_experts)
        extra += tokens * counts.moe * shared_experts_per_token_layer(m) / kFwdBwd;
      return model + extra;
    }
    case RecomputeGranularity::Full: {
      // One extra forward (1/3 of fwd+bwd) of the recomputed layers; embedding and LM head are never
      // recomputed. With MoE the layers differ, so the average layer stands in for the recomputed ones.
      const double layers = std::clamp(static_cast<double>(recomputed_layers), 0.0, L);
      const double all_layers_fwd_bwd =
          tokens * (mlp_per_token(m) + L * attn_linear_per_token_layer(m)) + sqsum * L * attn_core_per_sqsum_layer(m);
      return L > 0 ? model + all_layers_fwd_bwd / kFwdBwd * (layers / L) : model;
    }
  }
  return model;
}

}  // namespace trainsim
