// Ring attention: Transformer Engine's context-parallel attention with KV exchanged point-to-point
// (cp_comm_type "p2p", TE pytorch/attention/dot_product_attention/context_parallel.py,
// AttnFuncWithCPAndKVP2P). Each CP rank holds two of the 2c
// sequence chunks (zig-zag), so every one of the c attention steps costs the same: the diagonal step
// is local Q x local KV under the causal mask, the others are full local Q x half of the received KV
// (or half of Q x all of it, the same FLOPs). The KV for the next step travels to the ring neighbour
// while the current step's kernel runs; the next step waits for it, so only the part of a transfer
// longer than its tile is exposed.
#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

namespace {
using layer_ops_detail::D;
}  // namespace

double LayerEmitter::cp_kv_bytes() const {
  // K and V of the local chunks, one micro-batch: 2 * S_c * b * g/t * d elements (AttnFuncWithCPAndKVP2P).
  return D(d_.T) * kv_elements_per_token() * activation_bytes(d_.precision);
}

void LayerEmitter::ring_attention_forward(const OpContext& ctx) {
  const std::int64_t bh = d_.b * (d_.a / d_.t);
  const std::int64_t s_c = d_.s / d_.c;
  const std::int64_t dh = attention_head_dim();
  const auto kv = static_cast<std::int64_t>(cp_kv_bytes());
  // The correction of the running output by the step's softmax statistics: reads the partial and the
  // step's output, writes the partial (one small kernel per step after the first).
  const double out_bytes = D(bh) * D(s_c) * D(d_.mla.on ? d_.mla.v : d_.d) * activation_bytes(d_.precision);
  bool pending = false;
  std::uint32_t recv = 0;
  for (int i = 0; i < d_.c; ++i) {
    if (pending) rb_.wait(recv);  // this step's KV has arrived
    pending = i < d_.c - 1;
    if (pending) recv = rb_.collective(ctx, Stream::CpComm, "cp.kv_send_recv", CollKind::SendRecv, g_.cp, kv);
    const KernelDesc tile = i == 0 ? flash_attention_fwd(bh, s_c, s_c, dh, true, d_.precision)
                                   : flash_attention_fwd(bh, s_c, s_c / 2, dh, false, d_.precision);
    rb_.compute(ctx, "core_attn.fwd", tile);
    if (i > 0) elementwise(ctx, "core_attn.cp_correction", out_bytes * 3.0);
  }
}

void LayerEmitter::ring_attention_backward(const OpContext& ctx) {
  const std::int64_t bh = d_.b * (d_.a / d_.t);
  const std::int64_t s_c = d_.s / d_.c;
  const std::int64_t dh = attention_head_dim();
  const double kv = cp_kv_bytes();
  // dQ accumulates locally and dK/dV into the travelling buffer after every step.
  const double q_bytes = D(bh) * D(s_c) * D(dh) * activation_bytes(d_.precision);
  std::uint32_t recv = 0;
  for (int i = 0; i < d_.c; ++i) {
    if (i > 0) rb_.wait(recv);
    // Step 0 sends the KV only, the middle steps KV and the partial dKV, the last the dKV only: the
    // dKV of the local block comes home while the diagonal tile runs.
    const double bytes = (i == 0 || i == d_.c - 1) ? kv : 2.0 * kv;
    recv = rb_.collective(ctx, Stream::CpComm, i == 0 ? "cp.kv_send_recv" : "cp.kv_dkv_send_recv", CollKind::SendRecv,
                          g_.cp, static_cast<std::int64_t>(bytes));
    // Reverse tile order: the diagonal (causal) tile is the last step.
    const KernelDesc tile = i == d_.c - 1 ? flash_attention_bwd(bh, s_c, s_c, dh, true, d_.precision)
                                          : flash_attention_bwd(bh, s_c, s_c / 2, dh, false, d_.precision);
    rb_.compute(ctx, "core_attn.bwd", tile);
    elementwise(ctx, "core_attn.cp_grad_accum", (q_bytes + kv) * 3.0);
  }
  rb_.wait(recv);  // the local block's dKV, back from its trip around the ring
}

}  // namespace trainsim
