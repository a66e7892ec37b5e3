#pragma once
// KernelDesc constructors: FLOPs and HBM bytes of each kernel kind, in one place.
#include <cstdint>
#include <vector>

#include "core/kernel_desc.hpp"

namespace trainsim {

// Bytes per element of activations/weights for a training precision. FP8 training (Transformer
// Engine) keeps activations and weights in bf16 outside the GEMMs; GEMM operands are cast to fp8.
double activation_bytes(Precision p);
double gemm_operand_bytes(Precision p);
enum class Fp8Recipe;
// Bytes per element of one quantized copy of a tensor (values and scales): FP8 with a per-tensor scale 1, MXFP8 one
// E8M0 scale per 32 (1 + 1/32), NVFP4 0.5625; the training dtype's size when the precision is not quantized.
double quantized_copy_bytes(Precision p, Fp8Recipe recipe);

// The local grad-norm pass reads each local shard element's fp32 gradient once (4 B).
inline constexpr double kGradNormBytesPerElement = 4.0;

// The optimizer step over `elements` local shard elements (training.optimizer), as Megatron sizes it (the passes of
// MixedPrecisionOptimizer.step: optimizer/clip_grads.py) and DeepSpeed ZeRO's step too: the update, the clip-scale
// pass (8 B) and the fp32 -> bf16 copy (6 B). The update: fused Adam reads p, g, m, v and writes p, m, v (28 B,
// 12 FLOPs); SGD with momentum (apex FusedSGD / torch.optim.SGD) reads p, g, m and writes p, m (20 B, 4 FLOPs); LAMB
// (apex FusedLAMB) reads p, g, m, v and writes m, v and the update u, reads p and u again for their per-tensor norms,
// then reads p, u and writes p (48 B, 16 FLOPs). Its op name is "optimizer." + the optimizer's name.
enum class Optimizer;
inline constexpr double kOptimizerAroundBytesPerElement = 8.0 + 6.0;  // the clip-scale pass, the fp32 -> bf16 copy
KernelDesc optimizer_step_kernel(Optimizer o, double elements, Precision p);
const char* optimizer_step_name(Optimizer o);

// C[m x n] = A[m x k] * B[k x n]; FLOPs 2mnk per matmul (x batch).
KernelDesc gemm(std::int64_t m, std::int64_t n, std::int64_t k, Precision p, std::int64_t batch = 1);

// Fused (flash / cuDNN) attention over `batch` = micro-batch x local heads. Forward FLOPs
// 4 * s_q * s_kv * d per head (QK^T and PV), halved when causal (the kernel skips the masked half);
// backward 2.5x the forward (the FlashAttention papers' convention, arXiv 2307.08691).
// `window` > 0: a causal sliding window of that many keys (model.sliding_window), which keeps
// causal_window_share (model/flops.hpp) of the causal FLOPs; self-attention only (s_q == s_kv).
KernelDesc flash_attention_fwd(std::int64_t batch, std::int64_t s_q, std::int64_t s_kv, std::int64_t head_dim,
                               bool causal, Precision p, std::int64_t window = 0);
KernelDesc flash_attention_bwd(std::int64_t batch, std::int64_t s_q, std::int64_t s_kv, std::int64_t head_dim,
                               bool causal, Precision p, std::int64_t window = 0);

// A memory-bound kernel that moves `bytes` through HBM and does `flops` arithmetic.
KernelDesc memory_kernel(KernelKind kind, double bytes, double flops, Precision p);

// A kernel with the stem of its op name (the emitter appends what it quantizes and the GEMM's name).
struct StemmedKernel {
  const char* stem;
  KernelDesc kernel;
};

// Transformer Engine's NVFP4 quantization of a BF16 tensor of `elems` elements (layer_ops_fp4.cpp has the recipe):
// "fp4.amax" reads it (2 B per element); "fp4.quantize" reads it again and writes the row-wise and the column-wise
// NVFP4 copies (0.5625 B each).
std::vector<StemmedKernel> nvfp4_quantize_kernels(double elems);

// Transformer Engine's FP8 quantization of one BF16 tensor of `elems` elements under `recipe` (layer_ops_fp8.cpp has
// the recipes), in launch order, each with the stem of its op name ("fp8.amax", "fp8.cast_transpose", "fp8.cast",
// "fp8.transpose", "fp8.quantize"). `after_te_norm`: the tensor is the output of a LayerNorm TE fuses with the linear;
// `weight`: it is a weight.
std::vector<StemmedKernel> fp8_quantize_kernels(Fp8Recipe recipe, double elems, bool after_te_norm, bool weight);
// The transpose of an FP8 tensor of `elems` elements that exists already ("fp8.transpose": read 1 B, write 1 B).
StemmedKernel fp8_transpose_kernel(double elems);
// The same quantization for the input of a GEMM that Transformer Engine all-gathers over tensor parallelism under
// sequence parallelism: the local shard of `local_elems` is quantized before the gather (row-wise, "fp8.cast":
// read 2 B, write 1 B; MXFP8 both copies) and the column-wise copy is the transpose of the gathered
// `gathered_elems` (delayed and tensorwise).
std::vector<StemmedKernel> fp8_quantize_gathered_kernels(Fp8Recipe recipe, double local_elems, double gathered_elems,
                                                         bool after_te_norm);

}  // namespace trainsim
