// NVFP4 linear layers as Transformer Engine runs them under its default NVFP4BlockScaling recipe (TE >= 2.7; Megatron
// --fp4-format e2m1 --fp4-recipe nvfp4): all three GEMMs of a TE linear (fprop, dgrad, wgrad) read NVFP4 operands, a
// 4-bit E2M1 value plus one E4M3 scale per 16 elements (0.5625 B; TE docs/features/low_precision_training/nvfp4).
// Every tensor a GEMM reads is quantized by two memory-bound kernels
// (transformer_engine/pytorch/csrc/quantizer.cpp, NVFP4Quantizer::quantize_impl):
//   amax      read 2 B per element: the per-tensor FP32 scale needs the tensor's amax first. For activations and
//             gradients nvte_hadamard_transform_amax gives amax(x) for the row-wise copy and amax(RHT(x^T)) for
//             the column-wise one in one read; for weights nvte_compute_amax.
//   quantize  read 2 B, write the row-wise copy and the column-wise (transposed: NVFP4 GEMMs take only the TN
//             layout) copy, 0.5625 B each. For activations and gradients one fused kernel applies the 16x16
//             random Hadamard transform to the column-wise copy (the wgrad operand), gradients with stochastic
//             rounding; weights use 16x16 2D blocks, no transform.
// Unlike FP8's delayed scaling there is no fused LayerNorm output: with the Hadamard transform's post-transform amax
// the norm writes BF16 and the quantizer runs after it (csrc/extensions/normalization.cpp takes its UNFUSED path).
// fprop quantizes its input X and, once per step (Megatron's is_first_microbatch; every forward call in an eager
// model that calls te.Linear itself), the weight; dgrad quantizes dY; wgrad reads what those produced. The output
// layers and the MoE router stay in BF16 as under FP8 (LayerEmitter::bf16_gemm_op); attention runs in BF16.
#include <string>
#include <string_view>

#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

void LayerEmitter::nvfp4_quantize(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n,
                                  std::int64_t k, std::int64_t batch) {
  const std::string_view gemm_name(name);
  if (gemm_name.ends_with(".wgrad")) return;
  const double b = static_cast<double>(batch);
  // The GEMM's left operand: X in fprop, dY in dgrad (m x k).
  emit_quantization(ctx, nvfp4_quantize_kernels(b * static_cast<double>(m) * static_cast<double>(k)), "", name);
  if (gemm_name.ends_with(".dgrad") || !quantizes_weight(ctx)) return;
  emit_quantization(ctx, nvfp4_quantize_kernels(b * static_cast<double>(n) * static_cast<double>(k)), "_weight", name);
}

}  // namespace trainsim
