#pragma once
// Per-rank, per-micro-batch shapes of one transformer layer (Megatron-Core transformer_layer.py, attention.py, mlp.py):
// T = s/c * b token rows entering the TP-sharded GEMMs, T_sp = T/t rows of the residual stream with SP;
// multi-latent attention dimensions and the MoE block's shapes (moe_layer.py) when the model has them.
#include <cstdint>
#include <vector>

#include "core/collective_kind.hpp"
#include "scenario/scenario.hpp"

namespace trainsim {

// Multi-head latent attention (DeepSeek; Megatron MLASelfAttention) on one rank.
struct MlaDims {
  bool on = false;
  std::int64_t q_lora = 0;  // 0: queries projected straight from h (no q LoRA)
  std::int64_t kv_lora = 0;
  std::int64_t nope = 0, rope = 0, v = 0;  // per-head dims: q/k without and with RoPE, value
  std::int64_t q_local = 0;                // a/t * (nope + rope): query up-projection output per rank
  std::int64_t kv_local = 0;               // a/t * (nope + v): key/value up-projection output per rank
  std::int64_t v_local = 0;                // a/t * v: attention output / projection input per rank
};

// The MoE block on one rank (balanced routing: every expert receives T_l*k/E of each rank's tokens).
struct MoeDims {
  bool on = false;
  int experts = 0, topk = 0;
  int ep = 1, etp = 1;    // expert-parallel and expert-tensor-parallel sizes
  int local_experts = 0;  // E / ep
  std::int64_t fe = 0;    // routed expert FFN width
  std::int64_t fs = 0;    // shared experts' width: shared_experts x F_e (0 = none)
  MoeDispatcher dispatcher = MoeDispatcher::AllToAll;
  std::int64_t tokens = 0;           // T_l: tokens of this rank entering the block (T/t with SP)
  std::int64_t routed = 0;           // T_l * k (x capacity factor): rows this rank sends to experts
  std::int64_t rows = 0;             // R = t_e * routed: rows its local experts process (after the expert-TP gather)
  std::int64_t rows_per_expert = 0;  // R / E_l, the M of each grouped-GEMM member
  // flex (DeepEP): each token's copies over the network and over NVLink, and the distinct tokens a rank receives
  // (T_l x the expert-parallel ranks a token goes to), which it permutes into its experts' rows.
  TokenExchange exchange;
  std::int64_t received = 0;
};

struct LayerDims {
  std::int64_t s = 0, b = 0, h = 0, d = 0, ffn = 0, vocab_padded = 0;
  int a = 0, g = 0, t = 1, c = 1;
  int G = 1;  // 2 for a gated MLP
  bool sp = false;
  bool flash = true;
  // model.sliding_window (0 = none): fused attention skips the keys outside it; unfused attention computes every
  // score and masks them, so it costs as much as without.
  std::int64_t window = 0;
  // Unfused attention only: Megatron's fused scale-mask-softmax CUDA kernel runs (one memory-bound
  // pass) instead of PyTorch's separate mask, scale and fp32 softmax (layer_dims.cpp says when).
  bool fused_softmax = false;
  // The model runs as eager PyTorch, one kernel per PyTorch op (training.fusion): PyTorch's own layer_norm
  // kernel, RMSNorm, SwiGLU and RoPE as chains of elementwise ops, and the attention's layout copies
  // (layer_ops_eager.cpp). Otherwise the fused kernels of Megatron / Transformer Engine or torch.compile.
  bool eager = false;
  // Tensor parallelism as PyTorch's DTensor runs it (parallelism.framework fsdp: torchtitan's ColwiseParallel,
  // RowwiseParallel and SequenceParallel plans): autograd runs a column-parallel linear's dgrad and wgrad GEMMs
  // and only then the backward of the input's redistribute, and the next op awaits each collective. So neither of
  // Megatron's backward overlaps happens (the SP re-gather behind the dgrad GEMM, the dgrad's reduction behind the
  // wgrad GEMM), with or without async TP (layer_ops.cpp column_parallel_backward).
  bool dtensor_tp = false;
  // Context parallelism as PyTorch's context_parallel runs it (parallelism.framework fsdp: torchtitan), not
  // Transformer Engine's ring (layer_ops_cp.cpp has both).
  bool torch_cp = false;
  bool rope = false;
  bool bias = true;
  bool layernorm = true;
  Precision precision = Precision::BF16;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // under precision fp8 (layer_ops_fp8.cpp)
  // Under fp8 with training.fp8_param_gather: the linear weights are FP8 parameters (their FP8 data comes from the
  // optimizer step and the all-gather, not from a cast in forward).
  bool fp8_params = false;
  // The GPU's FP8 GEMMs take only the TN layout, so an FP8 operand read transposed needs a physical transpose
  // (GpuSpec::fp8_gemms_take_any_layout).
  bool fp8_tn_only = true;
  // By global layer: 1 where the linears keep BF16 under a quantized recipe (TrainingSpec::keeps_bf16_linears).
  std::vector<char> bf16_linear_layer;
  std::int64_t T = 0;           // s/c * b
  std::int64_t rows = 0;        // residual-stream rows on this rank: T/t with SP, T without
  std::int64_t qkv_out = 0;     // (a + 2g) * d / t
  std::int64_t attn_local = 0;  // a * d / t
  std::int64_t ffn_local = 0;   // F / t
  // Bytes of one activation tensor [T, h] in the activation dtype: the unit of TP collectives.
  std::int64_t act_bytes = 0;
  MlaDims mla;
  MoeDims moe;
  std::vector<char> moe_layer;  // by global layer: 1 where the MLP is an MoE block

  static LayerDims of(const Scenario& s);

  bool keeps_bf16_linears(int layer) const {
    return layer >= 0 && static_cast<std::size_t>(layer) < bf16_linear_layer.size() &&
           bf16_linear_layer[static_cast<std::size_t>(layer)] != 0;
  }

  bool is_moe(int layer) const {
    return layer >= 0 && static_cast<std::size_t>(layer) < moe_layer.size() &&
           moe_layer[static_cast<std::size_t>(layer)] != 0;
  }

  // Parameters per TP rank, from model/layer_shapes (the same counts the FLOP and memory formulas use):
  // one dense layer, the word + position embedding, the LM head and the final norm.
  double layer_params = 0;
  double embedding_params = 0;
  double lm_head_params = 0;
  double final_norm_params = 0;
  // Parameters of one layer replicated across TP (norms, row-parallel biases): Megatron flags them
  // sequence_parallel and all-reduces their grads over TP when SP is on.
  double layer_sp_params = 0;

  // Per global layer (MoE models mix dense and MoE layers): parameters in the dense DDP buffer on one
  // rank (TP-sharded / t + replicated), routed-expert parameters on one rank (/ (ep * etp)), and the
  // TP-replicated ones (norms, router, MLA down-projections) whose grads the SP all-reduce covers.
  std::vector<double> dense_params_by_layer, expert_params_by_layer, sp_params_by_layer;
  // Of those, per global layer, the linear weights Transformer Engine quantizes under an FP8 or NVFP4 recipe
  // (model/layer_shapes layer_linear_weights; 0 for layers kept in BF16 and under unquantized precisions).
  std::vector<double> dense_quantized_by_layer, expert_quantized_by_layer;
};

}  // namespace trainsim
