// The MoE block of Megatron-Core (megatron/core/transformer/moe/moe_layer.py, router.py, token_dispatcher.py,
// experts.py::TEGroupedMLP, shared_experts.py; docs/moe.md), for one micro-batch on one rank, in place of the
// dense MLP (transformer/mlp.py::MLP.forward and its backward).
//
// Balanced routing is assumed (documented in docs/moe.md): each of the rank's T_l tokens goes to k experts and
// every expert receives T_l*k/E of every rank's tokens, so after the dispatch each rank holds T_l*k rows for its
// E/ep local experts (t_e*T_l*k after the expert-TP all-gather), split evenly among them. The grouped GEMMs are
// priced as batched GEMMs of E_l equal members.
//
// Forward, alltoall dispatcher: pre-MLP norm; shared experts (an ordinary TP MLP) first; router gating GEMM and
// top-k; permute into expert order; EP all-to-all of the tokens and of their routing probabilities; expert-TP
// all-gather of both when t_e > 1; regroup by local expert; grouped fc1, probability-weighted activation,
// grouped fc2; the reverse (unsort, expert-TP reduce-scatter, EP all-to-all back, unpermute = scatter-add of the
// k copies); add the shared experts' output. Allgather dispatcher: all-gather of routing map, probabilities and
// tokens over etp x ep, local selection, experts, scatter-add, reduce-scatter over etp x ep. Every dispatcher
// collective is synchronous: the next kernel consumes its output. Backward mirrors it (all-gather <->
// reduce-scatter, all-to-alls reversed), then the router and the shared experts, whose ops autograd reaches last.
//
// Not modelled (latency-only; router.py::TopKRouter._apply_aux_loss, moe_utils.py): the aux-loss all-reduce of
// E counts over tp x cp, the all-gather of per-expert token counts over etp x ep and the host sync that reads
// them before the all-to-all.
#include "collective/deepep_buffers.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

namespace {
using layer_ops_detail::D;
constexpr double kProbBytes = 4;  // routing probabilities travel in fp32 (--moe-router-dtype fp32 of the recipes)
// DeepEP's dispatch sends a token's expert indices (int64) and weights (fp32) with it.
constexpr double kTopkIndexBytes = 8;
}  // namespace

std::uint32_t LayerEmitter::moe_collective(const OpContext& ctx, const char* name, CollKind kind, std::uint32_t group,
                                           double bytes) {
  return rb_.sync_collective(ctx, Stream::EpComm, name, kind, group, static_cast<std::int64_t>(bytes));
}

std::uint32_t LayerEmitter::moe_exchange(const OpContext& ctx, const char* name, double bytes) {
  return rb_.sync_token_exchange(ctx, Stream::EpComm, name, g_.ep, static_cast<std::int64_t>(bytes), d_.moe.exchange,
                                 kDeepEpSms);
}

void LayerEmitter::moe_forward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const double tok = D(x.tokens);
  if (x.fs > 0) mlp_forward(ctx, kSharedExperts, x.fs / d_.t);
  // Router: gating GEMM (T_l, E, h), then softmax/sigmoid + top-k over the T_l x E scores (logits read, fp32
  // scores written and read, probabilities and routing map written).
  bf16_gemm_op(ctx, "moe.router", x.tokens, x.experts, d_.h);
  const double scores = tok * x.experts;
  const auto topk = rb_.compute(
      ctx, "moe.router_topk",
      memory_kernel(KernelKind::Elementwise, scores * (ab + 4.0 + 4.0 + kProbBytes + 1.0), scores * 8.0, d_.precision));
  // The dispatcher reads the token counts per expert back to the host before it sizes the exchange (the alltoall
  // dispatcher's splits .cpu() and stream sync, the allgather dispatcher's .cpu(), DeepEP's received counts):
  // megatron.md §0.2, §9.
  rb_.host_wait({topk});
  moe_dispatch_forward(ctx);
  experts_forward(ctx);
  moe_combine_forward(ctx);
  if (x.fs > 0) elementwise(ctx, "moe.shared_experts_add", tok * D(d_.h) * ab * 3.0);
}

