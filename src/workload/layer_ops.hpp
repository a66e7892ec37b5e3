#pragma once
// The kernels and TP/CP collectives of one transformer layer, the embedding and the LM head with
// vocab-parallel cross-entropy, for one micro-batch on one rank, in the order Megatron-Core with
// Transformer Engine issues them (transformer_layer.py::TransformerLayer, gpt_model.py::GPTModel, TE
// module/linear.py and layernorm_linear.py with userbuffers). Multi-latent attention (layer_ops_mla.cpp) replaces
// the QKV path; an MoE block (layer_ops_moe.cpp, moe_layer.py::MoELayer) replaces
// the MLP of MoE layers.
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "workload/kernels_factory.hpp"
#include "workload/layer_dims.hpp"
#include "workload/program_builder.hpp"

namespace trainsim {

namespace layer_ops_detail {
// int64 -> double for the FLOP and byte arithmetic of the layer_ops*.cpp emitters.
inline double D(std::int64_t v) { return static_cast<double>(v); }
}  // namespace layer_ops_detail

struct LayerGroups {
  std::uint32_t tp = 0;      // tensor-parallel communicator (unused when t == 1)
  std::uint32_t cp = 0;      // context-parallel communicator (unused when c == 1)
  std::uint32_t ep = 0;      // expert-parallel communicator (MoE, ep > 1)
  std::uint32_t etp = 0;     // expert-tensor-parallel communicator (MoE, etp > 1)
  std::uint32_t etp_ep = 0;  // etp x ep: the allgather dispatcher's communicator
};

class LayerEmitter {
 public:
  LayerEmitter(RankBuilder& rb, const LayerDims& d, LayerGroups groups, bool tp_comm_overlap)
      : rb_(rb), d_(d), g_(groups), tp_overlap_(tp_comm_overlap && d.sp) {}

  // `phase` is Forward, or Recompute for the forward re-run of full recomputation.
  void forward(int layer, int mb, Phase phase);
  // With selective recompute the attention forward is re-run right before its backward; the other modules of
  // set_selective_recompute are re-run right before theirs.
  void backward(int layer, int mb, bool recompute_attention);
  // Selective recompute's modules other than core_attn (Megatron's --recompute-modules; transformer_layer.py,
  // multi_latent_attention.py, moe/moe_layer.py, moe/experts.py). Default: none.
  void set_selective_recompute(const RecomputeModules& modules) { sel_ = modules; }

  // One MTP block (multi_token_prediction.py MultiTokenPredictionLayer) whose transformer layer has global id
  // `layer` (>= num_layers): embedding of the shifted tokens, enorm/hnorm, eh_proj, the layer, its final norm,
  // and its output-layer pass with the cross-entropy of its loss. Backward in reverse.
  void mtp_forward(int layer, int mb);
  void mtp_backward(int layer, int mb, bool recompute_attention);

  void embedding_forward(int mb);
  void embedding_backward(int mb);
  void lm_head_forward(int mb);  // final norm, LM head GEMM, cross-entropy
  void lm_head_backward(int mb);

  // Called at the start of each parameter-owning module's ops of a dense layer: forward (and recompute) in the
  // order input_norm, qkv (MLA: attention), proj, pre_mlp_norm, fc1, fc2; backward fc2, fc1, pre_mlp_norm, proj,
  // qkv / attention, input_norm. DeepSpeed ZeRO-3 waits for the module's parameter gather there and ZeRO-2/3 take
  // the previous module's gradients (deepspeed_zero.cpp). No hook: nothing changes.
  using ModuleHook = std::function<void(int layer, const char* module, bool backward)>;
  void set_module_hook(ModuleHook hook) { hook_ = std::move(hook); }

 private:
  void module_start(const OpContext& ctx, const char* module, bool backward) {
    if (hook_) hook_(ctx.layer, module, backward);
  }
  // Op names of one TP-split MLP: the dense layer's, or the MoE block's shared experts.
  struct MlpNames {
    const char *fc1, *act, *fc2, *ag_fc1_input, *rs_fc2, *ar_fc2;  // forward
    const char *ag_fc2_dy, *fc2_dgrad, *fc2_wgrad, *act_bwd, *fc1_dgrad, *rs_fc1_dgrad, *ar_fc1_dgrad,
        *fc1_wgrad;  // backward
  };
  static const MlpNames kDenseMlp, kSharedExperts;

