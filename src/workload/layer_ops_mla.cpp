// Multi-head latent attention (DeepSeek-V2/V3) as Megatron-Core's MLASelfAttention issues it with the
// Transformer Engine spec (megatron/core/transformer/multi_latent_attention.py; its FLOPs per
// training.py::num_floating_point_operations): the input norm is a separate kernel, the q and kv
// down-projections are "duplicated" (TP-replicated) linears on the rank's own sequence shard, their latents go
// through LayerNorm-fused column-parallel up-projections (the norm on the local shard, then the SP all-gather,
// then the GEMM), the shared RoPE key is all-gathered over the sequence, RoPE is applied to the rope parts and
// q/k are concatenated; core attention and the output projection are the layer's usual ones.
#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

namespace {
using layer_ops_detail::D;
}  // namespace

void LayerEmitter::latent_up_forward(const OpContext& ctx, const char* norm_name, const char* ag_name,
                                     const char* gemm_name, std::int64_t latent, std::int64_t out) {
  const double ab = activation_bytes(d_.precision);
  norm_rows(ctx, norm_name, false, D(d_.rows), D(latent));
  if (d_.t > 1 && d_.sp) tp_collective_bytes(ctx, ag_name, CollKind::AllGather, true, D(d_.T * latent) * ab);
  gemm_op(ctx, gemm_name, d_.T, out, latent);
}

void LayerEmitter::latent_up_backward(const OpContext& ctx, const char* ag_name, const char* dgrad_name,
                                      const char* red_name, const char* wgrad_name, const char* norm_name,
                                      std::int64_t latent, std::int64_t out) {
  // Column-parallel backward (as the QKV linear's, with the latent in place of h): re-gather the saved normed latent,
  // dgrad, reduce the dgrad, wgrad; then the fused norm's backward, if any.
  const double bytes = D(d_.T * latent) * activation_bytes(d_.precision);
  column_parallel_backward(ctx, {ag_name, red_name, red_name, bytes}, {dgrad_name, d_.T, latent, out},
                           {wgrad_name, out, latent, d_.T});
  if (norm_name != nullptr) norm_rows(ctx, norm_name, true, D(d_.rows), D(latent));
}

void LayerEmitter::mla_projections_forward(const OpContext& ctx) {
  const MlaDims& x = d_.mla;
  const double ab = activation_bytes(d_.precision);
  const bool tp_sp = d_.t > 1 && d_.sp;
  module_start(ctx, "input_norm", false);
  norm(ctx, "input_norm", false);
  module_start(ctx, "attention", false);
  // Down-projections on the rank's rows (the local sequence shard under SP).
  if (x.q_lora > 0) gemm_op(ctx, "mla.q_down", d_.rows, x.q_lora, d_.h);
  gemm_op(ctx, "mla.kv_down", d_.rows, x.kv_lora + x.rope, d_.h);
  // The shared RoPE key skips the kv up-projection: all-gathered over the sequence on its own.
  if (tp_sp) tp_collective_bytes(ctx, "tp.ag.mla_k_rope", CollKind::AllGather, true, D(d_.T * x.rope) * ab);
  if (x.q_lora > 0) {
    latent_up_forward(ctx, "mla.q_norm", "tp.ag.mla_q_latent", "mla.q_up", x.q_lora, x.q_local);
  } else {
    gathered_gemm(ctx, "mla.q_proj", x.q_local, "tp.ag.mla_q_input");  // q projected straight from h
  }
  latent_up_forward(ctx, "mla.kv_norm", "tp.ag.mla_kv_latent", "mla.kv_up", x.kv_lora, x.kv_local);
  // RoPE on the rope parts of q and the shared key, then q = [q_nope, q_rope], k = [k_nope, k_rope] per head.
  const double heads = D(x.q_local / (x.nope + x.rope));
  elementwise(ctx, "mla.rope_concat", D(d_.T) * (D(x.q_local) + heads * D(x.nope + x.rope)) * ab * 2.0);
}

void LayerEmitter::mla_up_proj_recompute(const OpContext& ctx) {
  const MlaDims& x = d_.mla;
  const double ab = activation_bytes(d_.precision);
  // multi_latent_attention.py get_query_key_value_tensors: qkv_up_proj_and_rope_apply under a CheckpointWithoutOutput
  // (q_up with its fused q_layernorm when q is compressed, kv_up with kv_layernorm, RoPE applied to q and k).
  if (x.q_lora > 0) latent_up_forward(ctx, "mla.q_norm", "tp.ag.mla_q_latent", "mla.q_up", x.q_lora, x.q_local);
  latent_up_forward(ctx, "mla.kv_norm", "tp.ag.mla_kv_latent", "mla.kv_up", x.kv_lora, x.kv_local);
  const double heads = D(x.q_local / (x.nope + x.rope));
  elementwise(ctx, "mla.rope_concat", D(d_.T) * (D(x.q_local) + heads * D(x.nope + x.rope)) * ab * 2.0);
}

void LayerEmitter::mla_projections_backward(const OpContext& ctx) {
  const MlaDims& x = d_.mla;
  const double ab = activation_bytes(d_.precision);
  const bool tp = d_.t > 1;
  const bool tp_sp = tp && d_.sp;
  const double heads = D(x.q_local / (x.nope + x.rope));
  elementwise(ctx, "mla.rope_concat.bwd", D(d_.T) * (D(x.q_local) + heads * D(x.nope + x.rope)) * ab * 2.0);
  latent_up_backward(ctx, "tp.ag.mla_kv_latent", "mla.kv_up.dgrad",
                     tp_sp ? "tp.rs.mla_kv_latent_dgrad" : "tp.ar.mla_kv_latent_dgrad", "mla.kv_up.wgrad",
                     "mla.kv_norm.bwd", x.kv_lora, x.kv_local);
  if (x.q_lora > 0) {
    latent_up_backward(ctx, "tp.ag.mla_q_latent", "mla.q_up.dgrad",
                       tp_sp ? "tp.rs.mla_q_latent_dgrad" : "tp.ar.mla_q_latent_dgrad", "mla.q_up.wgrad",
                       "mla.q_norm.bwd", x.q_lora, x.q_local);
  } else {
    latent_up_backward(ctx, "tp.ag.mla_q_input", "mla.q_proj.dgrad",
                       tp_sp ? "tp.rs.mla_q_input_dgrad" : "tp.ar.mla_q_input_dgrad", "mla.q_proj.wgrad", nullptr, d_.h,
                       x.q_local);
  }
  if (tp_sp) tp_collective_bytes(ctx, "tp.rs.mla_k_rope", CollKind::ReduceScatter, true, D(d_.T * x.rope) * ab);
  gemm_op(ctx, "mla.kv_down.dgrad", d_.rows, d_.h, x.kv_lora + x.rope);
  gemm_op(ctx, "mla.kv_down.wgrad", x.kv_lora + x.rope, d_.h, d_.rows);
  if (x.q_lora > 0) {
    gemm_op(ctx, "mla.q_down.dgrad", d_.rows, d_.h, x.q_lora);
    gemm_op(ctx, "mla.q_down.wgrad", x.q_lora, d_.h, d_.rows);
  }
  elementwise(ctx, "mla.input_grad_add", D(d_.rows * d_.h) * ab * 3.0);
}

}  // namespace trainsim
