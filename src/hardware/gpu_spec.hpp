#pragma once
// One accelerator as the catalog (data/gpus.yaml) or the scenario's `cluster.gpu_spec` describes it.
#include <optional>
#include <string>
#include <vector>

#include "core/precision.hpp"

namespace trainsim {

struct GpuSpec {
  std::string name;          // catalog id, e.g. "H100-SXM"
  std::string architecture;  // e.g. "hopper"; used to pick kernel-efficiency curves
  int sm_version = 0;        // 70, 80, 90, 100; 0 for non-NVIDIA (AMD uses its own curves)
  std::string vendor;        // "NVIDIA" | "AMD"
  // Dense (no 2:4 sparsity) peak, TFLOP/s; nullopt where the GPU lacks the precision.
  std::optional<double> fp32_tflops, tf32_tflops, bf16_tflops, fp16_tflops, fp8_tflops;
  // Dense FP4 peak (NVFP4 / MXFP4), TFLOP/s; nullopt where the GPU has no FP4 tensor cores or the catalog
  // does not say. Prices training.precision fp4 (Transformer Engine's NVFP4 recipe, Blackwell only).
  std::optional<double> fp4_tflops;
  double hbm_GBps = 0;       // HBM bandwidth, 1e9 B/s
  double memory_gib = 0;     // device memory, GiB
  double scale_up_GBps = 0;  // scale-up (NVLink / Infinity Fabric) bandwidth per GPU per direction
  int sm_count = 0;          // SMs / CUs (wave quantisation); 0 if unknown
  // Clocks and power (data/gpus.yaml, each with its source). The dense peaks above are specified at
  // peak_clock_mhz; under long tensor-core load at the rated power the GPU holds sustained_clock_mhz.
  // 0 = unknown (no clock derating is applied).
  double peak_clock_mhz = 0;
  double sustained_clock_mhz = 0;
  // The clock a short, cool benchmark runs at before the power cap bites (the maximum SM clock, e.g.
  // 1980 MHz on H100/H200); 0 = not known (the roofline then applies a flat long-run share).
  double boost_clock_mhz = 0;
  double power_w = 0;  // rated board power (TDP / TGP), W; 0 = unknown
  // A power limit set below the rating (cluster.gpu_power_limit_w) and the tensor-core clock held under it
  // (hardware/power_limit.hpp); 0 = none, the GPU runs at its rated power and sustained clock.
  double power_limit_w = 0;
  double power_limited_clock_mhz = 0;
  // The GEMM plateau measured on this part (its own maximum-achievable-FLOPS runs, data/gpus.yaml
  // `gemm_plateau`), for 16-bit, FP8 and FP4 GEMMs, in place of its architecture's (compute/gemm_efficiency.hpp);
  // nullopt = the architecture's. Set where a sibling part of the same architecture measures differently
  // (GB200 vs B200, MI325X vs MI300X, Blackwell Ultra's FP4 against B200's).
  std::optional<double> gemm_plateau_16, gemm_plateau_fp8, gemm_plateau_fp4;
  // GPUs in the scale-up (NVLink) domain the part is sold in, e.g. 72 for GB200 NVL72, 8 for an HGX
  // board; 0 = not stated (the scenario's cluster.scale_up.domain_size decides).
  int scale_up_domain = 0;
  // The host CPU of the system the part is sold in (data/gpus.yaml `host_cpu`): "grace" (NVIDIA Grace, arm64: GB200,
  // GB300), "intel" or "amd" (x86); "" = the vendor's usual x86 host (NVIDIA's HGX/DGX boards Intel Xeon, AMD's
  // Instinct platforms AMD EPYC). NCCL's tuning depends on it (nccl.md §5.1, §5.4); the generated NCCL topology
  // says it.
  std::string host_cpu;

  // Peak for a precision; throws Error naming the GPU if it lacks that precision.
  double peak_tflops(Precision p) const;
  bool supports(Precision p) const;
  // Whether the part's FP8 GEMMs take operands in any layout, so that an FP8 tensor read transposed needs no
  // transposed copy (Transformer Engine utils.py is_non_tn_fp8_gemm_supported: SM 10.x-11.x and 13.x and later; not
  // Hopper, Ada, SM 12.x or AMD's CDNA, whose FP8 GEMMs take only TN).
  bool fp8_gemms_take_any_layout() const { return (sm_version >= 100 && sm_version < 120) || sm_version >= 130; }
};

}  // namespace trainsim