  // The output layer (GEMM over the vocabulary shard) and the vocab-parallel cross-entropy, with the main
  // model's op names or an MTP block's ("mtp." prefix); the final norm before it is the caller's.
  void output_head_forward(const OpContext& ctx, bool mtp);
  void output_head_backward(const OpContext& ctx, bool mtp);
  void norm(const OpContext& ctx, const char* name, bool backward);
  void norm_rows(const OpContext& ctx, const char* name, bool backward, double rows, double width);
  void elementwise(const OpContext& ctx, const char* name, double bytes, int launches = 1);
  // Eager PyTorch (LayerDims::eager, layer_ops_eager.cpp): a norm as PyTorch runs it, the HBM bytes per element
  // of the MLP activation and of RoPE (either direction), and the attention's layout copies around its kernel:
  // the output's (or, backward, its gradient's) and the q, k, v gradients'.
  void eager_norm(const OpContext& ctx, const char* name, bool backward, double rows, double width);
  double activation_bytes_per_element(bool backward) const;
  int activation_launches(bool backward) const;  // kernels the host launches for the MLP activation
  double rope_bytes_per_element() const;
  int rope_launches() const;
  void eager_output_layout(const OpContext& ctx, bool backward);
  void eager_qkv_grad_layout(const OpContext& ctx);
  void attention_forward(const OpContext& ctx);
  void attention_backward(const OpContext& ctx);
  // Head dim of the fused attention kernel and K+V elements per token per rank (for the CP exchange):
  // plain attention uses d and 2*g*d/t; MLA's keys are nope+rope wide and values v wide (layer_ops_mla.cpp).
  std::int64_t attention_head_dim() const;
  double kv_elements_per_token() const;
  KernelKind softmax_kind() const;  // fused (Megatron) or unfused (PyTorch) attention softmax
  // TP collective of one activation tensor; synchronous unless TP comm overlap hides it behind
  // the GEMM issued right after (returned op must then be waited for after that GEMM).
  // `sms` >= 0: a userbuffers collective holding that many SMs (CollectiveDesc::sms).
  std::uint32_t tp_collective(const OpContext& ctx, const char* name, CollKind kind, bool sync, int sms = -1);
  // SMs Transformer Engine's userbuffers hold per overlap method, its initialize_ub defaults
  // (transformer_engine/pytorch/module/base.py::initialize_ub): ring exchange 1 SM (copies go through the copy
  // engines), pipelined and bulk overlap 16. The all-gathers before a GEMM are ring exchanges, the
  // forward reduce-scatters pipelined, the backward input all-gathers and dgrad reductions bulk.
  static constexpr int kUbRingExchangeSms = 1;
  static constexpr int kUbPipelineSms = 16;
  static constexpr int kUbBulkSms = 16;
  int ub_bulk_sms() const { return tp_overlap_ ? kUbBulkSms : -1; }
  // Ring attention over the CP group (layer_ops_cp.cpp): c tiles with the KV (and dKV) exchanged
  // between them, replacing the single attention kernel when c > 1.
  void ring_attention_forward(const OpContext& ctx);
  void ring_attention_backward(const OpContext& ctx);
  double cp_kv_bytes() const;
  // PyTorch's context_parallel (torch.distributed.tensor.experimental, as torchtitan runs it): the KV all-gathered,
  // outputs merged and gradients accumulated in fp32, dK/dV sent around the ring in fp32 (LayerDims::torch_cp).
  void torch_ring_attention_forward(const OpContext& ctx);
  void torch_ring_attention_backward(const OpContext& ctx);
  struct TorchCpShape {
    std::int64_t bh = 0, s_c = 0, dh = 0;  // query heads x batch, the local chunk, the head dim
    double q_elems = 0, kv_elems = 0;      // the local Q (and output); K and V expanded to every query head
  };
  TorchCpShape torch_cp_shape() const;
  // Packs K and V and all-gathers them over the CP group (waited for at once when compiled); the gather's op.
  std::uint32_t torch_cp_gather_kv(const OpContext& ctx, const TorchCpShape& t);
  // A (T x n x h) GEMM whose input is sequence-sharded under SP: the TP all-gather, then the GEMM.
  // Column-parallel forwards (QKV, fc1) and row-parallel dgrads (proj, fc2) both have this shape.
  void gathered_gemm(const OpContext& ctx, const char* name, std::int64_t n, const char* ag_name);
  // Row-parallel linear (proj, fc2): GEMM then its TP reduction.
  void row_parallel_forward(const OpContext& ctx, const char* name, std::int64_t k, const char* rs_name,
                            const char* ar_name);
  // `input_shards` > 1: Transformer Engine all-gathered the left operand over that many sequence shards, so its
  // quantization runs on one shard (layer_ops_fp8.cpp).
  std::uint32_t gemm_op(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
                        std::int64_t batch = 1, int input_shards = 1);
  // A GEMM of a module Megatron builds outside Transformer Engine (output layers, MoE router): BF16 under
  // an FP8 or NVFP4 recipe, no quantization kernels.
  std::uint32_t bf16_gemm_op(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k);
  // The dtype of unfused attention's batched GEMMs: BF16 under FP8 and NVFP4 recipes (TE's fp8_dpa is off by
  // default, and Megatron's local attention runs torch.baddbmm on BF16 tensors).
  Precision attention_dtype() const { return quantized_gemms(d_.precision) ? Precision::BF16 : d_.precision; }
  // The quantization kernels Transformer Engine runs before an FP8 GEMM (layer_ops_fp8.cpp).
  void fp8_quantize(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
                    std::int64_t batch, int input_shards);
  // The same under the NVFP4 recipe (layer_ops_fp4.cpp): an amax pass and a quantize kernel per operand.
  void nvfp4_quantize(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
                      std::int64_t batch);
  // Emits `kernels` as ops named stem + `what` ("" or "_weight") + "." + `gemm`.
  void emit_quantization(const OpContext& ctx, const std::vector<StemmedKernel>& kernels, const char* what,
                         const char* gemm);
  // Whether a GEMM's forward call in `ctx` quantizes its weight: Megatron passes is_first_microbatch, so Transformer
  // Engine does it once per step; an eager model calling te.Linear itself (llm-foundry's fc_type: te) passes nothing
  // and every forward call does it again, a recomputed forward included.
  bool quantizes_weight(const OpContext& ctx) const {
    return d_.eager ? ctx.phase == Phase::Forward || ctx.phase == Phase::Recompute
                    : ctx.micro_batch == 0 && ctx.phase == Phase::Forward;
  }
  // Bytes a tensor-parallel all-gather moves for `bf16_bytes` of a Transformer Engine linear's input or dY in the
  // layer of `ctx`: under FP8 or NVFP4 TE quantizes the local shard and gathers the quantized copy
  // (distributed.py gather_along_first_dim with the quantizer; its userbuffers use FP8 buffers for every all-gather
  // overlap, base.py layers_all_gather_overlap), 1 B per element (MXFP8 1 + 1/32, NVFP4 0.5625). BF16 layers,
  // modules Megatron builds outside TE and PyTorch's DTensor path gather the training dtype.
  double tp_gather_bytes(const OpContext& ctx, double bf16_bytes) const;

