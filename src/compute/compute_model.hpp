#pragma once
// How long a kernel takes on a GPU. The roofline model is the default; a measured op database
// (a later addition) implements the same interface and falls back to the roofline per op.
#include <memory>
#include <string>

#include "core/kernel_desc.hpp"
#include "core/time.hpp"
#include "hardware/gpu_spec.hpp"

namespace trainsim {

struct KernelTiming {
  SimTime time = 0;
  double achieved_tflops = 0;       // flops / time
  bool compute_bound = true;        // roofline side that decided the time
  const char* source = "roofline";  // "roofline" | "measured" | "scaled" | "given" (FixedDuration)
  // Roofline tensor kernels: the fraction of the dense peak the shape reaches (plateau x shape factors)
  // and the clock factor applied on top (sustained / calibration clock, times the pace of the job's
  // slowest GPU). 0 and 1 elsewhere.
  double efficiency = 0;
  double clock_factor = 1;
};

// What collectives running beside a kernel take from its GPU (docs/compute-model.md §1.4; NCCL one CTA per
// channel, TE userbuffers initialize_ub): the SMs their CTAs hold (one CTA per NCCL channel; a GEMM cannot
// place tiles there) and the HBM bandwidth their copies move (each byte a GPU sends is read from HBM, each byte
// it receives written).
struct CommLoad {
  int ctas = 0;
  double hbm_GBps = 0;
  // Of `ctas`, those the GEMMs beside them were planned around: Transformer Engine launches the GEMMs its
  // userbuffers overlap with an SM margin (cuBLAS's SM count target), where a GEMM beside an NCCL kernel was
  // planned for the whole GPU (roofline_constants.hpp kGemmBesideSmHolderSlowdown).
  int planned_ctas = 0;
  bool idle() const { return ctas <= 0 && !(hbm_GBps > 0); }
  bool unplanned_ctas() const { return ctas > planned_ctas; }
};

// KernelKind::FixedDuration: exactly the time the kernel carries, whatever the model (plumbing for imported
// workload files, whose durations were measured or priced elsewhere).
KernelTiming fixed_duration_timing(const KernelDesc& k);

class ComputeModel {
 public:
  virtual ~ComputeModel() = default;
  virtual KernelTiming time(const KernelDesc& k) const = 0;
  virtual std::string describe() const = 0;
  // Factor (>= 1) by which the kernel's time stretches while `load` runs beside it: the kernel priced
  // on what the collectives leave of the GPU over the kernel priced alone. Models that cannot say
  // return 1 (no interference).
  virtual double interference_slowdown(const KernelDesc& /*k*/, const CommLoad& /*load*/) const { return 1.0; }
};

// time = max(flops / (peak * gemm_or_attention_efficiency(shape)), bytes / (hbm * memory_efficiency))
//        + launch overhead. Constants and their sources: src/compute/roofline_constants.hpp and
// docs/compute-model.md.
// `attention` is the fused attention kernel the stack runs (training.attention_kernel); throws
// trainsim::Error naming that key when the GPU cannot run it (FA3 off Hopper, cuDNN on AMD).
// `job_gpus`: GPUs of the synchronous job; its tensor kernels run at the pace of the slowest of them
// (slowest_gpu_factor, roofline_model.hpp). 1 prices one GPU on its own.
std::unique_ptr<ComputeModel> make_roofline_model(const GpuSpec& gpu, AttentionKernel attention = AttentionKernel::Auto,
                                                  std::int64_t job_gpus = 1);

}  // namespace trainsim
