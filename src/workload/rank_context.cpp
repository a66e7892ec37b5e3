#include "workload/rank_context.hpp"

#include <algorithm>

#include "workload/recompute.hpp"

namespace trainsim {

ScheduleKind schedule_kind(const Scenario& s) {
  if (s.parallelism.pipeline == 1) return ScheduleKind::NoPipelining;
  if (s.parallelism.virtual_pipeline > 1) return ScheduleKind::Interleaved;
  return s.parallelism.schedule == PipelineSchedule::GPipe ? ScheduleKind::GPipe : ScheduleKind::OneFOneB;
}

bool RankContext::has_mtp_embedding(int chunk) const {
  return pipeline_stage != 0 && !layout.mtp_layers(pipeline_stage, chunk).empty();
}

bool RankContext::selective_attention() const {
  return scenario.training.recompute == RecomputeGranularity::Selective &&
         scenario.training.recompute_modules.core_attn;
}

// Each model chunk is its own TransformerBlock in Megatron and the block method runs per block (recompute.py
// checkpointed_forward), so Megatron recomputes the same number of layers in every chunk; without interleaving
// this is the stage's count.
int RankContext::recomputed_layers_in_chunk(int chunk) const {
  const int n = recomputed_layers_on_stage(scenario, pipeline_stage, layout.layers_on_stage(pipeline_stage));
  // A pipeline_layout may give the chunks of a stage different layer counts: a chunk recomputes at most its own.
  return std::min(n / chunks + (chunk < n % chunks ? 1 : 0),
                  static_cast<int>(layout.layers(pipeline_stage, chunk).size()));
}

// Tokens and position ids on the first stage, labels and loss mask on the last (int64/fp32, 8 B per token each).
void RankContext::data_broadcast(int micro_batch) const {
  if (dims.t == 1) return;
  builder.sync_collective({Phase::Forward, -1, micro_batch}, Stream::TpComm, "tp.broadcast_batch", CollKind::Broadcast,
                          communicators.layer.tp, 16 * dims.s * dims.b);
}

}  // namespace trainsim