  // What torchtitan's per-op checkpointing (RecomputeModules::torchtitan_op) re-runs at the start of a dense block's
  // backward.
  void torchtitan_op_recompute(const OpContext& redo);

  // The MLP (mlp.py::MLP forward and backward) with F/t = `ffn_local` (norms and bias-dropout-adds excluded).
  void mlp_forward(const OpContext& ctx, const MlpNames& n, std::int64_t ffn_local);
  void mlp_backward(const OpContext& ctx, const MlpNames& n, std::int64_t ffn_local);

  // Multi-latent attention's projections (layer_ops_mla.cpp): from the input norm to the core-attention input,
  // and the reverse from the core-attention gradient to the input-norm gradient.
  void mla_projections_forward(const OpContext& ctx);
  void mla_projections_backward(const OpContext& ctx);
  // Selective recompute of mla_up_proj: the q/kv up-projections (with their fused norms and SP gathers) and the
  // RoPE / concat that produce the core-attention inputs.
  void mla_up_proj_recompute(const OpContext& ctx);
  // A column-parallel up-projection whose LayerNorm is fused (TELayerNormColumnParallelLinear) over a latent of
  // width `latent` held on the local sequence shard: norm, SP all-gather of the normed latent, GEMM. The backward
  // ends with the fused norm's backward unless `norm_name` is null (a plain column-parallel projection).
  void latent_up_forward(const OpContext& ctx, const char* norm_name, const char* ag_name, const char* gemm_name,
                         std::int64_t latent, std::int64_t out);
  void latent_up_backward(const OpContext& ctx, const char* ag_name, const char* dgrad_name, const char* red_name,
                          const char* wgrad_name, const char* norm_name, std::int64_t latent, std::int64_t out);
  std::uint32_t tp_collective_bytes(const OpContext& ctx, const char* name, CollKind kind, bool sync, double bytes,
                                    int sms = -1);
  // The TP collectives of a column-parallel linear's backward (QKV, fc1, MLA's up-projections, the output layer,
  // MTP's eh_proj): the SP re-gather of its saved input and the reduction of its dgrad (reduce-scatter with SP,
  // all-reduce without), of `bytes` each, userbuffers holding `sms` when >= 0.
  struct ColumnBackwardComm {
    const char* gather;
    const char* reduce_sp;
    const char* reduce_ar;
    double bytes;
    int sms = -1;
    bool gather_done_before_reduce = false;  // the output layer waits for its gather before issuing the reduction
  };
  // One GEMM of a column-parallel backward: its op name and M x N x K; `bf16` for the modules Megatron builds
  // outside Transformer Engine (bf16_gemm_op), else gemm_op.
  struct GemmCall {
    const char* name;
    std::int64_t m, n, k;
    bool bf16 = false;
  };
  void gemm_call(const OpContext& ctx, const GemmCall& g);
  // The dgrad and wgrad GEMMs with their collectives. Megatron: the gather runs beside the dgrad GEMM and the
  // reduction beside the wgrad GEMM (on userbuffers with TP comm overlap). DTensor (LayerDims::dtensor_tp): gather,
  // dgrad, wgrad, reduction, each collective awaited. Async TP does not change that: Inductor's micro-pipeline pass
  // (torch/_inductor/fx_passes/micro_pipeline_tp.py) fuses an all-gather only into the matmuls that take its result
  // as their left operand, and a reduce-scatter only when a matmul's output is its input; the re-gathered input is
  // the wgrad's right operand, and torchtitan's separate wq/wk/wv and w1/w3 linears add their dgrads before the
  // reduce-scatter.
  void column_parallel_backward(const OpContext& ctx, const ColumnBackwardComm& comm, const GemmCall& dgrad,
                                const GemmCall& wgrad);
  // RoPE on the rank's q and k (forward, its recompute, or `backward`), and the MLP activation over `ffn_local`
  // columns: one element-wise op each, as PyTorch or the fused kernels run them.
  void rope(const OpContext& ctx, const char* name);
  void mlp_activation(const OpContext& ctx, const char* name, std::int64_t ffn_local, bool backward);

  // The MoE block (layer_ops_moe.cpp, moe_layer.py) in place of the dense MLP block.
  void moe_forward(const OpContext& ctx);
  void moe_backward(const OpContext& ctx);
  void moe_dispatch_forward(const OpContext& ctx);
  void moe_combine_forward(const OpContext& ctx);
  void moe_combine_backward(const OpContext& ctx);
  void moe_dispatch_backward(const OpContext& ctx);
  void experts_forward(const OpContext& ctx);
  void experts_backward(const OpContext& ctx);
  std::uint32_t moe_collective(const OpContext& ctx, const char* name, CollKind kind, std::uint32_t group,
                               double bytes);
  // A DeepEP dispatch or combine over the expert-parallel group (MoeDims::exchange), `bytes` one copy of each token.
  std::uint32_t moe_exchange(const OpContext& ctx, const char* name, double bytes);

  RankBuilder& rb_;
  const LayerDims& d_;
  LayerGroups g_;
  bool tp_overlap_;
  RecomputeModules sel_{false, false, false, false, false, false, false, false};
  ModuleHook hook_;
};

}  // namespace trainsim
