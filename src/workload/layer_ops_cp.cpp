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

// PyTorch's context_parallel (torch/distributed/tensor/experimental/_attention.py, as torchtitan runs it: rotate
// method "allgather", load balancing on; its defaults since Dec 2024, torchtitan's context_parallel_rotate_method):
//   * torchtitan's Llama expands K and V to every query head before SDPA (repeat_kv), so the ring moves a/t heads of
//     K and V, not g/t (GQA's 4x for Llama 3 8B);
//   * forward: K and V made contiguous and concatenated, one all-gather of the c blocks over the CP group, then c
//     flash-attention tiles as in the zig-zag ring above (step 0 causal, the others half tiles); each step's output
//     and log-sum-exp are cast to fp32 and merged into the running fp32 output (_SDPAMerger, convert_to_f32), which
//     is cast back to the training dtype at the end;
//   * backward: fp32 dQ and dK/dV buffers, the KV all-gathered again, c flash-attention backward tiles (the causal
//     one first), each step's dQ accumulated in fp32 and its dK/dV added to the travelling fp32 dK/dV, which is sent
//     to the next CP rank every step (an all-to-all permute); the last arrival is waited for after the last tile;
//     the fp32 gradients are cast back at the end.
// torch.compile (training.fusion fused) traces the ring: inductor fuses each step's element-wise work into one
// kernel, and the functional collectives are waited for where they are issued (no compute/communication reordering
// by default), so each transfer runs alone; eager PyTorch overlaps the all-gather with the causal tile and each
// dK/dV hop with the next tile, and runs each element-wise op as its own kernel.
namespace {
// Bytes per output element of one step's merge: compiled, read the fp32 running output, the step's bf16 output and
// write the fp32 output (the log-sum-exp terms are per row, negligible); eager, the cast and the five ops of the
// merge (sub, sigmoid, mul, sub, and the lse update's logsigmoid) each pass over fp32 data.
constexpr double kMergeBytesCompiled = 4.0 + 2.0 + 4.0;
constexpr double kMergeBytesEager = 6.0 + 5.0 * 8.0;
constexpr int kMergeLaunchesEager = 6;
// Bytes per element of a gradient accumulated in fp32: read the step's bf16 gradient, read and write the fp32 sum.
constexpr double kFp32AccumulateBytes = 2.0 + 4.0 + 4.0;
// An fp32 <-> bf16 cast: 4 + 2 bytes per element.
constexpr double kCastBytes = 6.0;
}  // namespace

LayerEmitter::TorchCpShape LayerEmitter::torch_cp_shape() const {
  TorchCpShape t;
  t.bh = d_.b * (d_.a / d_.t);
  t.s_c = d_.s / d_.c;
  t.dh = attention_head_dim();
  t.q_elems = D(t.bh) * D(t.s_c) * D(t.dh);
  // K and V of the local chunks after repeat_kv (every query head).
  t.kv_elems = d_.mla.on ? cp_kv_bytes() / activation_bytes(d_.precision) : 2.0 * t.q_elems;
  return t;
}

std::uint32_t LayerEmitter::torch_cp_gather_kv(const OpContext& ctx, const TorchCpShape& t) {
  const double kv_local = t.kv_elems * activation_bytes(d_.precision);
  elementwise(ctx, "core_attn.cp_kv_pack", 2.0 * kv_local);  // contiguous + cat: read and write
  const std::uint32_t gathered = rb_.collective(ctx, Stream::CpComm, "cp.kv_allgather", CollKind::AllGather, g_.cp,
                                                static_cast<std::int64_t>(D(d_.c) * kv_local));
  if (!d_.eager) rb_.wait(gathered);  // compiled: waited where it is issued
  return gathered;
}

void LayerEmitter::torch_ring_attention_forward(const OpContext& ctx) {
  const TorchCpShape t = torch_cp_shape();
  const bool compiled = !d_.eager;
  const std::uint32_t gathered = torch_cp_gather_kv(ctx, t);
  const double merge = compiled ? kMergeBytesCompiled : kMergeBytesEager;
  const int merge_launches = compiled ? 1 : kMergeLaunchesEager;
  for (int i = 0; i < d_.c; ++i) {
    if (i == 1 && !compiled) rb_.wait(gathered);  // the causal tile ran beside the gather
    const KernelDesc tile = i == 0 ? flash_attention_fwd(t.bh, t.s_c, t.s_c, t.dh, true, d_.precision)
                                   : flash_attention_fwd(t.bh, t.s_c, t.s_c / 2, t.dh, false, d_.precision);
    rb_.compute(ctx, "core_attn.fwd", tile);
    if (i == 0)
      elementwise(ctx, "core_attn.cp_merge", t.q_elems * kCastBytes);
    else
      elementwise(ctx, "core_attn.cp_merge", t.q_elems * merge, merge_launches);
  }
  elementwise(ctx, "core_attn.cp_out_cast", t.q_elems * kCastBytes);
}

void LayerEmitter::torch_ring_attention_backward(const OpContext& ctx) {
  const TorchCpShape t = torch_cp_shape();
  const bool compiled = !d_.eager;
  const double q_elems = t.q_elems, kv_elems = t.kv_elems;
  // The fp32 gradient buffers, zeroed.
  rb_.compute(ctx, "core_attn.cp_grad_zero",
              memory_kernel(KernelKind::Memset, (q_elems + kv_elems) * 4.0, 0, d_.precision));
  const std::uint32_t gathered = torch_cp_gather_kv(ctx, t);
  std::uint32_t in_flight = 0;
  for (int i = 0; i < d_.c; ++i) {
    if (i == 1 && !compiled) rb_.wait(gathered);
    const KernelDesc tile = i == 0 ? flash_attention_bwd(t.bh, t.s_c, t.s_c, t.dh, true, d_.precision)
                                   : flash_attention_bwd(t.bh, t.s_c, t.s_c / 2, t.dh, false, d_.precision);
    rb_.compute(ctx, "core_attn.bwd", tile);
    if (i > 0 && !compiled) rb_.wait(in_flight);  // the previous hop, hidden behind this tile
    elementwise(ctx, "core_attn.cp_grad_accum", (q_elems + kv_elems) * kFp32AccumulateBytes, compiled ? 1 : 2);
    elementwise(ctx, "core_attn.cp_dkv_pack", kv_elems * 8.0);  // cat into the send buffer, fp32
    in_flight = rb_.collective(ctx, Stream::CpComm, "cp.dkv_send_recv", CollKind::SendRecv, g_.cp,
                               static_cast<std::int64_t>(kv_elems * 4.0));
    if (compiled) rb_.wait(in_flight);
  }
  if (!compiled) rb_.wait(in_flight);  // the last hop has no tile to hide behind
  elementwise(ctx, "core_attn.cp_grad_cast", (q_elems + kv_elems) * kCastBytes);
}

}  // namespace trainsim
