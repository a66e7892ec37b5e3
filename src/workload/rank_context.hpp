#pragma once
// One simulated rank as the pieces of its iteration see it: the job, where the rank sits in the pipeline, which
// model parts its chunks hold, its communicators, and the op builder and layer emitter it issues through. The
// generator (generator.cpp) fills it once per rank; the pipeline schedule and the training framework
// (frameworks/training_framework.hpp) read it.
#include <cstdint>
#include <optional>

#include "scenario/scenario.hpp"
#include "workload/layer_dims.hpp"
#include "workload/layer_ops.hpp"
#include "workload/parallel_plan.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/program_builder.hpp"
#include "workload/stage_layout.hpp"

namespace trainsim {

// Which pipeline schedule the scenario runs (Megatron's forward_backward_func choice, schedules.py).
ScheduleKind schedule_kind(const Scenario& s);

// The communicators of one rank (group ids of the WorkloadBuilder).
struct RankCommunicators {
  LayerGroups layer;              // tp, cp and the MoE groups: what the layer emitter issues on
  std::uint32_t data = 0;         // dp x cp: the dense gradients' reduction, FSDP's / ZeRO's partitioning
  std::uint32_t expert_data = 0;  // expert-DP: the routed experts' gradients (MoE only)
  std::uint32_t world = 0;
  std::uint32_t model_parallel = 0;                         // tp x pp
  std::optional<std::uint32_t> previous_stage, next_stage;  // pipeline pairs
  std::optional<std::uint32_t> embedding;  // first and last (or MTP) stage: the word-embedding gradient
};

struct RankContext {
  const Scenario& scenario;
  const ParallelPlan& plan;
  const StageLayout& layout;
  const LayerDims& dims;
  RankBuilder& builder;
  LayerEmitter& emitter;
  const RankCommunicators& communicators;
  int rank = 0;  // global rank id
  int pipeline_stage = 0;
  int pipeline_stages = 1;
  int chunks = 1;         // model chunks per stage (virtual pipeline)
  int micro_batches = 1;  // per iteration

  bool first_stage() const { return pipeline_stage == 0; }
  bool last_stage() const { return pipeline_stage == pipeline_stages - 1; }
  bool has_embedding(int chunk) const { return first_stage() && chunk == 0; }
  bool has_lm_head(int chunk) const { return last_stage() && chunk == chunks - 1; }
  // The MTP blocks' own embedding copy lives on their stage unless that is the first (which has the embedding).
  bool has_mtp_embedding(int chunk) const;
  // The LM head is a weight of its own on this rank: untied, or tied with pipeline parallelism (the last stage's copy).
  bool owns_lm_head_weight() const { return scenario.model.untie_embeddings || pipeline_stages > 1; }
  // Interleaved 1F1B also means Megatron's align_param_gather and align_grad_reduce: the schedule
  // launches whole chunks' parameter all-gathers and gradient reductions (schedules.py), and the forward
  // pre-hooks only wait for the all-gathers (DistributedDataParallel._make_forward_pre_hook).
  bool interleaved() const { return schedule_kind(scenario) == ScheduleKind::Interleaved; }
  // Selective recompute re-runs core attention when recompute_modules has core_attn (the default).
  bool selective_attention() const;
  // The stage's recompute_num_layers (scenario.md: per stage) spread evenly over its chunks.
  int recomputed_layers_in_chunk(int chunk) const;
  // TP-rank 0 loads the batch and broadcasts it over TP (get_batch_on_this_tp_rank).
  void data_broadcast(int micro_batch) const;
};

}  // namespace trainsim
