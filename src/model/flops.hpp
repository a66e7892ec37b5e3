#pragma once
// FLOPs of one training iteration, counted as Megatron-LM does
// (Megatron-LM megatron/training/training.py::num_floating_point_operations, transformer_flops).
// One source of truth: reports, MFU/HFU and tests all call these.
#include <cstdint>

#include "model/model_spec.hpp"

namespace trainsim {

enum class RecomputeGranularity { None, Selective, Full };

// Megatron's --recompute-modules for selective recompute (transformer_config.py recompute_modules; default
// ["core_attn"]): which parts of each layer are re-run in backward instead of keeping their activations.
struct RecomputeModules {
  bool core_attn = true;        // core attention (checkpointed: its inputs kept, re-run before its backward)
  bool mlp = false;             // the dense MLP of non-MoE layers (checkpointed)
  bool moe_act = false;         // the routed experts' activation (output discarded)
  bool moe = false;             // the whole MoE layer: router, dispatch, experts, combine, shared experts
  bool shared_experts = false;  // the shared experts' MLP (checkpointed)
  bool layernorm = false;       // separate (not TE-fused) input / pre-MLP norms (output discarded)
  bool mla_up_proj = false;     // MLA q/kv up-projections and RoPE (output discarded)
  // PyTorch's selective activation checkpointing as torchtitan applies it (selective_ac_option "op",
  // torchtitan/models/llama3/infra/parallelize.py _apply_ac_to_transformer_block): per block it saves the outputs of
  // SDPA, of the reduce-scatters and of every odd-numbered matmul (wq, wv, w1, w2) and re-runs the rest at the start
  // of the block's backward: the norms, RoPE, the activation and the even-numbered matmuls wk, wo and w3 (fc2 in an
  // ungated MLP). Not attention. Dense blocks of framework fsdp only.
  bool torchtitan_op = false;
  bool operator==(const RecomputeModules&) const = default;
};

// Model FLOPs (MFU convention): forward + backward, no recomputation, causal attention halved,
// GQA through the KV projection, gated MLP with 3 matrices, LM head with the padded vocabulary,
// MTP blocks (model.mtp_layers) as Megatron counts them.
// `tensor_parallel` only matters through vocabulary padding.
double model_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel);

// The share of a causal attention's (query, key) pairs a sliding window of `window` keys keeps at sequence length
// `seq`: each query sees min(its position, window) keys, (2 w s - w^2) / s^2 of the s^2 / 2 causal pairs for w < s;
// 1 when the window is 0 (none) or covers the sequence.
double causal_window_share(double seq, double window);

// Hardware FLOPs (HFU convention): model FLOPs plus the recomputed forward work.
// Selective recompute adds the attention-core forward of every layer; full recompute adds the whole
// layer forward of `recomputed_layers` layers (embedding/LM head are never recomputed).
double hardware_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel,
                                    RecomputeGranularity recompute, int recomputed_layers);
// The same with selective recompute of `modules` (Megatron's --recompute-modules): the forward FLOPs of every
// recomputed GEMM region are added once (core_attn: attention core; mla_up_proj: the q/kv up-projections;
// torchtitan_op: the wk, wo and w3 (or fc2) matmuls;
// mlp: dense MLPs; moe: router, routed and shared experts; shared_experts: shared experts). layernorm and
// moe_act re-run element-wise work only, which Megatron's FLOP count does not include.
double hardware_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel,
                                    RecomputeGranularity recompute, int recomputed_layers,
                                    const RecomputeModules& modules);

}  // namespace trainsim
