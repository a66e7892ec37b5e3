#pragma once
// What a compute op asks of the GPU: a kernel kind and its shape. The workload layer fills these in
// from model shapes; the compute layer prices them. No times live here. Shared vocabulary (core), so that
// the compute layer needs neither the workload's nor the scenario's headers.
#include <cstdint>

#include "core/precision.hpp"

namespace trainsim {

enum class KernelKind : std::uint8_t {
  Gemm,            // m x n x k matmul, `batch` independent ones (FLOPs 2*m*n*k*batch)
  FlashAttnFwd,    // fused causal/non-causal attention forward
  FlashAttnBwd,    // fused attention backward (about 2.5x the forward FLOPs)
  AttnScoreGemm,   // unfused: Q*K^T / P*V batched matmuls
  Softmax,         // unfused attention softmax (+mask, scale); memory-bound
  LayerNorm,       // LayerNorm / RMSNorm forward or backward, a fused kernel (TE, apex); memory-bound
  Elementwise,     // bias/dropout/residual adds, activations, RoPE, casts; memory-bound
  CrossEntropy,    // vocab-parallel cross-entropy passes over logits; memory-bound
  Embedding,       // embedding gather / gradient index-add; memory-bound
  OptimizerStep,   // Adam/LAMB/SGD over a parameter shard; memory-bound
  Memset,          // zeroing grad buffers; memory-bound
  TorchLayerNorm,  // PyTorch's own layer_norm kernels (F.layer_norm, its backward): an eager model's; memory-bound
  FixedDuration,   // a kernel whose time is given (`seconds`), not derived from a shape: an imported workload file's
};

struct KernelDesc {
  KernelKind kind = KernelKind::Gemm;
  Precision dtype = Precision::BF16;
  // GEMM: output m x n, reduction k, `batch` of them. Attention: batch = b * heads, m = query
  // length, n = key length, k = head dim, `causal` set. Others: leave 0.
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool causal = false;
  // Causal attention with a sliding window (model.sliding_window): each query sees at most this many keys, so the
  // kernel skips the tiles outside the band; 0 = the whole causal prefix.
  std::int64_t window = 0;
  // An FP8 GEMM on MXFP8 operands (one E8M0 scale per 32 elements, training.fp8_recipe mxfp8): Blackwell's
  // block-scaled GEMM, a little slower than the tensor-scaled one.
  bool block_scaled = false;
  double flops = 0;  // total floating-point operations of the kernel
  double bytes = 0;  // HBM bytes read + written (lower bound, ideal caching)
  // FixedDuration: how long the kernel runs, in seconds (imported workload files state durations, not shapes).
  // The compute models price it as exactly this time and never stretch it for interference.
  double seconds = 0;

  bool operator==(const KernelDesc&) const = default;
};

const char* to_string(KernelKind k);

// The fused-attention implementation a job ran (training.attention_kernel): auto = the generation's usual one.
enum class AttentionKernel { Auto, Flash1, Flash2, Flash3, Flash4, Triton, Cudnn };
const char* to_string(AttentionKernel k);  // as the scenario spells it: "flash2", ...

// The fused-attention kinds (forward and backward), keyed and priced by shape and mask.
inline bool is_flash_attention(KernelKind k) { return k == KernelKind::FlashAttnFwd || k == KernelKind::FlashAttnBwd; }

}  // namespace trainsim