void LayerEmitter::moe_backward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const double tok = D(x.tokens);
  moe_combine_backward(ctx);
  experts_backward(ctx);
  moe_dispatch_backward(ctx);
  const double scores = tok * x.experts;
  rb_.compute(
      ctx, "moe.router_topk.bwd",
      memory_kernel(KernelKind::Elementwise, scores * (kProbBytes * 2.0 + 4.0 + 1.0 + ab), scores * 6.0, d_.precision));
  bf16_gemm_op(ctx, "moe.router.dgrad", x.tokens, d_.h, x.experts);
  bf16_gemm_op(ctx, "moe.router.wgrad", x.experts, d_.h, x.tokens);
  // shared_experts: the shared experts' MLP is checkpointed (moe_layer.py), re-run before its backward unless the
  // whole layer already was (moe).
  if (x.fs > 0 && sel_.shared_experts && !sel_.moe)
    mlp_forward(OpContext{Phase::Recompute, ctx.layer, ctx.micro_batch}, kSharedExperts, x.fs / d_.t);
  if (x.fs > 0) mlp_backward(ctx, kSharedExperts, x.fs / d_.t);
  // The norm output's gradient is the sum of the routed path's, the router's and the shared experts'.
  elementwise(ctx, "moe.input_grad_add", tok * D(d_.h) * ab * (x.fs > 0 ? 4.0 : 3.0));
}

void LayerEmitter::moe_dispatch_forward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const double h = D(d_.h), tok = D(x.tokens), routed = D(x.routed), rows = D(x.rows);
  if (x.dispatcher == MoeDispatcher::AllGather) {
    const double n = static_cast<double>(x.etp) * x.ep;  // every rank of etp x ep sees all n * T_l tokens
    if (n > 1) {
      moe_collective(ctx, "etp_ep.ag.routing_map", CollKind::AllGather, g_.etp_ep, n * tok * x.experts);
      moe_collective(ctx, "etp_ep.ag.probs", CollKind::AllGather, g_.etp_ep, n * tok * x.experts * kProbBytes);
      moe_collective(ctx, "etp_ep.ag.tokens", CollKind::AllGather, g_.etp_ep, n * tok * h * ab);
    }
    elementwise(ctx, "moe.permute", rows * h * ab * 2.0);  // gather the local experts' rows
    return;
  }
  if (x.dispatcher == MoeDispatcher::Flex) {
    // DeepEP (Megatron's MoEFlexTokenDispatcher): each token once to each rank holding one of its experts, with its
    // expert indices and weights; the rank then permutes the tokens it received into its experts' rows.
    if (x.ep > 1) moe_exchange(ctx, "ep.deepep.dispatch", tok * (h * ab + x.topk * (kTopkIndexBytes + kProbBytes)));
    elementwise(ctx, "moe.permute", (D(x.received) + rows) * h * ab);
    return;
  }
  elementwise(ctx, "moe.permute", routed * h * ab * 2.0);  // [T_l, h] -> [T_l*k, h] in expert order
  if (x.ep > 1) {
    moe_collective(ctx, "ep.alltoall.dispatch", CollKind::AllToAll, g_.ep, routed * h * ab);
    moe_collective(ctx, "ep.alltoall.dispatch_probs", CollKind::AllToAll, g_.ep, routed * kProbBytes);
  }
  if (x.etp > 1) {
    moe_collective(ctx, "etp.ag.dispatch", CollKind::AllGather, g_.etp, rows * h * ab);
    moe_collective(ctx, "etp.ag.dispatch_probs", CollKind::AllGather, g_.etp, rows * kProbBytes);
  }
  if (x.local_experts > 1 && (x.ep > 1 || x.etp > 1)) elementwise(ctx, "moe.sort_chunks", rows * h * ab * 2.0);
}

