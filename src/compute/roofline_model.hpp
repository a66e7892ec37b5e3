#pragma once
// The roofline ComputeModel's parts, exposed so tests, reports and a future measured-op database
// (which falls back to the roofline per op) can see how a time was built.
#include "compute/arch_family.hpp"
#include "compute/compute_model.hpp"

namespace trainsim {

struct RooflineBreakdown {
  double compute_s = 0;    // flops / (peak(dtype) * efficiency); 0 when the kind has no compute side
  double memory_s = 0;     // bytes / (hbm * fraction * size ramp)
  double overhead_s = 0;   // fixed per-kernel cost (launch, prologue/epilogue)
  double efficiency = 0;   // fraction of peak used for compute_s (GEMM / attention); 0 otherwise
  double total_s() const { return (compute_s > memory_s ? compute_s : memory_s) + overhead_s; }
};

// Prices one kernel. Throws trainsim::Error for negative or non-finite flops/bytes, for GEMM or
// attention kernels with work but non-positive dims, and (via GpuSpec::peak_tflops) for a dtype
// the GPU lacks. A kernel with no flops and no bytes is empty: all zeros.
// `attention` picks the fused-attention kernel's table (training.attention_kernel).
RooflineBreakdown roofline_breakdown(const GpuSpec& gpu, ArchFamily arch, const KernelDesc& k,
                                     AttentionKernel attention = AttentionKernel::Auto);

}  // namespace trainsim
