// The `parallelism:` block. Cross-block checks (world size, divisibility by the model's shape)
// are in validation.cpp.
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

// `parallelism.deepspeed:` DeepSpeed's ZeRO config keys under their own names, in elements
// (docs/zero-and-fsdp.md). A bucket must hold something; 0 is meaningful for the others as in DeepSpeed
// (no prefetch, no look-ahead, no reuse, nothing persistent).
DeepSpeedSpec read_deepspeed(const Section& ds) {
  DeepSpeedSpec d;
  ds.read("reduce_bucket_size", d.reduce_bucket_size, Bound::Positive);
  ds.read("stage3_prefetch_bucket_size", d.stage3_prefetch_bucket_size, Bound::NonNegative);
  ds.read("stage3_max_live_parameters", d.stage3_max_live_parameters, Bound::NonNegative);
  ds.read("stage3_max_reuse_distance", d.stage3_max_reuse_distance, Bound::NonNegative);
  ds.read("stage3_param_persistence_threshold", d.stage3_param_persistence_threshold, Bound::NonNegative);
  d.overlap_comm = ds.boolean("overlap_comm");
  return d;
}

// DeepSpeed has no Megatron DDP bucket, and its overlap switch is overlap_comm; parallelism.overlap_grad_reduce,
// when written, means the same thing.
void read_deepspeed_block(const Section& parallel, ParallelSpec& p) {
  const Section ds = parallel.child("deepspeed");
  if (p.framework != Framework::DeepSpeed) {
    if (ds.present())
      parallel.fail("deepspeed", std::string("the deepspeed block configures DeepSpeed ZeRO, but framework is ") +
                                     to_string(p.framework) + "; set parallelism.framework: deepspeed or remove it");
    return;
  }
  p.deepspeed = read_deepspeed(ds);
  if (parallel.has("grad_bucket_mb"))
    parallel.fail("grad_bucket_mb",
                  "grad_bucket_mb is Megatron's DDP bucket; with framework deepspeed set "
                  "parallelism.deepspeed.reduce_bucket_size (elements, default 5e8)");
  if (parallel.has("overlap_grad_reduce")) {
    if (p.deepspeed.overlap_comm && *p.deepspeed.overlap_comm != p.overlap_grad_reduce)
      ds.fail("overlap_comm", std::string("overlap_comm ") + (*p.deepspeed.overlap_comm ? "true" : "false") +
                                  " contradicts parallelism.overlap_grad_reduce " +
                                  (p.overlap_grad_reduce ? "true" : "false") +
                                  " (with framework deepspeed both name DeepSpeed's overlap_comm; set one)");
    p.deepspeed.overlap_comm = p.overlap_grad_reduce;
  }
}

}  // namespace

ParallelSpec read_parallelism(const Section& parallel) {
  ParallelSpec p;  // an absent block means no model parallelism: everything data-parallel
  parallel.read("tensor", p.tensor, Bound::Positive);
  parallel.read("pipeline", p.pipeline, Bound::Positive);
  parallel.read("data", p.data, Bound::Positive);  // stays 0 (= derive) when not given
  parallel.read("context", p.context, Bound::Positive);
  parallel.read("expert", p.expert, Bound::Positive);
  parallel.read("expert_tensor", p.expert_tensor, Bound::Positive);  // stays 0 (= tensor) when not given
  if (auto d = parallel.choice<MoeDispatcher>("moe_dispatcher", {{"alltoall", MoeDispatcher::AllToAll},
                                                                 {"allgather", MoeDispatcher::AllGather},
                                                                 {"flex", MoeDispatcher::Flex}}))
    p.moe_dispatcher = *d;
  parallel.read("virtual_pipeline", p.virtual_pipeline, Bound::Positive);
  p.virtual_pipeline_given = parallel.has("virtual_pipeline");
  parallel.read("first_stage_layers", p.first_stage_layers, Bound::Positive);
  parallel.read("last_stage_layers", p.last_stage_layers, Bound::Positive);
  parallel.read("account_for_embedding_in_pipeline_split", p.account_for_embedding_in_pipeline_split);
  parallel.read("account_for_loss_in_pipeline_split", p.account_for_loss_in_pipeline_split);
  parallel.read("pipeline_layout", p.pipeline_layout);  // parsed against the model in validation
  parallel.read("sequence_parallel", p.sequence_parallel);
  if (auto s = parallel.choice<PipelineSchedule>(
          "schedule", {{"1f1b", PipelineSchedule::OneFOneB}, {"gpipe", PipelineSchedule::GPipe}}))
    p.schedule = *s;
  if (auto f = parallel.choice("framework", frameworks())) p.framework = *f;
  if (auto z = parallel.int_value("zero_stage", Bound::NonNegative)) {
    if (*z > 3) parallel.fail("zero_stage", "expected 0, 1, 2 or 3, got " + std::to_string(*z));
    p.zero_stage = *z;
    p.zero_stage_given = true;
  }
  if (auto v = parallel.int_value("fsdp_version", Bound::Positive)) {
    if (*v > 2)
      parallel.fail("fsdp_version",
                    "expected 1 (FullyShardedDataParallel) or 2 (fully_shard), got " + std::to_string(*v));
    p.fsdp_version = *v;
  }
  parallel.read("overlap_grad_reduce", p.overlap_grad_reduce);
  parallel.read("overlap_param_gather", p.overlap_param_gather);
  parallel.read("param_gather_in_zero_grad", p.param_gather_in_zero_grad);
  parallel.read("tp_comm_overlap", p.tp_comm_overlap);
  parallel.read("grad_bucket_mb", p.grad_bucket_mb, Bound::Positive);
  read_deepspeed_block(parallel, p);
  return p;
}

}  // namespace trainsim::scenario_detail
