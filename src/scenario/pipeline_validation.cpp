// How the transformer layers split over pipeline stages, as Megatron-LM allows it
// (megatron/training/arguments.py, --decoder-first/last-pipeline-num-layers; ../shared/reference/megatron.md):
//  - even: num_layers divisible by pipeline x virtual_pipeline (every model chunk equal);
//  - uneven: the first and/or last stage get the stated counts, the remaining layers split evenly
//    over the middle stages; with interleaving each stage's count must divide into its
//    virtual_pipeline chunks.
#include <algorithm>

#include "core/error.hpp"
#include "scenario/validation.hpp"

namespace trainsim::scenario_detail {

namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

}  // namespace

std::vector<int> validate_pipeline_split(const Scenario& s) {
  const ParallelSpec& p = s.parallelism;
  const int layers = s.model.num_layers;
  const int v = p.virtual_pipeline;
  const auto fail = [&](const std::string& key, const std::string& message) -> void {
    throw ScenarioError(s.file, key, message);
  };

  if (v > 1 && p.pipeline == 1)
    fail("parallelism.virtual_pipeline", "virtual_pipeline " + str(v) + " (interleaved 1F1B) needs parallelism.pipeline > 1");
  if (v > 1 && p.schedule == PipelineSchedule::GPipe)
    fail("parallelism.virtual_pipeline", "virtual_pipeline " + str(v) +
                                             " means the interleaved 1F1B schedule; it cannot be combined with schedule gpipe");
  const bool uneven = p.first_stage_layers || p.last_stage_layers;
  if (uneven && p.pipeline == 1)
    fail(p.first_stage_layers ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers",
         "an uneven pipeline split needs parallelism.pipeline > 1");

  if (!uneven) {
    if (layers % (static_cast<std::int64_t>(p.pipeline) * v) != 0)
      fail(v > 1 ? "parallelism.virtual_pipeline" : "parallelism.pipeline",
           "model.num_layers " + str(layers) + " does not split evenly over pipeline " + str(p.pipeline) +
               " x virtual_pipeline " + str(v) + " = " + str(static_cast<std::int64_t>(p.pipeline) * v) +
               " model chunks (or give parallelism.first_stage_layers / last_stage_layers)");
    return std::vector<int>(static_cast<std::size_t>(p.pipeline), layers / p.pipeline);
  }

  const int first = p.first_stage_layers.value_or(0);
  const int last = p.last_stage_layers.value_or(0);
  const int middle_stages = p.pipeline - (p.first_stage_layers ? 1 : 0) - (p.last_stage_layers ? 1 : 0);
  const std::int64_t remaining = static_cast<std::int64_t>(layers) - first - last;
  const std::string given = "first_stage_layers " + str(first) + " + last_stage_layers " + str(last);
  const char* key = p.first_stage_layers ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  if (remaining < 0) fail(key, given + " exceeds model.num_layers " + str(layers));
  if (middle_stages == 0 && remaining != 0)
    fail(key, given + " must equal model.num_layers " + str(layers) + " with pipeline " + str(p.pipeline));
  int per_middle = 0;
  if (middle_stages > 0) {
    if (remaining % middle_stages != 0 || remaining == 0)
      fail(key, "the " + str(remaining) + " layers left after " + given + " do not split evenly over the " +
                    str(middle_stages) + " middle stages (at least one layer each)");
    per_middle = static_cast<int>(remaining / middle_stages);
  }
  if (v > 1) {
    if (first % v != 0) fail("parallelism.first_stage_layers", "first_stage_layers " + str(first) +
                                                                   " is not divisible by virtual_pipeline " + str(v));
    if (last % v != 0) fail("parallelism.last_stage_layers", "last_stage_layers " + str(last) +
                                                                 " is not divisible by virtual_pipeline " + str(v));
    if (per_middle % v != 0)
      fail("parallelism.virtual_pipeline", "each middle stage gets " + str(per_middle) +
                                               " layers, not divisible by virtual_pipeline " + str(v));
  }
  std::vector<int> stages(static_cast<std::size_t>(p.pipeline), per_middle);
  if (p.first_stage_layers) stages.front() = first;
  if (p.last_stage_layers) stages.back() = last;
  return stages;
}

void validate_recompute_layers(const Scenario& s, const std::vector<int>& stage_layers) {
  const std::vector<int>& counts = s.training.recompute_num_layers;
  if (counts.empty()) return;
  const std::string key = "training.recompute_num_layers";
  if (s.training.recompute != RecomputeGranularity::Full)
    throw ScenarioError(s.file, key, "recompute_num_layers only applies with training.recompute: full");
  if (counts.size() > 1 && counts.size() != stage_layers.size())
    throw ScenarioError(s.file, key, str(static_cast<std::int64_t>(counts.size())) + " values for pipeline " +
                                         str(static_cast<std::int64_t>(stage_layers.size())) +
                                         "; give one number for every stage or one per stage");
  if (counts.size() == 1) {
    // One number for every stage: Megatron's block method recomputes min(N, layers of the stage).
    int most = 0;
    for (int layers : stage_layers) most = std::max(most, layers);
    if (counts.front() > most)
      throw ScenarioError(s.file, key, "recomputes " + str(counts.front()) + " layers per stage, but no pipeline stage has more than " +
                                           str(most));
    return;
  }
  for (std::size_t stage = 0; stage < stage_layers.size(); ++stage) {
    const int count = counts[stage];
    if (count > stage_layers[stage])
      throw ScenarioError(s.file, key, "recomputes " + str(count) + " layers on pipeline stage " +
                                           str(static_cast<std::int64_t>(stage)) + ", which has only " +
                                           str(stage_layers[stage]));
  }
}

}  // namespace trainsim::scenario_detail
