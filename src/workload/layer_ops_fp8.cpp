// FP8 linear layers as Transformer Engine runs them (TE docs/features/low_precision_training, transformer_engine/
// pytorch/module/linear.py, csrc/quantizer.cpp, csrc/extensions/normalization.cpp): the GEMM reads FP8 operands that
// separate memory-bound kernels produced. By training.fp8_recipe (Megatron's --fp8-recipe):
//   delayed (Megatron's default; E4M3 forward / E5M2 gradients): the scale comes from the amax history, so one
//          cast-transpose kernel per tensor: read 2 B, write 1 B row-wise + 1 B column-wise per element. The input
//          of a linear whose LayerNorm TE fuses (TELayerNormColumnParallelLinear: qkv, fc1) comes out of the norm
//          kernel in FP8 already; only its transpose is left (read 1 B, write 1 B).
//   tensorwise (TE's Float8CurrentScaling): the scale comes from the tensor itself, so an amax pass (read 2 B)
//          precedes the same cast-transpose; after a TE norm, the norm computes the amax as it writes BF16
//          (FUSED_NORM_AMAX_FP8) and the cast-transpose follows (no transpose-only shortcut).
//   mxfp8 (Blackwell): one E8M0 scale per 32 elements, no amax pass; one kernel writes the row-wise and the
//          column-wise copies with their scales (read 2 B, write 1 + 1 + 2/32 B); the norm is not fused (it writes
//          BF16). The GEMM is the block-scaled one (KernelDesc::block_scaled).
// Under sequence parallelism TE quantizes the local shard of an input it all-gathers (qkv's and fc1's X, proj's and
// fc2's dY) before the gather, row-wise, and transposes the gathered copy for the wgrad (delayed and tensorwise;
// MXFP8 quantizes both copies on the shard): the cast on T/t rows, the transpose on T.
// Per GEMM: fprop quantizes its input X (with the copy the wgrad reads) and, on the first micro-batch only, the
// weight W (its copy is the dgrad operand; TE caches it across micro-batches: `is_first_microbatch`); dgrad
// quantizes dY (its other copy is the wgrad operand); wgrad reads what exists. On Hopper the column-wise copies are
// physical transposes (TE performance_considerations); Blackwell's are written separately, the same bytes. The
// output layers (the LM head and MTP's) and the MoE router stay in BF16: Megatron builds them outside Transformer
// Engine, and their call sites use LayerEmitter::bf16_gemm_op. With FP8 parameters (training.fp8_param_gather,
// delayed or tensorwise) the weight is FP8 already: no cast, only its transpose on Hopper (TN-only FP8 GEMMs).
// An eager model (training.fusion: eager) that swaps its linears for te.Linear keeps PyTorch's own norm, so
// qkv and fc1 get the full quantization too, and it casts the weights on every forward call.
#include <string>
#include <string_view>

#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}
bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// GEMMs whose input comes out of a TE-fused LayerNorm in FP8.
bool norm_fused_input(std::string_view name) {
  return name == "qkv" || name == "fc1" || name == "shared_experts.fc1" || starts_with(name, "mla.q_down") ||
         starts_with(name, "mla.kv_down");
}

}  // namespace

void LayerEmitter::fp8_quantize(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
                                std::int64_t batch, int input_shards) {
  const std::string_view gemm_name(name);
  if (ends_with(gemm_name, ".wgrad")) return;
  const double b = static_cast<double>(batch);
  // The GEMM's left operand: X in fprop, dY in dgrad (m x k).
  const bool dgrad = ends_with(gemm_name, ".dgrad");
  const bool te_norm = !dgrad && norm_fused_input(gemm_name) && !d_.eager && d_.fp8_recipe != Fp8Recipe::Mxfp8;
  const double input_elems = b * static_cast<double>(m) * static_cast<double>(k);
  if (input_shards > 1)
    emit_quantization(
        ctx, fp8_quantize_gathered_kernels(d_.fp8_recipe, input_elems / input_shards, input_elems, te_norm), "", name);
  else
    emit_quantization(ctx, fp8_quantize_kernels(d_.fp8_recipe, input_elems, te_norm, false), "", name);
  if (dgrad || !quantizes_weight(ctx)) return;
  const double weight_elems = b * static_cast<double>(n) * static_cast<double>(k);
  if (d_.fp8_params && d_.fp8_recipe != Fp8Recipe::Mxfp8) {
    // An FP8 parameter needs no cast; where the GEMMs take only TN, its transpose (the dgrad operand) is made on the
    // step's first forward (Float8Tensor update_usage(columnwise_usage=True)) and kept.
    if (d_.fp8_tn_only) emit_quantization(ctx, {fp8_transpose_kernel(weight_elems)}, "_weight", name);
    return;
  }
  emit_quantization(ctx, fp8_quantize_kernels(d_.fp8_recipe, weight_elems, false, true), "_weight", name);
}

void LayerEmitter::emit_quantization(const OpContext& ctx, const std::vector<StemmedKernel>& kernels, const char* what,
                                     const char* gemm) {
  for (const StemmedKernel& q : kernels) rb_.compute(ctx, std::string(q.stem) + what + "." + gemm, q.kernel);
}

}  // namespace trainsim
