#pragma once
// The optimizer step's kernels as each implementation launches them (training.optimizer_implementation;
// docs/compute-model.md §1.6). The bytes of the update are the implementation's, the launches its multi-tensor
// chunking: the reference asks for "HBM bytes plus a per-parameter-tensor dispatch cost that depends on the
// implementation (fused << foreach << per-tensor)" (kernels-in-training.md §4).
//   fused    one multi-tensor kernel reads p, g, m, v and writes p, m, v (Adam 28 B per element), launched once per
//            chunk of tensors (Transformer Engine's / Apex's FusedAdam, DeepSpeed's FusedAdam, torch fused=True);
//   foreach  torch.optim's default on CUDA (_multi_tensor_adamw): the update's eight elementwise ops (weight decay,
//            lerp, mul, addcmul, sqrt, div, add, addcdiv) each one multi-tensor kernel per chunk of tensors, each
//            reading and writing the state again (Adam 84 B per element);
//   for_loop the same eight ops one tensor at a time (_single_tensor_adamw): eight kernels per tensor;
//   decoupled_adamw Composer's DecoupledAdamW (composer/optim/decoupled_weight_decay.py, since v0.15): the loop, after
//            one `state['step'] += 1` kernel per tensor, and before each tensor's update a `.item()` on its step
//            count, a device tensor, so the host waits for the previous tensor's update before it goes on.
// A multi-tensor launch takes at most depth_to_max_tensors[lists - 1] = {110, 64, 48, 36, 30} tensors and 320 blocks
// of 65,536 elements (PyTorch's ATen/native/cuda/MultiTensorApply.cuh, Apex's multi_tensor_apply.cuh alike).
#include <vector>

#include "core/kernel_desc.hpp"
#include "workload/program_builder.hpp"
#include "scenario/scenario.hpp"

namespace trainsim {

// One op of the step: a kernel standing for `launches` launches of the same pass.
struct OptimizerOp {
  KernelDesc kernel;
  int launches = 1;
  // The host reads a result of the ops before it back (a .item()) before it launches this one: it waits for them.
  bool after_host_read = false;
};

// Multi-tensor launches of one pass over `tensors` (element counts) whose kernel takes `lists` tensor lists.
int multi_tensor_launches(const std::vector<double>& tensors, int lists);

// How the optimizer's parameters are split over the data-parallel ranks: not at all (DDP, FSDP NO_SHARD, Megatron
// without the distributed optimizer); each tensor N ways (FSDP2's DTensor shards); or each unit's tensors flattened
// and cut into N contiguous pieces, so a rank holds pieces of the few tensors its piece crosses (FSDP1's FlatParameter
// with use_orig_params, Megatron's distributed optimizer over its buffer).
enum class OptimizerSharding { None, PerTensor, Flat };
struct ParamUnit {
  double params = 0;  // elements (the rank's model-parallel share)
  int tensors = 1;    // parameter tensors
};
// The tensors one rank's optimizer iterates over, as element counts scaled to `local_total`. Flat: a piece of 1/N of a
// unit of c equal tensors crosses min(c, 1 + c/N) of them on average (rounded, at least one).
std::vector<double> local_optimizer_tensors(const std::vector<ParamUnit>& units, OptimizerSharding sharding, int shards,
                                            double local_total);

// The step over the rank's local parameter tensors (element counts; what the optimizer iterates over), in launch
// order. Besides the update, every implementation has the clip-scale pass and the fp32 -> bf16 copy
// (optimizer_step_kernel's 14 B per element) as one more pass.
std::vector<OptimizerOp> optimizer_step_ops(Optimizer o, OptimizerImplementation impl,
                                            const std::vector<double>& tensors, Precision p);
// Issues those ops on the compute stream, each named optimizer_step_name(o), the host reading back where they say.
void emit_optimizer_step(RankBuilder& rb, const OpContext& ctx, Optimizer o, OptimizerImplementation impl,
                         const std::vector<double>& tensors, Precision p);

}  // namespace trainsim