void LayerEmitter::experts_forward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const std::int64_t fe_local = x.fe / x.etp;
  gemm_op(ctx, "experts.fc1", x.rows_per_expert, d_.G * fe_local, d_.h, x.local_experts);
  // weighted_bias_swiglu: activation times the routing probability of each row.
  elementwise(ctx, d_.G == 2 ? "experts.swiglu" : "experts.gelu",
              D(x.rows) * D(fe_local) * ab * (d_.G + 1.0) + D(x.rows) * kProbBytes);
  gemm_op(ctx, "experts.fc2", x.rows_per_expert, d_.h, fe_local, x.local_experts);
}

void LayerEmitter::experts_backward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const std::int64_t fe_local = x.fe / x.etp;
  const std::int64_t m = x.rows_per_expert;
  // moe_act: the activation's output (fc2's input) was discarded (experts.py, output-discarding checkpoint) and is
  // recomputed when fc2's gradient arrives; moe re-ran the whole layer already.
  if (sel_.moe_act && !sel_.moe)
    elementwise(OpContext{Phase::Recompute, ctx.layer, ctx.micro_batch}, d_.G == 2 ? "experts.swiglu" : "experts.gelu",
                D(x.rows) * D(fe_local) * ab * (d_.G + 1.0) + D(x.rows) * kProbBytes);
  gemm_op(ctx, "experts.fc2.dgrad", m, fe_local, d_.h, x.local_experts);
  gemm_op(ctx, "experts.fc2.wgrad", d_.h, fe_local, m, x.local_experts);
  elementwise(ctx, d_.G == 2 ? "experts.swiglu.bwd" : "experts.gelu.bwd",
              D(x.rows) * D(fe_local) * ab * (2.0 * d_.G + 1.0) + D(x.rows) * kProbBytes * 2.0);
  gemm_op(ctx, "experts.fc1.dgrad", m, d_.h, d_.G * fe_local, x.local_experts);
  gemm_op(ctx, "experts.fc1.wgrad", d_.G * fe_local, d_.h, m, x.local_experts);
}

void LayerEmitter::moe_combine_forward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const double h = D(d_.h), tok = D(x.tokens), routed = D(x.routed), rows = D(x.rows);
  if (x.dispatcher == MoeDispatcher::AllGather) {
    const double n = static_cast<double>(x.etp) * x.ep;
    elementwise(ctx, "moe.unpermute", rows * h * ab * 2.0 + n * tok * h * ab);  // scatter-add into [n*T_l, h]
    // The reduction runs in the routing probabilities' dtype (token_dispatcher.py: .to(self.probs.dtype)).
    if (n > 1) moe_collective(ctx, "etp_ep.rs.combine", CollKind::ReduceScatter, g_.etp_ep, n * tok * h * kProbBytes);
    return;
  }
  if (x.dispatcher == MoeDispatcher::Flex) {  // the rows summed per received token, sent back once per token
    elementwise(ctx, "moe.unpermute", (rows + D(x.received)) * h * ab);
    if (x.ep > 1) moe_exchange(ctx, "ep.deepep.combine", tok * h * ab);
    return;
  }
  if (x.local_experts > 1 && (x.ep > 1 || x.etp > 1)) elementwise(ctx, "moe.unsort_chunks", rows * h * ab * 2.0);
  // Over expert-tensor ranks the partial outputs are summed in the probabilities' dtype (megatron.md §6.2 step 10).
  if (x.etp > 1) moe_collective(ctx, "etp.rs.combine", CollKind::ReduceScatter, g_.etp, rows * h * kProbBytes);
  if (x.ep > 1) moe_collective(ctx, "ep.alltoall.combine", CollKind::AllToAll, g_.ep, routed * h * ab);
  elementwise(ctx, "moe.unpermute", routed * h * ab + tok * h * ab);  // scatter-add of the k copies
}

