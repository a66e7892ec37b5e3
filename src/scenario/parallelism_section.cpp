// The `parallelism:` block. Cross-block checks (world size, divisibility by the model's shape)
// are in validation.cpp.
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

ParallelSpec read_parallelism(const Section& parallel) {
  ParallelSpec p;  // an absent block means no model parallelism: everything data-parallel
  parallel.read("tensor", p.tensor, Bound::Positive);
  parallel.read("pipeline", p.pipeline, Bound::Positive);
  parallel.read("data", p.data, Bound::Positive);  // stays 0 (= derive) when not given
  parallel.read("context", p.context, Bound::Positive);
  parallel.read("expert", p.expert, Bound::Positive);
  parallel.read("expert_tensor", p.expert_tensor, Bound::Positive);  // stays 0 (= tensor) when not given
  if (auto d = parallel.choice<MoeDispatcher>(
          "moe_dispatcher", {{"alltoall", MoeDispatcher::AllToAll}, {"allgather", MoeDispatcher::AllGather}}))
    p.moe_dispatcher = *d;
  parallel.read("virtual_pipeline", p.virtual_pipeline, Bound::Positive);
  parallel.read("first_stage_layers", p.first_stage_layers, Bound::Positive);
  parallel.read("last_stage_layers", p.last_stage_layers, Bound::Positive);
  parallel.read("sequence_parallel", p.sequence_parallel);
  if (auto s = parallel.choice<PipelineSchedule>(
          "schedule", {{"1f1b", PipelineSchedule::OneFOneB}, {"gpipe", PipelineSchedule::GPipe}}))
    p.schedule = *s;
  if (auto f = parallel.choice<Framework>("framework", {{"megatron", Framework::Megatron},
                                                        {"deepspeed", Framework::DeepSpeed},
                                                        {"fsdp", Framework::FSDP}}))
    p.framework = *f;
  if (auto z = parallel.int_value("zero_stage", Bound::NonNegative)) {
    if (*z > 3) parallel.fail("zero_stage", "expected 0, 1, 2 or 3, got " + std::to_string(*z));
    p.zero_stage = *z;
  }
  parallel.read("overlap_grad_reduce", p.overlap_grad_reduce);
  parallel.read("overlap_param_gather", p.overlap_param_gather);
  parallel.read("tp_comm_overlap", p.tp_comm_overlap);
  parallel.read("grad_bucket_mb", p.grad_bucket_mb, Bound::Positive);
  return p;
}

}  // namespace trainsim::scenario_detail
