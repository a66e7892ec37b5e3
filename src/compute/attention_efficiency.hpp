#pragma once
// Fraction of the dense peak that a fused (flash / cuDNN) attention kernel sustains, from the
// published FlashAttention-2 (A100) and cuDNN (H100) benchmark tables; other generations are
// scaled from those (docs/compute-model.md).
#include <cstdint>
#include <optional>
#include <string>

#include "compute/arch_family.hpp"
#include "hardware/gpu_spec.hpp"
#include "core/kernel_desc.hpp"

namespace trainsim {

// `seq` is the effective sequence length sqrt(s_q * s_kv) (the square with the same score count);
// `p` the kernel's dtype (FP8 gets the FP8-attention scale; fp32/tf32 reuse the 16-bit fraction
// against their own peak, crude); `kernel` which fused kernel runs (training.attention_kernel). Throws
// trainsim::Error for non-positive seq or head_dim, or a kernel the GPU cannot run.
double flash_attention_fraction(ArchFamily arch, Precision p, bool backward, double seq, std::int64_t head_dim,
                                bool causal, AttentionKernel kernel = AttentionKernel::Auto);

// Why `kernel` cannot run on `arch` (FA3 is Hopper-only; cuDNN and FA1 have no AMD kernels), or nothing.
std::optional<std::string> attention_kernel_problem(ArchFamily arch, AttentionKernel kernel);

// Forward and backward fractions of the A100 FA2 table: the published fwd+bwd figure split with
// the measured bwd/fwd ratio (roofline_constants.hpp). Exposed for tests and the docs.
struct FwdBwdFractions {
  double fwd = 0, bwd = 0;
};
FwdBwdFractions split_combined_attention(double combined_fraction, double bwd_over_fwd);

}  // namespace trainsim
