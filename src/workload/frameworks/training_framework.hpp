#pragma once
// The training framework behind parallelism.framework: what it does around the model's layers in one iteration -
// how parameters are gathered before a layer runs, how gradients are reduced, what the optimizer step issues, in
// what dtype gradients travel, and which scenarios it cannot run. One implementation per framework
// (megatron.cpp, fsdp.cpp, deepspeed.cpp), chosen by make_training_framework; the generator (generator.cpp) walks the
// pipeline schedule and calls the rank's FrameworkRank for every forward, backward and the step's end.
#include <memory>

#include "scenario/scenario.hpp"
#include "workload/rank_context.hpp"

namespace trainsim {

// What one rank issues for the framework in one iteration, in the order the generator calls it.
class FrameworkRank {
 public:
  virtual ~FrameworkRank() = default;
  // Before the first forward: clearing the gradient buffers (and the first parameter gathers).
  virtual void zero_grad() = 0;
  // One micro-batch through one model chunk: the layers' kernels (rank.emitter) with the framework's parameter
  // gathers, and in backward its gradient reductions, around them.
  virtual void forward(int micro_batch, int chunk) = 0;
  virtual void backward(int micro_batch, int chunk) = 0;
  // The interleaved schedule's whole-chunk gradient reduction and parameter gather (Megatron's align_grad_reduce,
  // align_param_gather); only Megatron runs that schedule.
  virtual void start_chunk_grad_sync(int /*chunk*/) {}
  virtual void start_chunk_param_sync(int /*chunk*/) {}
  // A transfer of the non-interleaved pipeline schedule has been issued (what the framework does after it).
  virtual void after_pipeline_transfer() {}
  // After the last backward: the reductions not yet launched, then a wait for every one of them.
  virtual void finish_grad_sync() = 0;
  virtual void optimizer_step() = 0;
};

class TrainingFramework {
 public:
  virtual ~TrainingFramework() = default;
  virtual Framework id() const = 0;
  // Refuses, as the user's ScenarioError, what the framework cannot run; called before any rank is built. By
  // default Megatron-Core's MoE layer and Megatron-LM's interleaved schedule, which only Megatron has.
  virtual void validate(const Scenario& s) const;
  // Bytes per element of the gradients the data-parallel reduction moves.
  virtual double grad_reduce_bytes(const Scenario& s) const = 0;
  // The rank's side of the iteration. `rank` outlives the result.
  virtual std::unique_ptr<FrameworkRank> start_rank(const RankContext& rank) const = 0;
};

std::unique_ptr<TrainingFramework> make_training_framework(Framework framework);

// Bytes per element of Megatron's gradient buffer and data-parallel reduction: fp32 for bf16 and fp8 (its --bf16
// turns accumulate_allreduce_grads_in_fp32 on) unless --grad-reduce-in-bf16; fp16 for fp16. The memory model holds
// the buffer at this size.
double megatron_grad_reduce_bytes(const Scenario& s);

// Parameter all-gathers PyTorch FSDP issues per layer and micro-batch, each with a gradient reduce-scatter per layer
// when not 0 (fsdp.cpp): 2 for FULL_SHARD, 1 for SHARD_GRAD_OP without a pipeline; 0 where gradients go through
// buckets (NO_SHARD, SHARD_GRAD_OP under a pipeline) or the framework is not FSDP. The work estimate counts by it.
int fsdp_layer_gathers(const ParallelSpec& p);

}  // namespace trainsim