void LayerEmitter::moe_combine_backward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const double h = D(d_.h), tok = D(x.tokens), routed = D(x.routed), rows = D(x.rows);
  if (x.dispatcher == MoeDispatcher::AllGather) {
    const double n = static_cast<double>(x.etp) * x.ep;
    if (n > 1) moe_collective(ctx, "etp_ep.ag.combine_bwd", CollKind::AllGather, g_.etp_ep, n * tok * h * kProbBytes);
    elementwise(ctx, "moe.unpermute.bwd", rows * h * ab * 2.0);
    return;
  }
  if (x.dispatcher == MoeDispatcher::Flex) {  // combine's backward is a dispatch of the output gradient
    if (x.ep > 1) moe_exchange(ctx, "ep.deepep.combine_bwd", tok * h * ab);
    elementwise(ctx, "moe.unpermute.bwd", (D(x.received) + rows) * h * ab);
    return;
  }
  elementwise(ctx, "moe.unpermute.bwd", routed * h * ab + tok * h * ab);
  if (x.ep > 1) moe_collective(ctx, "ep.alltoall.combine_bwd", CollKind::AllToAll, g_.ep, routed * h * ab);
  if (x.etp > 1) moe_collective(ctx, "etp.ag.combine_bwd", CollKind::AllGather, g_.etp, rows * h * kProbBytes);
  if (x.local_experts > 1 && (x.ep > 1 || x.etp > 1)) elementwise(ctx, "moe.unsort_chunks.bwd", rows * h * ab * 2.0);
}

void LayerEmitter::moe_dispatch_backward(const OpContext& ctx) {
  const MoeDims& x = d_.moe;
  const double ab = activation_bytes(d_.precision);
  const double h = D(d_.h), tok = D(x.tokens), routed = D(x.routed), rows = D(x.rows);
  if (x.dispatcher == MoeDispatcher::AllGather) {
    const double n = static_cast<double>(x.etp) * x.ep;
    elementwise(ctx, "moe.permute.bwd", rows * h * ab * 2.0 + n * tok * h * ab);  // scatter-add into [n*T_l, h]
    if (n > 1) {
      moe_collective(ctx, "etp_ep.rs.tokens_bwd", CollKind::ReduceScatter, g_.etp_ep, n * tok * h * ab);
      moe_collective(ctx, "etp_ep.rs.probs_bwd", CollKind::ReduceScatter, g_.etp_ep, n * tok * x.experts * kProbBytes);
    }
    return;
  }
  if (x.dispatcher == MoeDispatcher::Flex) {  // dispatch's backward is a combine of the token and weight gradients
    elementwise(ctx, "moe.permute.bwd", (rows + D(x.received)) * h * ab);
    if (x.ep > 1) moe_exchange(ctx, "ep.deepep.dispatch_bwd", tok * (h * ab + x.topk * kProbBytes));
    return;
  }
  if (x.local_experts > 1 && (x.ep > 1 || x.etp > 1)) elementwise(ctx, "moe.sort_chunks.bwd", rows * h * ab * 2.0);
  if (x.etp > 1) {
    moe_collective(ctx, "etp.rs.dispatch_bwd", CollKind::ReduceScatter, g_.etp, rows * h * ab);
    moe_collective(ctx, "etp.rs.dispatch_probs_bwd", CollKind::ReduceScatter, g_.etp, rows * kProbBytes);
  }
  if (x.ep > 1) {
    moe_collective(ctx, "ep.alltoall.dispatch_bwd", CollKind::AllToAll, g_.ep, routed * h * ab);
    moe_collective(ctx, "ep.alltoall.dispatch_probs_bwd", CollKind::AllToAll, g_.ep, routed * kProbBytes);
  }
  elementwise(ctx, "moe.permute.bwd", routed * h * ab + tok * h * ab);  // scatter-add of the k copies' grads
}

}  // namespace trainsim
