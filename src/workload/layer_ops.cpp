#include "workload/layer_ops.hpp"

#include "workload/kernels_factory.hpp"

namespace trainsim {

namespace {
using layer_ops_detail::D;
}  // namespace

const LayerEmitter::MlpNames LayerEmitter::kDenseMlp = {
    "fc1",       "swiglu",    "fc2",        "tp.ag.fc1_input", "tp.rs.fc2",       "tp.ar.fc2",       "tp.ag.fc2_dy",
    "fc2.dgrad", "fc2.wgrad", "swiglu.bwd", "fc1.dgrad",       "tp.rs.fc1_dgrad", "tp.ar.fc1_dgrad", "fc1.wgrad"};
const LayerEmitter::MlpNames LayerEmitter::kSharedExperts = {"shared_experts.fc1",
                                                             "shared_experts.swiglu",
                                                             "shared_experts.fc2",
                                                             "tp.ag.shared_experts_input",
                                                             "tp.rs.shared_experts_fc2",
                                                             "tp.ar.shared_experts_fc2",
                                                             "tp.ag.shared_experts_fc2_dy",
                                                             "shared_experts.fc2.dgrad",
                                                             "shared_experts.fc2.wgrad",
                                                             "shared_experts.swiglu.bwd",
                                                             "shared_experts.fc1.dgrad",
                                                             "tp.rs.shared_experts_fc1_dgrad",
                                                             "tp.ar.shared_experts_fc1_dgrad",
                                                             "shared_experts.fc1.wgrad"};

std::uint32_t LayerEmitter::gemm_op(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n,
                                    std::int64_t k, std::int64_t batch, int input_shards) {
  const Precision p =
      d_.keeps_bf16_linears(ctx.layer) && quantized_gemms(d_.precision) ? Precision::BF16 : d_.precision;
  if (p == Precision::FP8) fp8_quantize(ctx, name, m, n, k, batch, input_shards);
  if (p == Precision::FP4) nvfp4_quantize(ctx, name, m, n, k, batch);
  KernelDesc g = gemm(m, n, k, p, batch);
  g.block_scaled = p == Precision::FP8 && d_.fp8_recipe == Fp8Recipe::Mxfp8;
  return rb_.compute(ctx, name, g);
}

double LayerEmitter::tp_gather_bytes(const OpContext& ctx, double bf16_bytes) const {
  if (!quantized_gemms(d_.precision) || d_.keeps_bf16_linears(ctx.layer) || d_.dtensor_tp) return bf16_bytes;
  return bf16_bytes / activation_bytes(d_.precision) * quantized_copy_bytes(d_.precision, d_.fp8_recipe);
}

std::uint32_t LayerEmitter::bf16_gemm_op(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n,
                                         std::int64_t k) {
  const Precision p = quantized_gemms(d_.precision) ? Precision::BF16 : d_.precision;
  return rb_.compute(ctx, name, gemm(m, n, k, p));
}

void LayerEmitter::norm(const OpContext& ctx, const char* name, bool backward) {
  norm_rows(ctx, name, backward, D(d_.rows), D(d_.h));
}

void LayerEmitter::norm_rows(const OpContext& ctx, const char* name, bool backward, double rows, double width) {
  if (d_.eager) return eager_norm(ctx, name, backward, rows, width);
  // Forward reads x and writes y (+ mean/rstd); backward reads x, dy and writes dx (TE layernorm_linear.py).
  const double ab = activation_bytes(d_.precision);
  const double elems = rows * width;
  const double bytes = elems * ab * (backward ? 3.0 : 2.0);
  rb_.compute(ctx, name, memory_kernel(KernelKind::LayerNorm, bytes, elems * (backward ? 10.0 : 6.0), d_.precision));
}

void LayerEmitter::elementwise(const OpContext& ctx, const char* name, double bytes, int launches) {
  rb_.compute(ctx, name, memory_kernel(KernelKind::Elementwise, bytes, bytes / 2.0, d_.precision), launches);
}

std::uint32_t LayerEmitter::tp_collective(const OpContext& ctx, const char* name, CollKind kind, bool sync, int sms) {
  const auto id = sms >= 0 ? rb_.collective_on_sms(ctx, Stream::TpComm, name, kind, g_.tp, d_.act_bytes, sms)
                           : rb_.collective(ctx, Stream::TpComm, name, kind, g_.tp, d_.act_bytes);
  if (sync) rb_.wait(id);
  return id;
}

std::uint32_t LayerEmitter::tp_collective_bytes(const OpContext& ctx, const char* name, CollKind kind, bool sync,
                                                double bytes, int sms) {
  const auto size = static_cast<std::int64_t>(bytes);
  const auto id = sms >= 0 ? rb_.collective_on_sms(ctx, Stream::TpComm, name, kind, g_.tp, size, sms)
                           : rb_.collective(ctx, Stream::TpComm, name, kind, g_.tp, size);
  if (sync) rb_.wait(id);
  return id;
}

void LayerEmitter::gemm_call(const OpContext& ctx, const GemmCall& g) {
  if (g.bf16)
    bf16_gemm_op(ctx, g.name, g.m, g.n, g.k);
  else
    gemm_op(ctx, g.name, g.m, g.n, g.k);
}

void LayerEmitter::column_parallel_backward(const OpContext& ctx, const ColumnBackwardComm& comm, const GemmCall& dgrad,
                                            const GemmCall& wgrad) {
  const bool tp = d_.t > 1, gather = tp && d_.sp;
  const char* reduce_name = d_.sp ? comm.reduce_sp : comm.reduce_ar;
  const CollKind reduce_kind = d_.sp ? CollKind::ReduceScatter : CollKind::AllReduce;
  if (d_.dtensor_tp) {
    if (gather) tp_collective_bytes(ctx, comm.gather, CollKind::AllGather, true, comm.bytes);
    gemm_call(ctx, dgrad);
    gemm_call(ctx, wgrad);
    if (tp) tp_collective_bytes(ctx, reduce_name, reduce_kind, true, comm.bytes);
    return;
  }
  std::uint32_t ag = 0, red = 0;
  // The input re-gathered for the wgrad is quantized like the forward's (layernorm_linear.py backward).
  const double gather_bytes = wgrad.bf16 ? comm.bytes : tp_gather_bytes(ctx, comm.bytes);
  if (gather) ag = tp_collective_bytes(ctx, comm.gather, CollKind::AllGather, false, gather_bytes, comm.sms);
  gemm_call(ctx, dgrad);
  if (gather && comm.gather_done_before_reduce) rb_.wait(ag);
  if (tp) red = tp_collective_bytes(ctx, reduce_name, reduce_kind, false, comm.bytes, comm.sms);
  if (gather && !comm.gather_done_before_reduce) rb_.wait(ag);
  gemm_call(ctx, wgrad);
  if (tp) rb_.wait(red);
}

void LayerEmitter::rope(const OpContext& ctx, const char* name) {
  elementwise(ctx, name, D(d_.T) * D((static_cast<std::int64_t>(d_.a) + d_.g) * d_.d / d_.t) * rope_bytes_per_element(),
              rope_launches());
}

void LayerEmitter::mlp_activation(const OpContext& ctx, const char* name, std::int64_t ffn_local, bool backward) {
  elementwise(ctx, name, D(d_.T) * D(ffn_local) * activation_bytes_per_element(backward),
              activation_launches(backward));
}

std::int64_t LayerEmitter::attention_head_dim() const {
  // MLA: QK^T runs over nope+rope dims and PV over v dims; the kernel's FLOPs 4*s_q*s_kv*d/2 with d the mean of
  // the two equal Megatron's (d_qk + d_v)/2 per head (training.py::num_floating_point_operations, MLA branch).
  if (d_.mla.on) return (d_.mla.nope + d_.mla.rope + d_.mla.v) / 2;
  return d_.d;
}

double LayerEmitter::kv_elements_per_token() const {
  if (d_.mla.on) return D(d_.mla.q_local / (d_.mla.nope + d_.mla.rope)) * D(d_.mla.nope + d_.mla.rope + d_.mla.v);
  return 2.0 * D(static_cast<std::int64_t>(d_.g) * d_.d / d_.t);
}

// Megatron's fused scale-mask-softmax is one well-written memory-bound pass, priced like other fused
// pointwise kernels; the PyTorch path (KernelKind::Softmax) runs far below HBM bandwidth (EleutherAI cookbook
// transformer.out).
KernelKind LayerEmitter::softmax_kind() const {
  return d_.fused_softmax ? KernelKind::Elementwise : KernelKind::Softmax;
}

void LayerEmitter::attention_forward(const OpContext& ctx) {
  const std::int64_t heads = d_.a / d_.t;
  const std::int64_t s_local = d_.s / d_.c;
  if (d_.c > 1 && d_.torch_cp) {
    torch_ring_attention_forward(ctx);
  } else if (d_.c > 1) {
    ring_attention_forward(ctx);
  } else if (d_.flash) {
    KernelDesc k =
        flash_attention_fwd(d_.b * heads, s_local, d_.s, attention_head_dim(), true, d_.precision, d_.window);
    rb_.compute(ctx, "core_attn.fwd", k);
  } else {
    // Unfused: baddbmm QK^T, fused scale-mask-softmax, dropout, bmm PV (DotProductAttention); no causal skipping.
    rb_.compute(ctx, "attn.qk", gemm(s_local, d_.s, attention_head_dim(), attention_dtype(), d_.b * heads));
    const double scores = D(d_.b * heads) * D(s_local) * D(d_.s);
    rb_.compute(
        ctx, "attn.softmax",
        memory_kernel(softmax_kind(), scores * activation_bytes(d_.precision) * 2.0, scores * 5.0, d_.precision));
    elementwise(ctx, "attn.dropout", scores * (activation_bytes(d_.precision) * 2.0 + 1.0));
    rb_.compute(ctx, "attn.pv", gemm(s_local, attention_head_dim(), d_.s, attention_dtype(), d_.b * heads));
  }
  if (d_.eager && !d_.mla.on) eager_output_layout(ctx, false);
}

void LayerEmitter::attention_backward(const OpContext& ctx) {
  const std::int64_t heads = d_.a / d_.t;
  const std::int64_t s_local = d_.s / d_.c;
  const bool eager_layout = d_.eager && !d_.mla.on;
  if (eager_layout) eager_output_layout(ctx, true);
  if (d_.c > 1 && d_.torch_cp) {
    torch_ring_attention_backward(ctx);
  } else if (d_.c > 1) {
    ring_attention_backward(ctx);
  } else if (d_.flash) {
    rb_.compute(ctx, "core_attn.bwd",
                flash_attention_bwd(d_.b * heads, s_local, d_.s, attention_head_dim(), true, d_.precision, d_.window));
  } else {
    const double scores = D(d_.b * heads) * D(s_local) * D(d_.s);
    rb_.compute(ctx, "attn.pv.dgrad",
                gemm(s_local, d_.s, attention_head_dim(), attention_dtype(), d_.b * heads));  // dP = dO V^T
    rb_.compute(ctx, "attn.pv.wgrad",
                gemm(d_.s, attention_head_dim(), s_local, attention_dtype(), d_.b * heads));  // dV = P^T dO
    elementwise(ctx, "attn.dropout.bwd", scores * (activation_bytes(d_.precision) * 2.0 + 1.0));
    rb_.compute(
        ctx, "attn.softmax.bwd",
        memory_kernel(softmax_kind(), scores * activation_bytes(d_.precision) * 3.0, scores * 4.0, d_.precision));
    rb_.compute(ctx, "attn.qk.dgrad",
                gemm(s_local, attention_head_dim(), d_.s, attention_dtype(), d_.b * heads));  // dQ = dS K
    rb_.compute(ctx, "attn.qk.wgrad",
                gemm(d_.s, attention_head_dim(), s_local, attention_dtype(), d_.b * heads));  // dK = dS^T Q
  }
  if (eager_layout) eager_qkv_grad_layout(ctx);
}

void LayerEmitter::gathered_gemm(const OpContext& ctx, const char* name, std::int64_t n, const char* ag_name) {
  if (d_.t > 1 && d_.sp) {
    // SP: all-gather the sequence-sharded input first (sync: the norm output before QKV/fc1; dY before the
    // row-parallel dgrads); with userbuffers a ring exchange overlapped with the GEMM (TE initialize_ub).
    const auto ag = tp_collective_bytes(ctx, ag_name, CollKind::AllGather, !tp_overlap_,
                                        tp_gather_bytes(ctx, D(d_.act_bytes)), tp_overlap_ ? kUbRingExchangeSms : -1);
    gemm_op(ctx, name, d_.T, n, d_.h, 1, d_.dtensor_tp ? 1 : d_.t);  // TE quantizes the shard; DTensor the whole
    if (tp_overlap_) rb_.wait(ag);
    return;
  }
  gemm_op(ctx, name, d_.T, n, d_.h);
}

void LayerEmitter::row_parallel_forward(const OpContext& ctx, const char* name, std::int64_t k, const char* rs_name,
                                        const char* ar_name) {
  if (d_.t == 1) {
    gemm_op(ctx, name, d_.T, d_.h, k);
    return;
  }
  if (tp_overlap_) {
    // Userbuffers "pipeline" overlap (TE initialize_ub): the GEMM is split in chunks whose reduce-scatter runs
    // while the next chunk computes; priced as the RS running concurrently with the whole GEMM.
    const auto rs = tp_collective(ctx, rs_name, CollKind::ReduceScatter, false, kUbPipelineSms);
    gemm_op(ctx, name, d_.T, d_.h, k);
    rb_.wait(rs);
    return;
  }
  gemm_op(ctx, name, d_.T, d_.h, k);
  // No SP: all-reduce of the output; SP: reduce-scatter to the sequence shard. Synchronous (TERowParallelLinear).
  tp_collective(ctx, d_.sp ? rs_name : ar_name, d_.sp ? CollKind::ReduceScatter : CollKind::AllReduce, true);
}

void LayerEmitter::mlp_forward(const OpContext& ctx, const MlpNames& n, std::int64_t ffn_local) {
  const bool dense = &n == &kDenseMlp;  // module hooks: the dense MLP's linears only
  if (dense) module_start(ctx, "fc1", false);
  gathered_gemm(ctx, n.fc1, d_.G * ffn_local, n.ag_fc1_input);
  mlp_activation(ctx, d_.G == 2 ? n.act : "gelu", ffn_local, false);
  if (dense) module_start(ctx, "fc2", false);
  row_parallel_forward(ctx, n.fc2, ffn_local, n.rs_fc2, n.ar_fc2);
}

void LayerEmitter::mlp_backward(const OpContext& ctx, const MlpNames& n, std::int64_t ffn_local) {
  const bool dense = &n == &kDenseMlp;
  if (dense) module_start(ctx, "fc2", true);
  gathered_gemm(ctx, n.fc2_dgrad, ffn_local, n.ag_fc2_dy);  // B2-B3
  gemm_op(ctx, n.fc2_wgrad, d_.h, ffn_local, d_.T);         // B4
  mlp_activation(ctx, d_.G == 2 ? n.act_bwd : "gelu.bwd", ffn_local, true);
  if (dense) module_start(ctx, "fc1", true);
  // B6 async re-gather of the input, B7 dgrad, B8 async RS (SP) / AR of the dgrad, B9 wgrad.
  column_parallel_backward(ctx, {n.ag_fc1_input, n.rs_fc1_dgrad, n.ar_fc1_dgrad, D(d_.act_bytes), ub_bulk_sms()},
                           {n.fc1_dgrad, d_.T, d_.h, d_.G * ffn_local}, {n.fc1_wgrad, d_.G * ffn_local, d_.h, d_.T});
}

void LayerEmitter::forward(int layer, int mb, Phase phase) {
  const OpContext ctx{phase, layer, mb};
  const double ab = activation_bytes(d_.precision);
  const double res = D(d_.rows * d_.h) * ab;  // one residual-stream tensor on this rank

  // --- attention block (TransformerLayer._forward_attention) ---
  if (d_.mla.on) {
    mla_projections_forward(ctx);
  } else {
    module_start(ctx, "input_norm", false);
    norm(ctx, "input_norm", false);
    module_start(ctx, "qkv", false);
    gathered_gemm(ctx, "qkv", d_.qkv_out, "tp.ag.qkv_input");
    if (d_.rope) rope(ctx, "rope");
  }
  attention_forward(ctx);
  module_start(ctx, "proj", false);
  row_parallel_forward(ctx, "proj", d_.mla.on ? d_.mla.v_local : d_.attn_local, "tp.rs.proj", "tp.ar.proj");
  elementwise(ctx, "attn.bias_dropout_add", res * 3.0 + D(d_.rows * d_.h));

  // --- MLP block (TransformerLayer._forward_mlp), or the MoE block ---
  if (d_.is_moe(layer)) {
    norm(ctx, "pre_mlp_norm", false);  // a separate TENorm in the MoE spec
    moe_forward(ctx);
  } else {
    module_start(ctx, "pre_mlp_norm", false);
    norm(ctx, "pre_mlp_norm", false);
    mlp_forward(ctx, kDenseMlp, d_.ffn_local);
  }
  elementwise(ctx, "mlp.bias_dropout_add", res * 3.0 + D(d_.rows * d_.h));
}

void LayerEmitter::backward(int layer, int mb, bool recompute_attention) {
  const OpContext ctx{Phase::Backward, layer, mb};
  const double ab = activation_bytes(d_.precision);
  const double res = D(d_.rows * d_.h) * ab;

  const OpContext redo{Phase::Recompute, layer, mb};
  if (sel_.torchtitan_op) torchtitan_op_recompute(redo);

  // --- MLP backward, or the MoE block's ---
  elementwise(ctx, "mlp.bda.bwd", res * 2.0 + D(d_.rows * d_.h));
  if (d_.is_moe(layer)) {
    // layernorm: the MoE spec's separate pre-MLP TENorm discarded its output; it is re-run when the gradient
    // reaches its consumers. moe: the whole MoE layer (a checkpoint around self.mlp) runs forward again.
    if (sel_.layernorm) norm(redo, "pre_mlp_norm", false);
    if (sel_.moe) moe_forward(redo);
    moe_backward(ctx);
  } else {
    // mlp: the dense MLP is checkpointed (transformer_layer.py recompute_mlp, never for an MoE layer). The
    // TE spec fuses the pre-MLP norm into fc1 (IdentityOp), so layernorm has nothing to re-run here.
    if (sel_.mlp) mlp_forward(redo, kDenseMlp, d_.ffn_local);
    mlp_backward(ctx, kDenseMlp, d_.ffn_local);
  }
  if (!d_.is_moe(layer)) module_start(ctx, "pre_mlp_norm", true);
  norm(ctx, "pre_mlp_norm.bwd", true);               // B10
  elementwise(ctx, "residual_grad_add", res * 3.0);  // B11

  // --- attention backward ---
  const std::int64_t proj_in = d_.mla.on ? d_.mla.v_local : d_.attn_local;
  elementwise(ctx, "attn.bda.bwd", res * 2.0 + D(d_.rows * d_.h));
  module_start(ctx, "proj", true);
  gathered_gemm(ctx, "proj.dgrad", proj_in, "tp.ag.proj_dy");  // B13-B14
  gemm_op(ctx, "proj.wgrad", d_.h, proj_in, d_.T);             // B15
  // mla_up_proj: the q/kv up-projections and RoPE discarded their outputs (the core-attention inputs); they
  // run again when the core-attention gradient arrives (multi_latent_attention.py qkv_up_checkpoint).
  if (sel_.mla_up_proj && d_.mla.on) mla_up_proj_recompute(redo);
  if (recompute_attention) attention_forward(redo);
  attention_backward(ctx);  // B16
  if (d_.mla.on) {
    module_start(ctx, "attention", true);
    // layernorm: MLA's input norm is a separate TENorm (the down-projections are plain linears).
    if (sel_.layernorm) norm(redo, "input_norm", false);
    mla_projections_backward(ctx);
  } else {
    if (d_.rope) rope(ctx, "rope.bwd");
    module_start(ctx, "qkv", true);
    // B18 re-gather, B19 dgrad, B20 reduction, B21 wgrad.
    column_parallel_backward(ctx,
                             {"tp.ag.qkv_input", "tp.rs.qkv_dgrad", "tp.ar.qkv_dgrad", D(d_.act_bytes), ub_bulk_sms()},
                             {"qkv.dgrad", d_.T, d_.h, d_.qkv_out}, {"qkv.wgrad", d_.qkv_out, d_.h, d_.T});
  }
  module_start(ctx, "input_norm", true);
  norm(ctx, "input_norm.bwd", true);  // B22
  elementwise(ctx, "residual_grad_add", res * 3.0);
}

void LayerEmitter::torchtitan_op_recompute(const OpContext& redo) {
  // The block's forward replayed when its backward first needs a saved tensor, the saved outputs taken from the
  // cache: the two norms, RoPE, the activation and the matmuls wk, wo and w3 (fc2 when ungated). Attention is saved;
  // the all-gathers it replays under TP are column_parallel_backward's re-gathers.
  const std::int64_t kv_local = (d_.qkv_out - d_.attn_local) / 2;
  norm(redo, "input_norm", false);
  gemm_op(redo, "qkv.k", d_.T, kv_local, d_.h);
  if (d_.rope) rope(redo, "rope");
  gemm_op(redo, "proj", d_.T, d_.h, d_.attn_local);
  norm(redo, "pre_mlp_norm", false);
  if (d_.G == 2) {
    gemm_op(redo, "fc1.w3", d_.T, d_.ffn_local, d_.h);
    mlp_activation(redo, "swiglu", d_.ffn_local, false);
  } else {
    mlp_activation(redo, "gelu", d_.ffn_local, false);
    gemm_op(redo, "fc2", d_.T, d_.h, d_.ffn_local);
  }
}

void LayerEmitter::embedding_forward(int mb) {
  const OpContext ctx{Phase::Forward, -1, mb};
  const double ab = activation_bytes(d_.precision);
  // Gather rows of the vocab-sharded table: read + write T x h.
  rb_.compute(ctx, "embedding", memory_kernel(KernelKind::Embedding, D(d_.T * d_.h) * ab * 2.0, 0, d_.precision));
  if (d_.t > 1) {
    // SP with RoPE: reduce-scatter to the sequence shard; otherwise all-reduce (VocabParallelEmbedding).
    const bool rs = d_.sp && d_.rope;
    tp_collective(ctx, rs ? "tp.rs.embedding" : "tp.ar.embedding", rs ? CollKind::ReduceScatter : CollKind::AllReduce,
                  true);
  }
  if (!d_.rope) elementwise(ctx, "position_embedding_add", D(d_.T * d_.h) * ab * 3.0);
  elementwise(ctx, "embedding_dropout", D(d_.rows * d_.h) * (ab * 2.0 + 1.0));
}

void LayerEmitter::embedding_backward(int mb) {
  const OpContext ctx{Phase::Backward, -1, mb};
  const double ab = activation_bytes(d_.precision);
  if (d_.t > 1 && d_.sp) tp_collective(ctx, "tp.ag.embedding_grad", CollKind::AllGather, true);
  // Dense embedding backward (index-add into a [V/t, h] bf16 gradient) and the DDP hook adding it
  // into the fp32 main_grad: a memory-bound pass over V*h/t elements every micro-batch (VocabParallelEmbedding
  // backward).
  const double table = D(d_.vocab_padded / d_.t * d_.h);
  rb_.compute(ctx, "embedding.bwd",
              memory_kernel(KernelKind::Embedding, table * ab + D(d_.T * d_.h) * ab * 2.0, 0, d_.precision));
  rb_.compute(ctx, "embedding.main_grad_add",
              memory_kernel(KernelKind::Elementwise, table * (ab + 8.0), table, d_.precision));
}

void LayerEmitter::lm_head_forward(int mb) {
  const OpContext ctx{Phase::Forward, -1, mb};
  norm(ctx, "final_norm", false);
  output_head_forward(ctx, false);
}

void LayerEmitter::output_head_forward(const OpContext& ctx, bool mtp) {
  const double logits = D(d_.T) * D(d_.vocab_padded / d_.t);
  if (d_.t > 1 && d_.sp)
    tp_collective(ctx, mtp ? "tp.ag.mtp_lm_head_input" : "tp.ag.lm_head_input", CollKind::AllGather, true);
  bf16_gemm_op(ctx, mtp ? "mtp.lm_head" : "lm_head", d_.T, d_.vocab_padded / d_.t, d_.h);
  // Vocab-parallel cross-entropy (_VocabParallelCrossEntropy): fp32 upcast + max, AR(max), exp/sum passes, AR(sum) x2,
  // softmax kept for backward. About 22 bytes per logit over the passes.
  rb_.compute(ctx, mtp ? "mtp.cross_entropy.max" : "cross_entropy.max",
              memory_kernel(KernelKind::CrossEntropy, logits * 6.0, logits, d_.precision));
  if (d_.t > 1)
    rb_.sync_collective(ctx, Stream::TpComm, mtp ? "tp.ar.mtp_ce_max" : "tp.ar.ce_max", CollKind::AllReduce, g_.tp,
                        4 * d_.T);
  rb_.compute(ctx, mtp ? "mtp.cross_entropy.exp_sum" : "cross_entropy.exp_sum",
              memory_kernel(KernelKind::CrossEntropy, logits * 8.0, logits * 3.0, d_.precision));
  if (d_.t > 1) {
    rb_.sync_collective(ctx, Stream::TpComm, mtp ? "tp.ar.mtp_ce_predicted" : "tp.ar.ce_predicted", CollKind::AllReduce,
                        g_.tp, 4 * d_.T);
    rb_.sync_collective(ctx, Stream::TpComm, mtp ? "tp.ar.mtp_ce_sum_exp" : "tp.ar.ce_sum_exp", CollKind::AllReduce,
                        g_.tp, 4 * d_.T);
  }
  rb_.compute(ctx, mtp ? "mtp.cross_entropy.softmax" : "cross_entropy.softmax",
              memory_kernel(KernelKind::CrossEntropy, logits * 8.0, logits, d_.precision));
}

void LayerEmitter::lm_head_backward(int mb) {
  const OpContext ctx{Phase::Backward, -1, mb};
  output_head_backward(ctx, false);
  norm(ctx, "final_norm.bwd", true);
}

void LayerEmitter::output_head_backward(const OpContext& ctx, bool mtp) {
  const double logits = D(d_.T) * D(d_.vocab_padded / d_.t);
  rb_.compute(ctx, mtp ? "mtp.cross_entropy.bwd" : "cross_entropy.bwd",
              memory_kernel(KernelKind::CrossEntropy, logits * 6.0, logits * 2.0, d_.precision));
  ColumnBackwardComm comm{mtp ? "tp.ag.mtp_lm_head_input" : "tp.ag.lm_head_input",
                          mtp ? "tp.rs.mtp_lm_head_dgrad" : "tp.rs.lm_head_dgrad",
                          mtp ? "tp.ar.mtp_lm_head_dgrad" : "tp.ar.lm_head_dgrad", D(d_.act_bytes)};
  comm.gather_done_before_reduce = true;
  column_parallel_backward(ctx, comm,
                           {mtp ? "mtp.lm_head.dgrad" : "lm_head.dgrad", d_.T, d_.h, d_.vocab_padded / d_.t, true},
                           {mtp ? "mtp.lm_head.wgrad" : "lm_head.wgrad", d_.vocab_padded / d_.t, d_.h, d_.T, true});
}

// ---- multi-token prediction (multi_token_prediction.py MultiTokenPredictionLayer.forward) ----

void LayerEmitter::mtp_forward(int layer, int mb) {
  const OpContext ctx{Phase::Forward, layer, mb};
  const double ab = activation_bytes(d_.precision);
  // Embedding of the tokens shifted by one (the MTP stage's own copy of the word embedding, LanguageModelEmbedding).
  rb_.compute(ctx, "mtp.embedding", memory_kernel(KernelKind::Embedding, D(d_.T * d_.h) * ab * 2.0, 0, d_.precision));
  if (d_.t > 1) {
    const bool rs = d_.sp && d_.rope;
    tp_collective(ctx, rs ? "tp.rs.mtp_embedding" : "tp.ar.mtp_embedding",
                  rs ? CollKind::ReduceScatter : CollKind::AllReduce, true);
  }
  // enorm(embedding), hnorm(previous hidden states), concatenated to [rows, 2h].
  norm(ctx, "mtp.enorm", false);
  norm(ctx, "mtp.hnorm", false);
  elementwise(ctx, "mtp.concat", D(d_.rows * d_.h) * ab * 4.0);
  // eh_proj: column-parallel 2h -> h/t (gather_output=False) after the SP all-gather of its 2h-wide input, then
  // gather_from_tensor_model_parallel_region (all-gather of the h/t columns) and the SP scatter (a local split).
  if (d_.t > 1 && d_.sp)
    tp_collective_bytes(ctx, "tp.ag.mtp_eh_input", CollKind::AllGather, true, D(d_.T * 2 * d_.h) * ab);
  gemm_op(ctx, "mtp.eh_proj", d_.T, d_.h / d_.t, 2 * d_.h);
  if (d_.t > 1) tp_collective(ctx, "tp.ag.mtp_eh_output", CollKind::AllGather, true);
  forward(layer, mb, Phase::Forward);
  norm(ctx, "mtp.final_norm", false);
  output_head_forward(ctx, true);
}

void LayerEmitter::mtp_backward(int layer, int mb, bool recompute_attention) {
  const OpContext ctx{Phase::Backward, layer, mb};
  const double ab = activation_bytes(d_.precision);
  output_head_backward(ctx, true);
  norm(ctx, "mtp.final_norm.bwd", true);
  backward(layer, mb, recompute_attention);
  // Backward of the SP scatter is a sequence all-gather; of the column gather, a local split.
  if (d_.t > 1 && d_.sp) tp_collective(ctx, "tp.ag.mtp_eh_output_grad", CollKind::AllGather, true);
  column_parallel_backward(
      ctx, {"tp.ag.mtp_eh_input", "tp.rs.mtp_eh_dgrad", "tp.ar.mtp_eh_dgrad", D(d_.T * 2 * d_.h) * ab},
      {"mtp.eh_proj.dgrad", d_.T, 2 * d_.h, d_.h / d_.t}, {"mtp.eh_proj.wgrad", d_.h / d_.t, 2 * d_.h, d_.T});
  norm(ctx, "mtp.enorm.bwd", true);
  norm(ctx, "mtp.hnorm.bwd", true);
  // The main model's last hidden states feed both its own head and hnorm: the two gradients are summed.
  elementwise(ctx, "mtp.hidden_grad_add", D(d_.rows * d_.h) * ab * 3.0);
  if (d_.t > 1 && d_.sp) tp_collective(ctx, "tp.ag.mtp_embedding_grad", CollKind::AllGather, true);
  const double table = D(d_.vocab_padded / d_.t * d_.h);
  rb_.compute(ctx, "mtp.embedding.bwd",
              memory_kernel(KernelKind::Embedding, table * ab + D(d_.T * d_.h) * ab * 2.0, 0, d_.precision));
  rb_.compute(ctx, "mtp.embedding.main_grad_add",
              memory_kernel(KernelKind::Elementwise, table * (ab + 8.0), table, d_.precision));
}

}  // namespace trainsim
