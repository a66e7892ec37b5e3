#include "workload/frameworks/bucketed_data_parallel.hpp"

#include <algorithm>

#include "model/layer_shapes.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/optimizer_step.hpp"

namespace trainsim {

BucketedDataParallel::BucketedDataParallel(const RankContext& rank, DataParallelSettings settings)
    : rank_(rank),
      settings_(settings),
      buffers_(
          rank_param_items(rank),
          {"dp", rank.communicators.data, Stream::DpComm, static_cast<double>(rank.plan.data()) * rank.plan.context()},
          {"edp", rank.communicators.expert_data, Stream::ExpertDpComm, static_cast<double>(rank.plan.expert_data())},
          first_chunk_bucket_elements()) {
  const std::size_t buffers = buffers_.buffers().size();
  param_gather_inflight_.assign(buffers, std::nullopt);
  chunk_param_gathers_.assign(buffers, {});
  if (rank.interleaved()) {
    for (std::size_t b = 0; b < buffers; ++b) {
      const GradBuffer& buf = buffers_.buffers()[b];
      chunk_param_gathers_[b].assign(static_cast<std::size_t>(rank.chunks), {});
      for (int c = 0; c < rank.chunks; ++c)
        chunk_param_gathers_[b][static_cast<std::size_t>(c)].assign(
            buf.buckets_by_chunk[static_cast<std::size_t>(c)].size(), std::nullopt);
    }
  }
}

double BucketedDataParallel::first_chunk_bucket_elements() const {
  const Scenario& s = rank_.scenario;
  if (!s.parallelism.overlap_grad_reduce || rank_.pipeline_stage != 0) return 0;
  const double dp_cp = static_cast<double>(rank_.plan.data() * rank_.plan.context());
  return s.parallelism.grad_bucket_mb ? *s.parallelism.grad_bucket_mb * 1024.0 * 1024.0 / settings_.grad_bytes
                                      : std::max(40e6, 1e6 * dp_cp);
}

std::int64_t BucketedDataParallel::param_gather_bytes(const GradBucket& bucket) const {
  // The all-gather output is the whole bucket's bf16 parameters (2 B/param; fp32 models 4). FP8 parameters
  // (training.fp8_param_gather) sit in a uint8 buffer of their own and are gathered at 1 B (param_and_grad_buffer.py:
  // param_dtype torch.uint8 for quantized storage); MXFP8 ones are gathered in BF16 and quantized after.
  const TrainingSpec& t = rank_.scenario.training;
  const double full = activation_bytes(t.precision);
  const bool fp8_gather = rank_.dims.fp8_params && t.fp8_recipe != Fp8Recipe::Mxfp8;
  const double fp8 = fp8_gather ? bucket.quantized : 0;
  return static_cast<std::int64_t>((bucket.params - fp8) * full + fp8 * 1.0);
}

bool BucketedDataParallel::overlapped_param_gather() const {
  return settings_.distributed_optimizer && rank_.scenario.parallelism.overlap_param_gather;
}

void BucketedDataParallel::zero_grad() {
  const Precision precision = rank_.scenario.training.precision;
  const auto& buffers = buffers_.buffers();
  // One memset per DDP buffer (zero_grad_buffer); none where the gradients are set to None.
  if (settings_.zero_grad_memset)
    for (const GradBuffer& buf : buffers)
      rank_.builder.compute({Phase::Optimizer, -1, -1},
                            &buf == &buffers.front() ? "zero_grad_buffer" : "zero_grad_buffer.expert",
                            memory_kernel(KernelKind::Memset, buf.local_params * settings_.grad_bytes, 0, precision));
  // With overlap_param_gather nothing is dispatched here: the first forward pre-hook that needs a bucket
  // dispatches its all-gather and waits for it (finish_param_sync), then dispatches the next
  // (megatron.md §5.3 step 6; Megatron distrib_optimizer zero_grad dispatches nothing). So a stage past the first,
  // whose buffer is one bucket, gathers its parameters only once its first input has arrived, on the critical path
  // of the warm-up. Megatron-Core up to r0.8 dispatched the first bucket here, before forward compute
  // (parallelism.param_gather_in_zero_grad). Dense and expert buffers chain separately.
  if (overlapped_param_gather() && rank_.scenario.parallelism.param_gather_in_zero_grad && !rank_.interleaved())
    for (std::size_t b = 0; b < buffers.size(); ++b) {
      const GradBuffer& buf = buffers[b];
      if (!buf.buckets_by_chunk.empty() && !buf.buckets_by_chunk[0].empty())
        param_gather_inflight_[b] = rank_.builder.collective(
            {Phase::GradSync, -1, -1}, buf.reduction.stream, buf.op_name("param_allgather"), CollKind::AllGather,
            buf.reduction.group, param_gather_bytes(buf.buckets_by_chunk[0].back()));
    }
}

void BucketedDataParallel::forward(int micro_batch, int chunk) {
  const int mb = micro_batch;
  const bool gather_params = overlapped_param_gather() && !first_forward_done_[chunk];
  const auto& buffers = buffers_.buffers();
  const int n = buffers_.items_in_chunk(chunk);
  // Forward pre-hooks (_make_forward_pre_hook): the param all-gather of bucket k is waited for by the first
  // module owning one of its params; the next bucket's all-gather is dispatched right after. Each
  // buffer (dense, expert) has its own chain; forward order = reverse bucket order.
  std::vector<int> next_bucket;
  for (const GradBuffer& buf : buffers)
    next_bucket.push_back(static_cast<int>(buf.buckets_by_chunk[static_cast<std::size_t>(chunk)].size()) - 1);
  auto before_item = [&](int item_index) {
    if (!gather_params) return;
    for (std::size_t bi = 0; bi < buffers.size(); ++bi) {
      const GradBuffer& buf = buffers[bi];
      const auto& buckets = buf.buckets_by_chunk[static_cast<std::size_t>(chunk)];
      std::optional<std::uint32_t>& inflight = param_gather_inflight_[bi];
      int& next = next_bucket[bi];
      auto dispatch = [&](int b) {
        const OpContext ctx{Phase::GradSync, -1, mb};
        inflight =
            rank_.builder.collective(ctx, buf.reduction.stream, buf.op_name("param_allgather"), CollKind::AllGather,
                                     buf.reduction.group, param_gather_bytes(buckets[static_cast<std::size_t>(b)]));
      };
      while (next >= 0 && buckets[static_cast<std::size_t>(next)].last_item >= item_index) {
        if (rank_.interleaved()) {  // aligned: dispatched by the schedule; dispatch now only if it was not
          auto& h = chunk_param_gathers_[bi][static_cast<std::size_t>(chunk)][static_cast<std::size_t>(next)];
          if (!h) {
            dispatch(next);
            h = inflight;
            inflight.reset();
          }
          rank_.builder.wait(*h);
          h.reset();
          --next;
          continue;
        }
        if (!inflight) dispatch(next);
        rank_.builder.wait(*inflight);
        inflight.reset();
        --next;
        if (next >= 0) dispatch(next);
      }
    }
  };
  // Items are in backprop order; walk them in forward order.
  const int stage = rank_.pipeline_stage;
  LayerEmitter& emitter = rank_.emitter;
  int idx = n - 1;
  if (rank_.has_embedding(chunk)) {
    before_item(idx--);
    rank_.data_broadcast(mb);
    emitter.embedding_forward(mb);
  }
  for (int layer : rank_.layout.layers(stage, chunk)) {
    before_item(idx--);
    emitter.forward(layer, mb, Phase::Forward);
  }
  if (rank_.has_mtp_embedding(chunk)) before_item(idx--);
  for (int layer : rank_.layout.mtp_layers(stage, chunk)) {
    before_item(idx--);
    emitter.mtp_forward(layer, mb);
  }
  if (rank_.has_lm_head(chunk)) {
    while (idx >= 0) before_item(idx--);
    if (stage != 0) rank_.data_broadcast(mb);
    emitter.lm_head_forward(mb);
    if (settings_.host_checks_for_nan) rank_.builder.host_wait_for_last();  // the loss, read back
  }
  if (gather_params) first_forward_done_[chunk] = true;
}

void BucketedDataParallel::backward(int micro_batch, int chunk) {
  const int mb = micro_batch;
  const Scenario& s = rank_.scenario;
  const auto& buffers = buffers_.buffers();
  // Gradient reduction overlapped with the last micro-batch's backward: a bucket fires right
  // after the backward of its last parameter in backprop order (register_grad_ready), in each buffer. The
  // interleaved schedule launches whole chunks instead (start_chunk_grad_sync).
  const bool sync_now = s.parallelism.overlap_grad_reduce && mb == rank_.micro_batches - 1 && !rank_.interleaved();
  std::vector<std::size_t> next_bucket(buffers.size(), 0);
  auto after_item = [&](int item_index) {
    if (!sync_now) return;
    for (std::size_t bi = 0; bi < buffers.size(); ++bi) {
      const auto& buckets = buffers[bi].buckets_by_chunk[static_cast<std::size_t>(chunk)];
      std::size_t& next = next_bucket[bi];
      while (next < buckets.size() && buckets[next].last_item <= item_index)
        reduce_bucket(buffers[bi], buckets[next++].params, mb);
    }
  };
  const int stage = rank_.pipeline_stage;
  LayerEmitter& emitter = rank_.emitter;
  int idx = 0;
  if (rank_.has_lm_head(chunk)) {
    emitter.lm_head_backward(mb);
    idx += rank_.owns_lm_head_weight() ? 2 : 1;
    after_item(idx - 1);
  }
  const bool selective = rank_.selective_attention();
  const auto& mtp = rank_.layout.mtp_layers(stage, chunk);
  for (auto it = mtp.rbegin(); it != mtp.rend(); ++it) {
    emitter.mtp_backward(*it, mb, selective);
    after_item(idx++);
  }
  if (rank_.has_mtp_embedding(chunk)) after_item(idx++);
  const auto& ls = rank_.layout.layers(stage, chunk);
  const bool full = s.training.recompute == RecomputeGranularity::Full;
  const int recompute_n = full ? rank_.recomputed_layers_in_chunk(chunk) : 0;
  // Full recompute covers the first `recompute_n` layers of the chunk (Megatron's block method;
  // uniform with the default of all layers recomputes all of them).
  for (auto it = ls.rbegin(); it != ls.rend(); ++it) {
    const int local = static_cast<int>(it.base() - ls.begin()) - 1;  // index within the chunk
    if (full && local < recompute_n) emitter.forward(*it, mb, Phase::Recompute);
    emitter.backward(*it, mb, selective);
    after_item(idx++);
  }
  if (rank_.has_embedding(chunk)) {
    emitter.embedding_backward(mb);
    after_item(idx++);
  }
  if (sync_now) chunk_reduced_[chunk] = true;
}

// start_grad_sync of one chunk (align_grad_reduce): every bucket of the chunk at once (schedules.py).
// Without overlap_grad_reduce nothing happens here; finish_grad_sync reduces everything.
void BucketedDataParallel::start_chunk_grad_sync(int chunk) {
  if (!rank_.scenario.parallelism.overlap_grad_reduce || chunk_reduced_[chunk]) return;
  for (const GradBuffer& buf : buffers_.buffers())
    for (const auto& b : buf.buckets_by_chunk[static_cast<std::size_t>(chunk)]) reduce_bucket(buf, b.params, -1);
  chunk_reduced_[chunk] = true;
}

// start_param_sync of one chunk (align_param_gather): an async all-gather per bucket, in bucket
// order; the forward pre-hooks wait for them (_make_forward_pre_hook).
void BucketedDataParallel::start_chunk_param_sync(int chunk) {
  if (!overlapped_param_gather()) return;
  const auto& buffers = buffers_.buffers();
  for (std::size_t bi = 0; bi < buffers.size(); ++bi) {
    const GradBuffer& buf = buffers[bi];
    const auto& buckets = buf.buckets_by_chunk[static_cast<std::size_t>(chunk)];
    auto& handles = chunk_param_gathers_[bi][static_cast<std::size_t>(chunk)];
    handles.assign(buckets.size(), std::nullopt);
    for (std::size_t b = 0; b < buckets.size(); ++b)
      handles[b] =
          rank_.builder.collective({Phase::GradSync, -1, -1}, buf.reduction.stream, buf.op_name("param_allgather"),
                                   CollKind::AllGather, buf.reduction.group, param_gather_bytes(buckets[b]));
  }
}

void BucketedDataParallel::reduce_bucket(const GradBuffer& buffer, double params, int micro_batch) {
  const OpContext ctx{Phase::GradSync, -1, micro_batch};
  const double grad_bytes = settings_.grad_bytes;
  // start_grad_sync: NaN-check norm over the bucket and the 1/dp scaling (memory-bound), then an
  // async reduce-scatter (distributed optimizer) or all-reduce (plain DDP) over dp x cp, or over
  // expert-DP for the expert buffer (pre-scaled by 1/|dp x cp| like the dense one, DistributedDataParallel).
  const auto norm = rank_.builder.compute(ctx, buffer.op_name("bucket_norm_scale"),
                                          memory_kernel(KernelKind::Elementwise, params * grad_bytes * 3.0,
                                                        params * 2.0, rank_.scenario.training.precision));
  if (settings_.host_checks_for_nan) rank_.builder.host_wait({norm});
  const auto bytes = static_cast<std::int64_t>(params * grad_bytes);
  const bool rs = settings_.distributed_optimizer;
  pending_reductions_.push_back(rank_.builder.collective(
      ctx, buffer.reduction.stream, buffer.op_name(rs ? "grad_reduce_scatter" : "grad_all_reduce"),
      rs ? CollKind::ReduceScatter : CollKind::AllReduce, buffer.reduction.group, bytes));
}

void BucketedDataParallel::wait_for_reductions() {
  for (auto id : pending_reductions_) rank_.builder.wait(id);
}

void BucketedDataParallel::finish_grad_sync() {
  for (int c = 0; c < rank_.chunks; ++c)
    if (!chunk_reduced_[c])
      for (const GradBuffer& buf : buffers_.buffers())
        for (const auto& b : buf.buckets_by_chunk[static_cast<std::size_t>(c)]) reduce_bucket(buf, b.params, -1);
  wait_for_reductions();
}

namespace {

// Parameter tensors of a unit of the rank's parameters: a dense layer's as the model lays them out; an MoE layer's
// norms, attention projections and router, and its local experts' two or three matrices; one for the embedding, the
// final norm and the LM head.
int unit_tensors(const RankContext& rank, int layer, bool experts) {
  const ModelSpec& m = rank.scenario.model;
  if (layer < 0) return 1;
  if (experts) {
    const int local = std::max(1, m.moe.num_experts / std::max(1, rank.scenario.parallelism.expert));
    return local * (m.gated_mlp ? 3 : 2);
  }
  if (layer >= m.num_layers || is_moe_layer(m, layer)) return 5;
  return static_cast<int>(layer_param_tensors(m, layer).size());
}

}  // namespace

std::vector<double> BucketedDataParallel::optimizer_tensors(double local_total) const {
  std::vector<ParamUnit> units;
  for (const ChunkParamItems& chunk : rank_param_items(rank_)) {
    for (const ParamItem& item : chunk.dense) units.push_back({item.params, unit_tensors(rank_, item.layer, false)});
    for (const ParamItem& item : chunk.expert) units.push_back({item.params, unit_tensors(rank_, item.layer, true)});
  }
  OptimizerSharding sharding = OptimizerSharding::None;
  if (settings_.sharded_optimizer)
    sharding = rank_.scenario.parallelism.framework == Framework::FSDP && rank_.scenario.parallelism.fsdp_version == 2
                   ? OptimizerSharding::PerTensor
                   : OptimizerSharding::Flat;
  return local_optimizer_tensors(units, sharding, rank_.plan.data() * rank_.plan.context(), local_total);
}

void BucketedDataParallel::optimizer_step() {
  const OpContext ctx{Phase::Optimizer, -1, -1};
  const Precision p = rank_.scenario.training.precision;
  const bool shard = settings_.sharded_optimizer;
  const double shard_params = buffers_.optimizer_params(shard);
  rank_.builder.compute(
      ctx, "optimizer.grad_norm",
      memory_kernel(KernelKind::OptimizerStep, shard_params * kGradNormBytesPerElement, shard_params * 2, p));
  const auto norm =
      rank_.builder.sync_collective(ctx, Stream::DpComm, "optimizer.grad_norm_all_reduce", CollKind::AllReduce,
                                    shard ? rank_.communicators.world : rank_.communicators.model_parallel, 4);
  if (settings_.host_reads_grad_norm) rank_.builder.host_wait({norm});
  emit_optimizer_step(rank_.builder, ctx, rank_.scenario.training.optimizer,
                      rank_.scenario.training.optimizer_implementation, optimizer_tensors(shard_params), p);
  if (settings_.distributed_optimizer && !rank_.scenario.parallelism.overlap_param_gather) {
    for (const GradBuffer& buf : buffers_.buffers())
      for (int c = 0; c < rank_.chunks; ++c)
        for (const auto& b : buf.buckets_by_chunk[static_cast<std::size_t>(c)])
          rank_.builder.sync_collective(ctx, buf.reduction.stream, buf.op_name("param_allgather"), CollKind::AllGather,
                                        buf.reduction.group, param_gather_bytes(b));
  }
}

}  // namespace trainsim
