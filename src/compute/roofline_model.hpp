#pragma once
// The roofline ComputeModel's parts, exposed so tests, reports and a future measured-op database
// (which falls back to the roofline per op) can see how a time was built.
#include "compute/arch_family.hpp"
#include "compute/compute_model.hpp"

namespace trainsim {

struct RooflineBreakdown {
  double compute_s = 0;     // flops / (peak(dtype) * efficiency); 0 when the kind has no compute side
  double memory_s = 0;      // bytes / (hbm * fraction * size ramp)
  double overhead_s = 0;    // fixed per-kernel cost (launch, prologue/epilogue)
  double efficiency = 0;    // fraction of peak used for compute_s (GEMM / attention); 0 otherwise
  double clock_factor = 1;  // sustained / calibration clock applied to compute_s (tensor kernels)
  double total_s() const { return (compute_s > memory_s ? compute_s : memory_s) + overhead_s; }
};

// Prices one kernel. Throws trainsim::Error for negative or non-finite flops/bytes, for GEMM or
// attention kernels with work but non-positive dims, and (via GpuSpec::peak_tflops) for a dtype
// the GPU lacks. A kernel with no flops and no bytes is empty: all zeros.
// `attention` picks the fused-attention kernel's table (training.attention_kernel).
// `beside`: collectives running beside the kernel; it is priced on what they leave (gpu_left_by, with
// the GEMM tile chosen for the whole GPU).
RooflineBreakdown roofline_breakdown(const GpuSpec& gpu, ArchFamily arch, const KernelDesc& k,
                                     AttentionKernel attention = AttentionKernel::Auto, const CommLoad& beside = {});

// The tensor-core clock a training step holds over the clock the calibration tables were measured at
// (docs/compute-model.md §1.4; FA3 paper arXiv 2407.08608 App. C.1; roofline_constants.hpp kLongRunClockShare).
// Tables locked at the peak-basis clock (the FA3 paper's H100 tables, 1830 MHz) run at (sustained_clock_mhz /
// peak_clock_mhz) ^ kClockThroughputElasticity of data/gpus.yaml (1 where the catalog gives no clocks, and on
// AMD, whose tables were measured at the clock held under load); short-run tables (GEMM sweeps, the
// FlashAttention repository's figures) ran at boost_clock_mhz where the catalog gives it (sustained / boost,
// same elasticity), else they lose only the flat long-run share.
enum class CalibrationClock { LockedAtPeakBasis, ShortRun };
double tensor_clock_factor(const GpuSpec& gpu, ArchFamily arch, CalibrationClock calibrated_at);
// Tensor throughput of the slowest of `gpus` GPUs of one SKU over a typical one (the calibration GPU):
// the pace of a synchronous job (roofline_constants.hpp kSameSkuSpreadRangeOf8). 1 for one GPU.
double slowest_gpu_factor(std::int64_t gpus);
// Which kind of clock an attention kernel's table was measured at (roofline_constants.hpp).
CalibrationClock attention_calibration_clock(ArchFamily arch, AttentionKernel kernel);

// What a kernel has of `gpu` while collectives run beside it (docs/compute-model.md §1.4; NVIDIA developer
// forum one-wave GEMM beside ncclAllGather): the SMs their CTAs hold are gone (every tensor peak scales with
// the SMs left, and the wave count of a GEMM is taken on them: a one-wave GEMM needs two waves), and HBM
// bandwidth is shared with their copies. The roofline of the kernel on what is left over its roofline alone is
// the interference slowdown.
GpuSpec gpu_left_by(GpuSpec gpu, const CommLoad& load);

}  // namespace trainsim
