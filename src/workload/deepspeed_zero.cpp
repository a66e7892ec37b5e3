#include "workload/deepspeed_zero.hpp"

#include <algorithm>
#include <cmath>
#include <utility>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/optimizer_step.hpp"

namespace trainsim {

namespace {

// ZeRO-3 runs its optimizer per sub-group of at most sub_group_size partition elements (zero/config.py, code default).
constexpr double kSubGroupSize = 1e9;

}  // namespace

DeepSpeedZero::DeepSpeedZero(const Scenario& s, const DeepSpeedRank& rank, RankBuilder& rb, LayerEmitter& le,
                             std::function<void(int mb)> data_broadcast)
    : s_(s), r_(rank), rb_(rb), le_(le), broadcast_(std::move(data_broadcast)) {
  const ParallelSpec& p = s.parallelism;
  stage_ = p.zero_stage;
  if (stage_ < 1 || stage_ > 3)
    throw Error("DeepSpeedZero: zero_stage " + std::to_string(stage_) + " is not 1, 2 or 3");
  overlap_ = p.deepspeed.overlap_comm.value_or(stage_ == 3);  // DeepSpeed's validator default (zero/config.py)
  // lp parameters and the communication dtype are the training dtype: bf16/fp16 2 B, fp32 4 B (engine.py).
  lp_bytes_ = comm_bytes_ = activation_bytes(s.training.precision);
  params_ = rank_params(s.model, p.tensor, r_.layers, r_.first_stage, r_.last_stage, r_.own_lm_head);
  for (std::size_t i = 0; i < params_.modules.size(); ++i)
    module_ids_[{params_.modules[i].layer, params_.modules[i].name}] = static_cast<int>(i);
  if (stage_ == 3) {
    std::vector<bool> recomputed(r_.layers.size(), false);
    for (std::size_t i = 0; i < recomputed.size() && static_cast<int>(i) < r_.recomputed_layers; ++i)
      recomputed[i] = true;
    const DeepSpeedSpec& ds = p.deepspeed;
    visits_ = zero3_visits(params_, recomputed);
    plan_ = plan_zero3(
        zero3_trace(params_, visits_, ds.stage3_param_persistence_threshold),
        Zero3Config{ds.stage3_prefetch_bucket_size, ds.stage3_max_live_parameters, ds.stage3_max_reuse_distance});
    gather_elements_.assign(params_.modules.size(), 0);
    for (const DsTensor& t : params_.tensors)
      if (!persistent(t, ds.stage3_param_persistence_threshold))
        gather_elements_[static_cast<std::size_t>(t.module)] += padded(t.numel);
  }
  le_.set_module_hook([this](int layer, const char* module, bool backward) { on_module(layer, module, backward); });
}

DeepSpeedZero::~DeepSpeedZero() { le_.set_module_hook({}); }

double DeepSpeedZero::padded(double numel) const {
  const double n = static_cast<double>(r_.dp_size);
  return std::ceil(numel / n) * n;
}

// ---- model walk ----

void DeepSpeedZero::forward(int mb) {
  mb_ = mb;
  in_backward_ = false;
  visit_ = 0;  // reset_step: the prefetch queue is rebuilt every forward (partitioned_param_coordinator.py)
  batch_ops_.assign(plan_.batches.size(), 0);
  if (r_.first_stage) {
    broadcast_(mb);
    fetch(params_.module_of(-1, "embedding"), false, -1);
    fetch(params_.module_of(-1, "position_embedding"), false, -1);
    le_.embedding_forward(mb);
  }
  for (int layer : r_.layers) le_.forward(layer, mb, Phase::Forward);
  if (r_.last_stage) {
    if (!r_.first_stage) broadcast_(mb);
    fetch(params_.module_of(-1, "final_norm"), false, -1);
    fetch(head_module(), false, -1);
    le_.lm_head_forward(mb);
  }
}

void DeepSpeedZero::backward(int mb) {
  mb_ = mb;
  in_backward_ = true;
  // ZeRO-2/3 reduce every micro-batch; ZeRO-1 only on the boundary, and during backward only with overlap_comm
  // (its hooks exist only then, create_reduce_and_remove_grad_hooks).
  reducing_ = stage_ >= 2 || (overlap_ && mb == r_.micro_batches - 1);
  if (reducing_) set_order(autograd_order());
  pending_.clear();
  if (r_.last_stage) {
    fetch(head_module(), true, -1);
    fetch(params_.module_of(-1, "final_norm"), true, -1);
    le_.lm_head_backward(mb);
    // A tied LM head's gradient accumulates into the embedding's, which is ready only at the end.
    if (const int own = params_.module_of(-1, "lm_head"); own >= 0) pending_.push_back(own);
    pending_.push_back(params_.module_of(-1, "final_norm"));
  }
  for (std::size_t i = r_.layers.size(); i-- > 0;) {
    const int layer = r_.layers[i];
    if (static_cast<int>(i) < r_.recomputed_layers) le_.forward(layer, mb, Phase::Recompute);
    le_.backward(layer, mb, r_.selective_recompute);
  }
  grads_ready();
  if (r_.first_stage) {
    const int pos = params_.module_of(-1, "position_embedding"), emb = params_.module_of(-1, "embedding");
    fetch(pos, true, -1);
    fetch(emb, true, -1);
    le_.embedding_backward(mb);
    if (pos >= 0) pending_.push_back(pos);
    pending_.push_back(emb);
    grads_ready();
  }
  TRAINSIM_CHECK(stage_ != 3 || visit_ == visits_.size(),
                 "DeepSpeedZero: " + std::to_string(visits_.size() - visit_) + " ZeRO-3 module visits were not made");
  backward_epilogue();
  in_backward_ = false;
}

int DeepSpeedZero::head_module() const {
  const int own = params_.module_of(-1, "lm_head");
  return own >= 0 ? own : params_.module_of(-1, "embedding");  // tied: the embedding's weight
}

void DeepSpeedZero::on_module(int layer, const char* module, bool backward) {
  grads_ready();  // the previous module's backward is done
  const auto it = module_ids_.find({layer, module});
  if (it == module_ids_.end()) return;  // e.g. pre_mlp_norm of a parallel block: no such parameters
  fetch(it->second, backward, layer);
  if (backward) pending_.push_back(it->second);
}

// ---- ZeRO-3 parameter fetch (fetch_sub_module): on-demand all-gather, wait, prefetch, then the module's compute ----

void DeepSpeedZero::fetch(int module, bool backward, int layer) {
  if (stage_ != 3 || module < 0) return;
  TRAINSIM_CHECK(visit_ < visits_.size() && visits_[visit_].module == module && visits_[visit_].backward == backward,
                 "DeepSpeedZero: module '" + params_.modules[static_cast<std::size_t>(module)].name + "' of layer " +
                     std::to_string(layer) + " visited out of the ZeRO-3 trace order");
  const Zero3Visit& v = plan_.visits[visit_++];
  const OpContext ctx{in_backward_ ? Phase::Backward : Phase::Forward, layer, mb_};
  const auto gather = [&](int batch, const char* name) {
    double elements = 0;
    for (int m : plan_.batches[static_cast<std::size_t>(batch)].modules)
      elements += gather_elements_[static_cast<std::size_t>(m)];
    batch_ops_[static_cast<std::size_t>(batch)] = all_gather(ctx, name, elements);
  };
  if (v.on_demand_batch >= 0) gather(v.on_demand_batch, "zero3.allgather");
  if (v.wait_batch >= 0) rb_.wait(batch_ops_[static_cast<std::size_t>(v.wait_batch)]);
  if (v.prefetch_batch >= 0) gather(v.prefetch_batch, "zero3.prefetch_allgather");
}

std::uint32_t DeepSpeedZero::all_gather(const OpContext& ctx, const char* name, double gather_elements) {
  // all_gather_coalesced: one all_gather_into_tensor of N x sum ceil(numel/N) lp elements on the allgather stream;
  // without overlap_comm that stream is the compute stream itself (stage3.py).
  const auto op = rb_.collective(ctx, Stream::DpComm, name, CollKind::AllGather, r_.dp,
                                 static_cast<std::int64_t>(gather_elements * lp_bytes_));
  if (!overlap_) rb_.wait(op);
  return op;
}

// ---- gradient buckets ----

std::vector<int> DeepSpeedZero::autograd_order() const {
  // Reverse construction order: the LM head's gradient first, the embedding's last (backward hook order).
  std::vector<int> order;
  for (std::size_t i = params_.tensors.size(); i-- > 0;) order.push_back(static_cast<int>(i));
  return order;
}

void DeepSpeedZero::set_order(std::vector<int> order) {
  order_ = std::move(order);
  std::vector<double> numels;
  numels.reserve(order_.size());
  for (int t : order_) numels.push_back(params_.tensors[static_cast<std::size_t>(t)].numel);
  buckets_ = greedy_buckets(numels, s_.parallelism.deepspeed.reduce_bucket_size);
  next_ = 0;
  bucket_ = 0;
  bucket_padded_ = 0;
}

void DeepSpeedZero::grads_ready() {
  for (int m : pending_) {
    const auto& tensors = params_.modules[static_cast<std::size_t>(m)].tensors;
    if (reducing_)
      for (auto it = tensors.rbegin(); it != tensors.rend(); ++it) arrive(*it);
  }
  pending_.clear();
}

void DeepSpeedZero::arrive(int tensor) {
  TRAINSIM_CHECK(next_ < order_.size() && order_[next_] == tensor,
                 "DeepSpeedZero: gradient of tensor " + std::to_string(tensor) + " arrived out of reduction order");
  // The bucket closes when the next gradient would overflow it (greedy_buckets).
  if (static_cast<int>(next_) > buckets_[bucket_].last) flush_bucket();
  const DsTensor& t = params_.tensors[static_cast<std::size_t>(tensor)];
  // ZeRO-1/2 copy each gradient into the ipg buffer on the compute stream (contiguous_gradients); a tensor larger
  // than the bucket is reduced from its own .grad. ZeRO-3's copy runs on the reduce stream, which the IR has no
  // kernels for (docs/zero-and-fsdp.md).
  if (stage_ < 3 && t.numel <= s_.parallelism.deepspeed.reduce_bucket_size)
    rb_.compute({Phase::GradSync, -1, mb_}, "zero.grad_to_ipg_buffer",
                memory_kernel(KernelKind::Elementwise, 2.0 * t.numel * lp_bytes_, 0, s_.training.precision));
  bucket_padded_ += padded(t.numel);
  ++next_;
}

void DeepSpeedZero::flush_bucket() {
  if (stage_ == 3)
    flush_reduce_scatter(bucket_padded_);
  else
    flush_all_reduce(buckets_[bucket_].elements);
  ++bucket_;
  bucket_padded_ = 0;
}

void DeepSpeedZero::flush_all_reduce(double elements) {
  const OpContext ctx{Phase::GradSync, -1, mb_};
  const Precision p = s_.training.precision;
  // overlap_comm: compute.wait_stream(reduction_stream) before the new bucket is queued, i.e. the compute stream
  // waits for the previous bucket's all-reduce and its copies (stage_1_and_2.py).
  if (overlap_ && last_all_reduce_) {
    rb_.wait(*last_all_reduce_);
    copy_owned(last_all_reduce_elements_);
    last_all_reduce_.reset();
  }
  // average_tensor: divide by N in place, then allreduce_bucket's flatten copy (stage_1_and_2.py).
  rb_.compute(ctx, "zero.bucket_scale",
              memory_kernel(KernelKind::Elementwise, 2.0 * elements * comm_bytes_, elements, p));
  rb_.compute(ctx, "zero.bucket_flatten", memory_kernel(KernelKind::Elementwise, 2.0 * elements * comm_bytes_, 0, p));
  const auto bytes = static_cast<std::int64_t>(elements * comm_bytes_);
  if (overlap_) {
    last_all_reduce_ = rb_.collective(ctx, Stream::DpComm, "zero.grad_all_reduce", CollKind::AllReduce, r_.dp, bytes);
    last_all_reduce_elements_ = elements;
    return;
  }
  rb_.sync_collective(ctx, Stream::DpComm, "zero.grad_all_reduce", CollKind::AllReduce, r_.dp, bytes);
  copy_owned(elements);
}

void DeepSpeedZero::copy_owned(double elements) {
  // Each rank copies back the slices it owns (~1/N of the bucket) and copies them into grads_in_partition.
  const double owned = elements / static_cast<double>(r_.dp_size);
  rb_.compute({Phase::GradSync, -1, mb_}, "zero.copy_owned_grads",
              memory_kernel(KernelKind::Elementwise, 4.0 * owned * comm_bytes_, 0, s_.training.precision));
}

void DeepSpeedZero::flush_reduce_scatter(double padded_elements) {
  const OpContext ctx{Phase::GradSync, -1, mb_};
  // More than max_param_reduce_events = 2 outstanding flushes: the CPU synchronizes on the oldest (stage3.py).
  if (reduce_scatters_.size() > 2) {
    rb_.wait(reduce_scatters_.front());
    rb_.host_wait({reduce_scatters_.front()});
    reduce_scatters_.pop_front();
  }
  const auto op = rb_.collective(ctx, Stream::DpComm, "zero3.reduce_scatter", CollKind::ReduceScatter, r_.dp,
                                 static_cast<std::int64_t>(padded_elements * comm_bytes_));
  if (!overlap_) rb_.wait(op);
  reduce_scatters_.push_back(op);
}

void DeepSpeedZero::backward_epilogue() {
  if (!reducing_) return;
  TRAINSIM_CHECK(next_ == order_.size(),
                 "DeepSpeedZero: " + std::to_string(order_.size() - next_) + " gradients never reached the buckets");
  if (bucket_ < buckets_.size()) flush_bucket();
  if (stage_ == 3) {
    // reduce_and_partition_stream.synchronize(): the CPU (so every later kernel) waits for every flush.
    for (auto op : reduce_scatters_) rb_.wait(op);
    rb_.host_wait({reduce_scatters_.begin(), reduce_scatters_.end()});
    reduce_scatters_.clear();
  } else if (last_all_reduce_) {
    // overlap_comm: get_accelerator().synchronize() at the end of the epilogue.
    rb_.wait(*last_all_reduce_);
    rb_.host_synchronize();
    copy_owned(last_all_reduce_elements_);
    last_all_reduce_.reset();
  }
  // ZeRO-2 accumulates the reduced partition in lp from the second micro-batch on (stage_1_and_2.py).
  if (stage_ == 2 && mb_ > 0) {
    const double part = params_.total() / static_cast<double>(r_.dp_size);
    rb_.compute({Phase::GradSync, -1, mb_}, "zero.partition_grad_add",
                memory_kernel(KernelKind::Elementwise, 3.0 * part * lp_bytes_, part, s_.training.precision));
  }
  reducing_ = false;
}

void DeepSpeedZero::finish_backward() {
  if (stage_ != 1 || overlap_) return;
  // ZeRO-1 without overlap_comm: engine.allreduce_gradients -> reduce_gradients walks every parameter in
  // param-group order (weight-decay group, then the no-decay group; each in construction order) through the same
  // bucketing, synchronously, after the boundary micro-batch's backward (stage_1_and_2.py).
  mb_ = -1;
  std::vector<int> order;
  for (bool vector : {false, true})
    for (std::size_t i = 0; i < params_.tensors.size(); ++i)
      if (params_.tensors[i].vector == vector) order.push_back(static_cast<int>(i));
  set_order(std::move(order));
  reducing_ = true;
  for (std::size_t i = 0; i < order_.size(); ++i) arrive(order_[i]);
  backward_epilogue();
}

// ---- optimizer step ----

void DeepSpeedZero::optimizer_step() {
  if (stage_ == 3)
    step_zero3();
  else
    step_zero12();
}

void DeepSpeedZero::scalar_all_reduce(const OpContext& ctx, const char* name, std::int64_t bytes) {
  rb_.sync_collective(ctx, Stream::DpComm, name, CollKind::AllReduce, r_.dp, bytes);
  if (r_.model_parallel)  // _model_parallel_all_reduce over tp x pp
    rb_.sync_collective(ctx, Stream::TpComm, std::string(name) + ".model_parallel", CollKind::AllReduce, r_.mp, bytes);
}

void DeepSpeedZero::step_kernels(const OpContext& ctx, const std::vector<double>& partitions) {
  // Each partition is stepped on its own (a sub-group's optimizer.step at a time, stage3.py / stage_1_and_2.py).
  for (double part : partitions)
    emit_optimizer_step(rb_, ctx, s_.training.optimizer, s_.training.optimizer_implementation, {part},
                        s_.training.precision);
}

void DeepSpeedZero::overflow_check(const OpContext& ctx, double shard_elements) {
  // fp16 only (bf16 has no loss scaler): local inf/nan scan, then all_reduce(MAX) of one uint8 + .item().
  if (s_.training.precision != Precision::FP16) return;
  rb_.compute(
      ctx, "zero.overflow_check",
      memory_kernel(KernelKind::Elementwise, shard_elements * lp_bytes_, shard_elements, s_.training.precision));
  scalar_all_reduce(ctx, "zero.overflow_all_reduce", 1);
  rb_.host_synchronize();  // .item() on the reduced flag: the host reads it back before it goes on
}

namespace {
// Megatron's two parameter groups: weights decay, biases and norm gains do not.
std::vector<std::vector<int>> param_groups(const DsParams& params) {
  std::vector<std::vector<int>> groups(2);
  for (std::size_t i = 0; i < params.tensors.size(); ++i)
    groups[params.tensors[i].vector ? 1 : 0].push_back(static_cast<int>(i));
  std::erase_if(groups, [](const std::vector<int>& g) { return g.empty(); });
  return groups;
}
}  // namespace

void DeepSpeedZero::step_zero12() {
  const OpContext ctx{Phase::Optimizer, -1, -1};
  const Precision p = s_.training.precision;
  const double n = static_cast<double>(r_.dp_size);
  // Each group's flat lp buffer is padded to a multiple of 2N and split into N equal partitions
  // (DeepSpeedZeroOptimizer.__init__).
  std::vector<double> flat;
  double shard = 0;
  for (const auto& g : param_groups(params_)) {
    double numel = 0;
    for (int t : g) numel += params_.tensors[static_cast<std::size_t>(t)].numel;
    flat.push_back(std::ceil(numel / (2 * n)) * 2 * n);
    shard += flat.back() / n;
  }
  overflow_check(ctx, shard);
  for (double f : flat) {  // get_grad_norm_direct per group: local sum of squares, AR(SUM) of one fp32
    rb_.compute(ctx, "optimizer.grad_norm",
                memory_kernel(KernelKind::OptimizerStep, f / n * kGradNormBytesPerElement, f / n * 2, p));
    scalar_all_reduce(ctx, "zero.grad_norm_all_reduce", 4);
  }
  // The optimizer sees one flat fp32 partition per parameter group (single_partition_of_fp32_groups).
  std::vector<double> partitions;
  for (double f : flat) partitions.push_back(f / n);
  step_kernels(ctx, partitions);
  // all_gather_into_tensor_dp_groups: one all-gather of the whole flat lp buffer per group, on the compute stream.
  for (double f : flat)
    rb_.sync_collective(ctx, Stream::DpComm, "zero.param_allgather", CollKind::AllGather, r_.dp,
                        static_cast<std::int64_t>(f * lp_bytes_));
}

void DeepSpeedZero::step_zero3() {
  const OpContext ctx{Phase::Optimizer, -1, -1};
  const Precision p = s_.training.precision;
  const double n = static_cast<double>(r_.dp_size);
  // Every tensor is partitioned on its own: ceil(numel / N) elements per rank (partition_parameters.py); each
  // parameter group is split into sub-groups of at most sub_group_size partition elements.
  std::vector<double> sub_groups;
  double shard = 0;
  for (const auto& g : param_groups(params_)) {
    double part = 0;
    for (int t : g) part += padded(params_.tensors[static_cast<std::size_t>(t)].numel) / n;
    const double k = std::max(1.0, std::ceil(part / kSubGroupSize));
    for (int i = 0; i < static_cast<int>(k); ++i) sub_groups.push_back(part / k);
    shard += part;
  }
  overflow_check(ctx, shard);
  for (double part : sub_groups) {
    rb_.compute(ctx, "optimizer.grad_norm",
                memory_kernel(KernelKind::OptimizerStep, part * kGradNormBytesPerElement, part * 2, p));
    scalar_all_reduce(ctx, "zero.grad_norm_all_reduce", 4);
  }
  step_kernels(ctx, sub_groups);
  // _post_step: one async all-gather per persistent parameter, then a device synchronize (stage3.py).
  std::vector<std::uint32_t> gathers;
  for (const DsTensor& t : params_.tensors)
    if (persistent(t, s_.parallelism.deepspeed.stage3_param_persistence_threshold))
      gathers.push_back(rb_.collective(ctx, Stream::DpComm, "zero3.persistent_allgather", CollKind::AllGather, r_.dp,
                                       static_cast<std::int64_t>(padded(t.numel) * lp_bytes_)));
  for (auto op : gathers) rb_.wait(op);
  rb_.host_synchronize();
}

}  // namespace trainsim
