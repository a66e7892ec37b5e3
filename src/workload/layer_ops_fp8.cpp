// FP8 linear layers as Transformer Engine runs them under Megatron's default FP8 recipe (delayed
// scaling, E4M3 forward / E5M2 gradients; TE docs/features/low_precision_training, transformer_engine/pytorch/
// module/linear.py): the GEMM
// reads FP8 operands that separate memory-bound kernels produced.
//   fprop  Y = X W^T: X is quantized with its transpose (the wgrad operand) in one cast-transpose kernel:
//          read 2 B, write 1 B row-wise + 1 B column-wise per element (delayed scaling takes the scale
//          from the amax history, so no amax pass). The input of a linear whose LayerNorm TE fuses
//          (TELayerNormColumnParallelLinear: qkv, fc1) comes out of the norm kernel in FP8 already; only
//          its transpose is left (read 1 B, write 1 B). W is cast (with its transpose, the dgrad operand)
//          on the first micro-batch and cached for the others (TE `is_first_microbatch`).
//   dgrad  dX = dY W: dY is cast-transposed (its transpose is the wgrad operand).
//   wgrad  dW = X^T dY: both operands exist already.
// On Hopper the column-wise copies are physical transposes (TE performance_considerations); Blackwell
// (MXFP8) quantizes row- and column-wise separately, the same bytes. The output layers (the LM head and
// MTP's) and the MoE router stay in BF16: Megatron builds them outside Transformer Engine, and their
// call sites use LayerEmitter::bf16_gemm_op.
// An eager model (training.fusion: eager) that swaps its linears for te.Linear keeps PyTorch's own norm, so
// qkv and fc1 get the full cast-transpose too, and it casts the weights on every forward call.
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

// Bytes per element of the quantization kernels above.
constexpr double kCastTransposeBytes = 2.0 + 1.0 + 1.0;
constexpr double kTransposeOnlyBytes = 1.0 + 1.0;

// GEMMs whose input comes out of a TE-fused LayerNorm in FP8.
bool norm_fused_input(std::string_view name) {
  return name == "qkv" || name == "fc1" || name == "shared_experts.fc1" || starts_with(name, "mla.q_down") ||
         starts_with(name, "mla.kv_down");
}

}  // namespace

void LayerEmitter::fp8_quantize(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k,
                                std::int64_t batch) {
  const std::string_view gemm_name(name);
  if (ends_with(gemm_name, ".wgrad")) return;
  const double b = static_cast<double>(batch);
  const auto kernel = [&](const std::string& op, double elems, double bytes_per_elem) {
    rb_.compute(ctx, op, memory_kernel(KernelKind::Elementwise, elems * bytes_per_elem, 2.0 * elems, Precision::BF16));
  };
  if (ends_with(gemm_name, ".dgrad")) {
    kernel(std::string("fp8.cast_transpose.") + name, b * static_cast<double>(m) * static_cast<double>(k),
           kCastTransposeBytes);
    return;
  }
  const double input = b * static_cast<double>(m) * static_cast<double>(k);
  if (norm_fused_input(gemm_name) && !d_.eager) {
    kernel(std::string("fp8.transpose.") + name, input, kTransposeOnlyBytes);
  } else {
    kernel(std::string("fp8.cast_transpose.") + name, input, kCastTransposeBytes);
  }
  // Megatron passes is_first_microbatch, so TE casts the weight once per step; an eager model calling
  // te.Linear directly (llm-foundry's fc_type: te) passes nothing and every forward call casts it again,
  // a recomputed forward included.
  const bool cast_weight = d_.eager ? ctx.phase == Phase::Forward || ctx.phase == Phase::Recompute
                                    : ctx.micro_batch == 0 && ctx.phase == Phase::Forward;
  if (cast_weight) {
    kernel(std::string("fp8.cast_weight.") + name, b * static_cast<double>(n) * static_cast<double>(k),
           kCastTransposeBytes);
  }
}

}  // namespace trainsim
