#include "workload/generator.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/cuda_graphs.hpp"
#include "workload/deepspeed_zero.hpp"
#include "workload/grad_buckets.hpp"
#include "workload/interleaved_schedule.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/program_builder.hpp"
#include "workload/recompute.hpp"
#include "workload/stage_layout.hpp"

namespace trainsim {

namespace {

bool sharded_dp(const Scenario& s) {  // FSDP FULL_SHARD: parameters sharded over DP, gathered per layer
  return s.parallelism.framework == Framework::FSDP && s.parallelism.zero_stage == 3;
}

// DeepSpeed ZeRO-1/2/3 walk the model and emit their buckets, gathers and step themselves (deepspeed_zero.cpp);
// DeepSpeed without ZeRO stays on the plain data-parallel path.
bool deepspeed_zero(const Scenario& s) {
  return s.parallelism.framework == Framework::DeepSpeed && s.parallelism.zero_stage >= 1;
}

// Bytes per element of gradients in the DP reduction: Megatron accumulates and reduces in fp32 with
// bf16 (grad_reduce_in_fp32, param_and_grad_buffer.py); fp16 recipes reduce in fp16; PyTorch FSDP reduces in
// fp32, as the common configurations set its MixedPrecision (Composer's mixed_precision DEFAULT: param_dtype =
// the autocast dtype, reduce_dtype = float32, composer/distributed/mixed_precision.py get_mixed_precision;
// torchtitan's mixed_precision_reduce default float32): the gradient is cast up before the reduce-scatter
// (FSDP1 _runtime_utils.py::_post_backward_hook / _reduce_grad); DeepSpeed reduces in the training dtype.
double grad_bytes(const Scenario& s) {
  if (s.parallelism.framework == Framework::FSDP) return 4.0;
  if (s.parallelism.framework != Framework::Megatron) return activation_bytes(s.training.precision);
  return s.training.precision == Precision::FP16 ? 2.0 : 4.0;
}

ScheduleKind schedule_kind(const Scenario& s) {
  if (s.parallelism.pipeline == 1) return ScheduleKind::NoPipelining;
  if (s.parallelism.virtual_pipeline > 1) return ScheduleKind::Interleaved;
  return s.parallelism.schedule == PipelineSchedule::GPipe ? ScheduleKind::GPipe : ScheduleKind::OneFOneB;
}

// One of Megatron's DDP gradient buffers on a rank: its items and buckets per model chunk, the group
// that reduces it and the parameter all-gathers in flight (param_and_grad_buffer.py, distrib_optimizer.py).
struct GradBuffer {
  const char* prefix;    // "dp" (dense, dp x cp) or "edp" (routed experts, expert-DP)
  std::uint32_t group;
  Stream stream;
  double shard_ranks;    // the distributed optimizer shards this buffer over this many ranks
  std::vector<std::vector<ParamItem>> items_by_chunk;
  std::vector<std::vector<GradBucket>> buckets_by_chunk;
  double local_params;
  std::optional<std::uint32_t> param_gather_inflight;
  std::vector<std::vector<std::optional<std::uint32_t>>> chunk_param_gather;  // interleaved: per chunk, per bucket
  std::string name(const char* what) const { return std::string(prefix) + "." + what; }
};

class RankGenerator {
 public:
  RankGenerator(const Scenario& s, const ParallelPlan& plan, const StageLayout& layout, const LayerDims& dims,
                WorkloadBuilder& wb, std::size_t index, int rank)
      : s_(s), plan_(plan), layout_(layout), d_(dims), wb_(wb), rb_(wb.rank_builder(index)), rank_(rank),
        coord_(plan.coord_of(rank)), stage_(coord_.pp), p_(plan.pipeline()), v_(layout.chunks()),
        m_(s.micro_batches_per_iteration()) {
    groups_.tp = wb_.group(GroupKind::TP, plan.group_members(GroupKind::TP, rank));
    groups_.cp = wb_.group(GroupKind::CP, plan.group_members(GroupKind::CP, rank));
    dp_ = wb_.group(GroupKind::DP, plan.group_members(GroupKind::DP, rank));
    world_ = wb_.group(GroupKind::World, plan.group_members(GroupKind::World, rank));
    mp_ = wb_.group(GroupKind::ModelParallel, plan.group_members(GroupKind::ModelParallel, rank));
    const auto pp = plan.group_members(GroupKind::PP, rank);
    if (stage_ > 0) prev_ = wb_.group(GroupKind::PP, {pp[static_cast<std::size_t>(stage_ - 1)], rank});
    if (stage_ < p_ - 1) next_ = wb_.group(GroupKind::PP, {rank, pp[static_cast<std::size_t>(stage_ + 1)]});
    if (p_ > 1 && !s.model.untie_embeddings && (stage_ == 0 || stage_ == p_ - 1))
      embedding_ = wb_.group(GroupKind::Embedding, plan.group_members(GroupKind::Embedding, rank));
    // MTP blocks embed the shifted tokens with a copy of the word embedding on their stage (gpt_model.py builds
    // self.embedding where pre_process or mtp_process); untied, its gradient is all-reduced with the first
    // stage's (finalize_model_grads' word-embedding all-reduce over the embedding group, which then holds the
    // MTP stage). Tied, the last stage's copy already is the embedding group's.
    mtp_stage_ = -1;
    for (int st = 0; st < p_; ++st)
      if (layout.mtp_layers_on_stage(st) > 0) mtp_stage_ = st;
    if (p_ > 1 && s.model.untie_embeddings && mtp_stage_ > 0 && (stage_ == 0 || stage_ == mtp_stage_)) {
      const auto pipeline = plan.group_members(GroupKind::PP, rank);
      embedding_ = wb_.group(GroupKind::Embedding, {pipeline[0], pipeline[static_cast<std::size_t>(mtp_stage_)]});
    }
    if (d_.moe.on) {  // the expert view's communicators (parallel_state.py): only those with more than one rank
      if (plan.expert() > 1) groups_.ep = wb_.group(GroupKind::EP, plan.group_members(GroupKind::EP, rank));
      if (plan.expert_tensor() > 1)
        groups_.etp = wb_.group(GroupKind::ExpertTP, plan.group_members(GroupKind::ExpertTP, rank));
      if (plan.expert() * plan.expert_tensor() > 1)
        groups_.etp_ep = wb_.group(GroupKind::ExpertTPxEP, plan.group_members(GroupKind::ExpertTPxEP, rank));
      edp_ = wb_.group(GroupKind::ExpertDP, plan.group_members(GroupKind::ExpertDP, rank));
    }
    p2p_bytes_ = static_cast<std::int64_t>(static_cast<double>(d_.s * d_.b * d_.h) * activation_bytes(s.training.precision) /
                                           static_cast<double>(d_.c * (d_.sp ? d_.t : 1)));
    build_param_items();
  }

  void generate() {
    LayerEmitter le(rb_, d_, groups_, s_.parallelism.tp_comm_overlap);
    if (s_.training.recompute == RecomputeGranularity::Selective) le.set_selective_recompute(s_.training.recompute_modules);
    emitter_ = &le;
    if (deepspeed_zero(s_))
      ds_ = std::make_unique<DeepSpeedZero>(s_, deepspeed_rank(), rb_, le, [this](int mb) { data_broadcast(mb); });
    zero_grad_buffers();
    if (interleaved()) {
      run_interleaved();
    } else {
      const auto steps = pipeline_schedule(schedule_kind(s_), p_, stage_, m_, v_);
      for (const auto& st : steps) run_step(st);
    }
    finish_grad_sync();
    optimizer_step();
    ds_.reset();
    emitter_ = nullptr;
  }

 private:
  // ---- parameters and buckets ----
  bool has_embedding(int chunk) const { return stage_ == 0 && chunk == 0; }
  bool has_lm_head(int chunk) const { return stage_ == p_ - 1 && chunk == v_ - 1; }
  // The MTP blocks' own embedding copy lives on their stage unless that is the first (which has the embedding).
  bool has_mtp_embedding(int chunk) const { return stage_ != 0 && !layout_.mtp_layers(stage_, chunk).empty(); }
  bool owns_lm_head_weight() const { return s_.model.untie_embeddings || p_ > 1; }

  // Megatron keeps dense and expert parameters in separate DDP buffers (keyed by is-expert-parallel), reduced
  // over dp x cp and over expert-DP respectively, with buckets and handles of their own
  // (param_and_grad_buffer.py). Both buffers list the same items in backprop order (an item's expert part is 0
  // outside MoE layers), so one item index drives the bucket firing of both.
  void build_param_items() {
    GradBuffer dense{"dp", dp_, Stream::DpComm, static_cast<double>(plan_.data()) * plan_.context(), {}, {}, 0, {}, {}};
    GradBuffer expert{"edp", edp_, Stream::ExpertDpComm, static_cast<double>(plan_.expert_data()), {}, {}, 0, {}, {}};
    dense.items_by_chunk.assign(static_cast<std::size_t>(v_), {});
    expert.items_by_chunk.assign(static_cast<std::size_t>(v_), {});
    for (int c = v_ - 1; c >= 0; --c) {
      auto& items = dense.items_by_chunk[static_cast<std::size_t>(c)];
      auto& experts = expert.items_by_chunk[static_cast<std::size_t>(c)];
      auto add = [&](int layer, double dense_params, double expert_params) {
        items.push_back({layer, dense_params});
        experts.push_back({layer, expert_params});
      };
      if (has_lm_head(c)) {
        if (owns_lm_head_weight()) add(-1, d_.lm_head_params, 0);
        add(-1, d_.final_norm_params, 0);
      }
      const auto& mtp = layout_.mtp_layers(stage_, c);
      for (auto it = mtp.rbegin(); it != mtp.rend(); ++it) {
        const auto l = static_cast<std::size_t>(*it);
        add(*it, d_.dense_params_by_layer[l], d_.expert_params_by_layer[l]);
      }
      if (has_mtp_embedding(c)) add(-1, d_.lm_head_params, 0);  // word embedding copy, V/t x h
      const auto& ls = layout_.layers(stage_, c);
      for (auto it = ls.rbegin(); it != ls.rend(); ++it) {
        const auto l = static_cast<std::size_t>(*it);
        add(*it, d_.dense_params_by_layer[l], d_.expert_params_by_layer[l]);
      }
      if (has_embedding(c)) add(-1, d_.embedding_params, 0);
      for (const auto& i : items) dense.local_params += i.params;
      for (const auto& i : experts) expert.local_params += i.params;
    }
    const bool split = s_.parallelism.overlap_grad_reduce && stage_ == 0;
    double bucket = 0;
    if (split) {
      const double dp_cp = static_cast<double>(plan_.data() * plan_.context());
      bucket = s_.parallelism.grad_bucket_mb ? *s_.parallelism.grad_bucket_mb * 1024.0 * 1024.0 / grad_bytes(s_)
                                            : std::max(40e6, 1e6 * dp_cp);
    }
    buffers_.push_back(std::move(dense));
    if (expert.local_params > 0) buffers_.push_back(std::move(expert));
    for (GradBuffer& buf : buffers_) {
      buf.buckets_by_chunk.assign(static_cast<std::size_t>(v_), {});
      for (int c = 0; c < v_; ++c) {
        auto buckets = make_buckets(buf.items_by_chunk[static_cast<std::size_t>(c)], c == 0 ? bucket : 0);
        // A bucket of only non-expert items holds nothing in the expert buffer: Megatron has no such bucket.
        std::erase_if(buckets, [](const GradBucket& b) { return b.params <= 0; });
        buf.buckets_by_chunk[static_cast<std::size_t>(c)] = std::move(buckets);
      }
      local_params_ += buf.local_params;
    }
  }

  bool distributed_optimizer() const {
    return s_.parallelism.framework == Framework::Megatron && s_.parallelism.zero_stage >= 1;
  }
  // Interleaved 1F1B also means Megatron's align_param_gather and align_grad_reduce: the schedule
  // launches whole chunks' parameter all-gathers and gradient reductions (schedules.py), and the forward
  // pre-hooks only wait for the all-gathers (DistributedDataParallel._make_forward_pre_hook).
  bool interleaved() const { return schedule_kind(s_) == ScheduleKind::Interleaved; }
  bool overlapped_param_gather() const { return distributed_optimizer() && s_.parallelism.overlap_param_gather; }

  DeepSpeedRank deepspeed_rank() const {
    DeepSpeedRank r;
    r.dp = dp_;
    r.dp_size = plan_.data() * plan_.context();
    r.mp = mp_;
    r.model_parallel = d_.t * p_ > 1;
    r.micro_batches = m_;
    r.layers = layout_.layers(stage_, 0);  // DeepSpeed has no interleaved schedule (check_interleaved)
    r.recomputed_layers = s_.training.recompute == RecomputeGranularity::Full ? recomputed_layers_in_chunk(0) : 0;
    r.selective_recompute = selective_attention();
    r.first_stage = stage_ == 0;
    r.last_stage = stage_ == p_ - 1;
    r.own_lm_head = owns_lm_head_weight();
    return r;
  }

  // ---- iteration pieces ----
  void zero_grad_buffers() {
    if (ds_) return;  // DeepSpeed's zero_grad sets the gradients to None: no memset
    // One memset per DDP buffer (zero_grad_buffer).
    for (const GradBuffer& buf : buffers_)
      rb_.compute({Phase::Optimizer, -1, -1}, &buf == &buffers_.front() ? "zero_grad_buffer" : "zero_grad_buffer.expert",
                  memory_kernel(KernelKind::Memset, buf.local_params * grad_bytes(s_), 0, s_.training.precision));
    // With overlap_param_gather the distributed optimizer launches the all-gather of the first
    // bucket accessed in forward here, before forward compute starts; the forward pre-hooks chain
    // the rest (Megatron distrib_optimizer zero_grad / DDP forward pre-hook). Dense and expert buffers
    // chain separately.
    if (overlapped_param_gather() && !interleaved())
      for (GradBuffer& buf : buffers_)
        if (!buf.buckets_by_chunk.empty() && !buf.buckets_by_chunk[0].empty())
          buf.param_gather_inflight = rb_.collective({Phase::GradSync, -1, -1}, buf.stream, buf.name("param_allgather"),
                                                     CollKind::AllGather, buf.group,
                                                     param_gather_bytes(buf.buckets_by_chunk[0].back().params));
  }

  void run_step(const PipelineStep& st) {
    const OpContext pctx{Phase::Other, -1, st.micro_batch};
    switch (st.action) {
      case PipelineAction::Forward: forward_step(st.micro_batch, st.chunk); break;
      case PipelineAction::Backward: backward_step(st.micro_batch, st.chunk); break;
      // Non-interleaved p2p: one batch_isend_irecv per helper, then cuda.synchronize (p2p_communication.py):
      // a blocking rendezvous with the neighbour.
      case PipelineAction::RecvForward:
        rb_.sync_collective(pctx, Stream::PpComm, "pp.recv_forward", CollKind::SendRecv, *prev_, p2p_bytes_, prev_rank());
        break;
      case PipelineAction::SendBackwardRecvForward:
        rb_.sync_collective(pctx, Stream::PpComm, "pp.send_backward_recv_forward", CollKind::SendRecv, *prev_, p2p_bytes_);
        break;
      case PipelineAction::SendBackward:
        rb_.sync_collective(pctx, Stream::PpComm, "pp.send_backward", CollKind::SendRecv, *prev_, p2p_bytes_, rank_);
        break;
      case PipelineAction::SendForward:
        rb_.sync_collective(pctx, Stream::PpCommNext, "pp.send_forward", CollKind::SendRecv, *next_, p2p_bytes_, rank_);
        break;
      case PipelineAction::SendForwardRecvBackward:
        rb_.sync_collective(pctx, Stream::PpCommNext, "pp.send_forward_recv_backward", CollKind::SendRecv, *next_, p2p_bytes_);
        break;
      case PipelineAction::RecvBackward:
        rb_.sync_collective(pctx, Stream::PpCommNext, "pp.recv_backward", CollKind::SendRecv, *next_, p2p_bytes_, next_rank());
        break;
    }
  }

  // ---- interleaved 1F1B (schedules.py, with_interleaving): the events interleaved_program records, as ops ----
  void run_interleaved() {
    std::vector<std::uint32_t> handle_ops;  // handle id -> the p2p op it names
    for (GradBuffer& buf : buffers_) {
      buf.chunk_param_gather.assign(static_cast<std::size_t>(v_), {});
      for (int c = 0; c < v_; ++c)
        buf.chunk_param_gather[static_cast<std::size_t>(c)].assign(buf.buckets_by_chunk[static_cast<std::size_t>(c)].size(),
                                                                   std::nullopt);
    }
    for (const auto& e : interleaved_program(p_, stage_, m_, v_)) {
      switch (e.kind) {
        case InterleavedEvent::Kind::Forward: forward_step(e.micro_batch, e.chunk); break;
        case InterleavedEvent::Kind::Backward: backward_step(e.micro_batch, e.chunk); break;
        case InterleavedEvent::Kind::Post:
          TRAINSIM_CHECK(e.handle == static_cast<int>(handle_ops.size()), "interleaved schedule: handles out of order");
          handle_ops.push_back(post_p2p(e));
          break;
        case InterleavedEvent::Kind::Wait: rb_.wait(handle_ops.at(static_cast<std::size_t>(e.handle))); break;
        case InterleavedEvent::Kind::GradSync: start_chunk_grad_sync(e.chunk); break;
        case InterleavedEvent::Kind::ParamSync: start_chunk_param_sync(e.chunk); break;
      }
    }
  }

  // One isend or irecv: a two-member rendezvous on the pair's communicator, on the PP stream. Both
  // sides issue the pair's transfers in the same order (interleaved_program pairs them FIFO, as
  // NCCL matches sends and receives between two ranks), so the n-th call on the pair matches.
  std::uint32_t post_p2p(const InterleavedEvent& e) {
    static constexpr const char* kNames[] = {"pp.isend_next", "pp.irecv_prev", "pp.isend_prev", "pp.irecv_next"};
    const OpContext ctx{Phase::Other, -1, e.micro_batch};
    const bool to_next = e.direction == P2PDirection::SendNext || e.direction == P2PDirection::RecvNext;
    const bool sends = e.direction == P2PDirection::SendNext || e.direction == P2PDirection::SendPrev;
    const int sender = sends ? rank_ : plan_.group_members(GroupKind::PP, rank_)[static_cast<std::size_t>(e.peer)];
    return rb_.collective(ctx, to_next ? Stream::PpCommNext : Stream::PpComm, kNames[static_cast<int>(e.direction)], CollKind::SendRecv,
                          pair_group(e.peer), p2p_bytes_, sender);
  }

  // The other member of the pipeline pair with the previous / next stage.
  int peer_of(std::uint32_t pair) const {
    const auto& r = wb_.group_ranks(pair);
    return r.front() == rank_ ? r.back() : r.front();
  }
  int prev_rank() const { return peer_of(*prev_); }
  int next_rank() const { return peer_of(*next_); }

  std::uint32_t pair_group(int peer_stage) {
    if (auto it = pair_groups_.find(peer_stage); it != pair_groups_.end()) return it->second;
    const auto pp = plan_.group_members(GroupKind::PP, rank_);
    std::vector<int> members{rank_, pp[static_cast<std::size_t>(peer_stage)]};
    std::sort(members.begin(), members.end());
    const auto id = wb_.group(GroupKind::PP, members);
    pair_groups_.emplace(peer_stage, id);
    return id;
  }

  // start_grad_sync of one chunk (align_grad_reduce): every bucket of the chunk at once (schedules.py).
  // Without overlap_grad_reduce nothing happens here; finish_grad_sync reduces everything.
  void start_chunk_grad_sync(int chunk) {
    if (!s_.parallelism.overlap_grad_reduce || chunk_reduced_[chunk]) return;
    for (const GradBuffer& buf : buffers_)
      for (const auto& b : buf.buckets_by_chunk[static_cast<std::size_t>(chunk)]) reduce_bucket(buf, b.params, -1);
    chunk_reduced_[chunk] = true;
  }

  // start_param_sync of one chunk (align_param_gather): an async all-gather per bucket, in bucket
  // order; the forward pre-hooks wait for them (_make_forward_pre_hook).
  void start_chunk_param_sync(int chunk) {
    if (!overlapped_param_gather()) return;
    for (GradBuffer& buf : buffers_) {
      const auto& buckets = buf.buckets_by_chunk[static_cast<std::size_t>(chunk)];
      auto& handles = buf.chunk_param_gather[static_cast<std::size_t>(chunk)];
      handles.assign(buckets.size(), std::nullopt);
      for (std::size_t b = 0; b < buckets.size(); ++b)
        handles[b] = rb_.collective({Phase::GradSync, -1, -1}, buf.stream, buf.name("param_allgather"), CollKind::AllGather,
                                    buf.group, param_gather_bytes(buckets[b].params));
    }
  }

  void forward_step(int mb, int chunk) {
    const bool gather_params = distributed_optimizer() && s_.parallelism.overlap_param_gather &&
                               !first_forward_done_[chunk];
    if (ds_) {
      ds_->forward(mb);
      return;
    }
    if (sharded_dp(s_)) {
      sharded_forward(mb, chunk);
      return;
    }
    const int n = static_cast<int>(buffers_.front().items_by_chunk[static_cast<std::size_t>(chunk)].size());
    // Forward pre-hooks (_make_forward_pre_hook): the param all-gather of bucket k is waited for by the first
    // module owning one of its params; the next bucket's all-gather is dispatched right after. Each
    // buffer (dense, expert) has its own chain; forward order = reverse bucket order.
    std::vector<int> next_bucket;
    for (const GradBuffer& buf : buffers_)
      next_bucket.push_back(static_cast<int>(buf.buckets_by_chunk[static_cast<std::size_t>(chunk)].size()) - 1);
    auto before_item = [&](int item_index) {
      if (!gather_params) return;
      for (std::size_t bi = 0; bi < buffers_.size(); ++bi) {
        GradBuffer& buf = buffers_[bi];
        const auto& buckets = buf.buckets_by_chunk[static_cast<std::size_t>(chunk)];
        std::optional<std::uint32_t>& inflight = buf.param_gather_inflight;
        int& next = next_bucket[bi];
        auto dispatch = [&](int b) {
          const OpContext ctx{Phase::GradSync, -1, mb};
          inflight = rb_.collective(ctx, buf.stream, buf.name("param_allgather"), CollKind::AllGather, buf.group,
                                    param_gather_bytes(buckets[static_cast<std::size_t>(b)].params));
        };
        while (next >= 0 && buckets[static_cast<std::size_t>(next)].last_item >= item_index) {
          if (interleaved()) {  // aligned: dispatched by the schedule; dispatch now only if it was not
            auto& h = buf.chunk_param_gather[static_cast<std::size_t>(chunk)][static_cast<std::size_t>(next)];
            if (!h) {
              dispatch(next);
              h = inflight;
              inflight.reset();
            }
            rb_.wait(*h);
            h.reset();
            --next;
            continue;
          }
          if (!inflight) dispatch(next);
          rb_.wait(*inflight);
          inflight.reset();
          --next;
          if (next >= 0) dispatch(next);
        }
      }
    };
    // Items are in backprop order; walk them in forward order.
    int idx = n - 1;
    if (has_embedding(chunk)) {
      before_item(idx--);
      data_broadcast(mb);
      emitter_->embedding_forward(mb);
    }
    for (int layer : layout_.layers(stage_, chunk)) {
      before_item(idx--);
      emitter_->forward(layer, mb, Phase::Forward);
    }
    if (has_mtp_embedding(chunk)) before_item(idx--);
    for (int layer : layout_.mtp_layers(stage_, chunk)) {
      before_item(idx--);
      emitter_->mtp_forward(layer, mb);
    }
    if (has_lm_head(chunk)) {
      while (idx >= 0) before_item(idx--);
      if (stage_ != 0) data_broadcast(mb);
      emitter_->lm_head_forward(mb);
    }
    if (gather_params) first_forward_done_[chunk] = true;
  }

  // TP-rank 0 loads the batch and broadcasts it over TP (get_batch_on_this_tp_rank): tokens and position ids on the
  // first stage, labels and loss mask on the last (int64/fp32, 8 B per token each).
  void data_broadcast(int mb) {
    if (d_.t == 1) return;
    rb_.sync_collective({Phase::Forward, -1, mb}, Stream::TpComm, "tp.broadcast_batch", CollKind::Broadcast, groups_.tp,
                        16 * d_.s * d_.b);
  }

  void backward_step(int mb, int chunk) {
    if (ds_) {
      ds_->backward(mb);
      return;
    }
    if (sharded_dp(s_)) {
      sharded_backward(mb, chunk);
      return;
    }
    // Gradient reduction overlapped with the last micro-batch's backward: a bucket fires right
    // after the backward of its last parameter in backprop order (register_grad_ready), in each buffer. The
    // interleaved schedule launches whole chunks instead (start_chunk_grad_sync).
    const bool sync_now = s_.parallelism.overlap_grad_reduce && mb == m_ - 1 && !interleaved();
    std::vector<std::size_t> next_bucket(buffers_.size(), 0);
    auto after_item = [&](int item_index) {
      if (!sync_now) return;
      for (std::size_t bi = 0; bi < buffers_.size(); ++bi) {
        const auto& buckets = buffers_[bi].buckets_by_chunk[static_cast<std::size_t>(chunk)];
        std::size_t& next = next_bucket[bi];
        while (next < buckets.size() && buckets[next].last_item <= item_index)
          reduce_bucket(buffers_[bi], buckets[next++].params, mb);
      }
    };
    int idx = 0;
    if (has_lm_head(chunk)) {
      emitter_->lm_head_backward(mb);
      idx += owns_lm_head_weight() ? 2 : 1;
      after_item(idx - 1);
    }
    const bool selective = selective_attention();
    const auto& mtp = layout_.mtp_layers(stage_, chunk);
    for (auto it = mtp.rbegin(); it != mtp.rend(); ++it) {
      emitter_->mtp_backward(*it, mb, selective);
      after_item(idx++);
    }
    if (has_mtp_embedding(chunk)) after_item(idx++);
    const auto& ls = layout_.layers(stage_, chunk);
    const bool full = s_.training.recompute == RecomputeGranularity::Full;
    const int recompute_n = full ? recomputed_layers_in_chunk(chunk) : 0;
    // Full recompute covers the first `recompute_n` layers of the chunk (Megatron's block method;
    // uniform with the default of all layers recomputes all of them).
    for (auto it = ls.rbegin(); it != ls.rend(); ++it) {
      const int local = static_cast<int>(it.base() - ls.begin()) - 1;  // index within the chunk
      if (full && local < recompute_n) emitter_->forward(*it, mb, Phase::Recompute);
      emitter_->backward(*it, mb, selective);
      after_item(idx++);
    }
    if (has_embedding(chunk)) {
      emitter_->embedding_backward(mb);
      after_item(idx++);
    }
    if (sync_now) chunk_reduced_[chunk] = true;
  }

  // The stage's recompute_num_layers (scenario.md: per stage) spread evenly over its chunks. Each
  // model chunk is its own TransformerBlock in Megatron and the block method runs per block (recompute.py
  // checkpointed_forward), so Megatron recomputes the same number of layers in every chunk; without
  // interleaving this is the stage's count.
  int recomputed_layers_in_chunk(int chunk) const {
    const int n = recomputed_layers_on_stage(s_, stage_, layout_.layers_on_stage(stage_));
    // A pipeline_layout may give the chunks of a stage different layer counts: a chunk recomputes at most its own.
    return std::min(n / v_ + (chunk < n % v_ ? 1 : 0), static_cast<int>(layout_.layers(stage_, chunk).size()));
  }

  // Selective recompute re-runs core attention when recompute_modules has core_attn (the default).
  bool selective_attention() const {
    return s_.training.recompute == RecomputeGranularity::Selective && s_.training.recompute_modules.core_attn;
  }

  std::int64_t param_gather_bytes(double params) const {
    // The all-gather output is the whole bucket's bf16 parameters (2 B/param; fp32 models 4).
    return static_cast<std::int64_t>(params * activation_bytes(s_.training.precision));
  }

  void reduce_bucket(const GradBuffer& buf, double params, int mb) {
    const OpContext ctx{Phase::GradSync, -1, mb};
    // start_grad_sync: NaN-check norm over the bucket and the 1/dp scaling (memory-bound), then an
    // async reduce-scatter (distributed optimizer) or all-reduce (plain DDP) over dp x cp, or over
    // expert-DP for the expert buffer (pre-scaled by 1/|dp x cp| like the dense one, DistributedDataParallel).
    rb_.compute(ctx, buf.name("bucket_norm_scale"),
                memory_kernel(KernelKind::Elementwise, params * grad_bytes(s_) * 3.0, params * 2.0, s_.training.precision));
    const auto bytes = static_cast<std::int64_t>(params * grad_bytes(s_));
    const bool rs = distributed_optimizer();
    pending_dp_.push_back(rb_.collective(ctx, buf.stream, buf.name(rs ? "grad_reduce_scatter" : "grad_all_reduce"),
                                         rs ? CollKind::ReduceScatter : CollKind::AllReduce, buf.group, bytes));
  }

  void finish_grad_sync() {
    if (ds_) {
      ds_->finish_backward();
    } else if (!sharded_dp(s_)) {
      for (int c = 0; c < v_; ++c)
        if (!chunk_reduced_[c])
          for (const GradBuffer& buf : buffers_)
            for (const auto& b : buf.buckets_by_chunk[static_cast<std::size_t>(c)]) reduce_bucket(buf, b.params, -1);
    }
    // finalize_model_grads: wait every DP handle, then the TP all-reduce of SP-tagged grads (norms,
    // row-parallel biases, routers, MLA down-projections) and the tied-embedding all-reduce between
    // the first and last stage (finalize_model_grads, _allreduce_word_embedding_grads).
    for (auto id : pending_dp_) rb_.wait(id);
    const OpContext ctx{Phase::GradSync, -1, -1};
    if (d_.sp && d_.t > 1) {
      double sp_params = 0;
      for (int c = 0; c < v_; ++c)
        for (const auto* ls : {&layout_.layers(stage_, c), &layout_.mtp_layers(stage_, c)})
          for (int l : *ls) sp_params += d_.sp_params_by_layer[static_cast<std::size_t>(l)];
      rb_.sync_collective(ctx, Stream::TpComm, "tp.ar.sequence_parallel_grads", CollKind::AllReduce, groups_.tp,
                          static_cast<std::int64_t>(sp_params * 4.0));
    }
    if (embedding_)
      rb_.sync_collective(ctx, Stream::DpComm, "embedding.grad_all_reduce", CollKind::AllReduce, *embedding_,
                          static_cast<std::int64_t>(d_.lm_head_params * grad_bytes(s_)));
  }

  void optimizer_step() {
    if (ds_) {
      ds_->optimizer_step();
      return;
    }
    const OpContext ctx{Phase::Optimizer, -1, -1};
    const Precision p = s_.training.precision;
    const bool shard = distributed_optimizer() || sharded_dp(s_) ||
                       (s_.parallelism.framework != Framework::Megatron && s_.parallelism.zero_stage >= 1);
    // Each buffer's shard: dense over dp x cp, expert over expert-DP (distrib_optimizer.py).
    double shard_params = 0;
    for (const GradBuffer& buf : buffers_) shard_params += shard ? buf.local_params / buf.shard_ranks : buf.local_params;
    if (s_.parallelism.framework == Framework::Megatron)  // rerun state machine: world all-reduce of one int
      rb_.sync_collective(ctx, Stream::DpComm, "world.rerun_check", CollKind::AllReduce, world_, 4);
    rb_.compute(ctx, "optimizer.grad_norm",
                memory_kernel(KernelKind::OptimizerStep, shard_params * kGradNormBytesPerElement, shard_params * 2, p));
    rb_.sync_collective(ctx, Stream::DpComm, "optimizer.grad_norm_all_reduce", CollKind::AllReduce,
                        shard ? world_ : mp_, 4);
    rb_.compute(ctx, "optimizer.adam",
                memory_kernel(KernelKind::OptimizerStep, shard_params * kAdamBytesPerElement, shard_params * 12, p));
    if (distributed_optimizer() && !s_.parallelism.overlap_param_gather) {
      for (const GradBuffer& buf : buffers_)
        for (int c = 0; c < v_; ++c)
          for (const auto& b : buf.buckets_by_chunk[static_cast<std::size_t>(c)])
            rb_.sync_collective(ctx, buf.stream, buf.name("param_allgather"), CollKind::AllGather, buf.group,
                                param_gather_bytes(b.params));
    }
    if (s_.parallelism.framework == Framework::Megatron && (d_.t > 1 || p_ > 1))
      rb_.sync_collective(ctx, Stream::TpComm, "model_parallel.update_ok_grad_norm", CollKind::AllReduce, mp_, 8);
  }

  // ---- FSDP / ZeRO-3: per-layer parameter all-gather (forward and backward) and gradient
  // reduce-scatter, each prefetched one layer ahead so it overlaps the neighbouring layer's compute.
  std::int64_t layer_gather_bytes(double params) const {
    return static_cast<std::int64_t>(params * activation_bytes(s_.training.precision));
  }

  void sharded_forward(int mb, int chunk) {
    const OpContext ctx{Phase::Forward, -1, mb};
    const auto& ls = layout_.layers(stage_, chunk);
    // The root unit (embedding, final norm, LM head) is gathered first and kept for the step.
    const double root = d_.embedding_params + d_.final_norm_params + (owns_lm_head_weight() ? d_.lm_head_params : 0);
    auto root_ag = rb_.collective(ctx, Stream::DpComm, "fsdp.allgather.root", CollKind::AllGather, dp_,
                                  layer_gather_bytes(root));
    rb_.wait(root_ag);
    std::optional<std::uint32_t> next;
    if (!ls.empty())
      next = rb_.collective({Phase::Forward, ls[0], mb}, Stream::DpComm, "fsdp.allgather.fwd", CollKind::AllGather, dp_,
                            layer_gather_bytes(d_.layer_params));
    if (has_embedding(chunk)) emitter_->embedding_forward(mb);
    for (std::size_t i = 0; i < ls.size(); ++i) {
      rb_.wait(*next);
      if (i + 1 < ls.size())
        next = rb_.collective({Phase::Forward, ls[i + 1], mb}, Stream::DpComm, "fsdp.allgather.fwd", CollKind::AllGather,
                              dp_, layer_gather_bytes(d_.layer_params));
      emitter_->forward(ls[i], mb, Phase::Forward);
    }
    if (has_lm_head(chunk)) emitter_->lm_head_forward(mb);
  }

  // FSDP's post-backward cast of a unit's unsharded gradient to the reduce dtype (a new full-size tensor: read
  // the training dtype, write fp32), on the post-backward stream before the reduce-scatter; none when the
  // gradient is already fp32.
  void cast_grad_for_reduce(const OpContext& ctx, double params) {
    const double from = activation_bytes(s_.training.precision);
    if (from >= grad_bytes(s_)) return;
    rb_.compute(ctx, "fsdp.grad_cast",
                memory_kernel(KernelKind::Elementwise, params * (from + grad_bytes(s_)), params, s_.training.precision));
  }

  void sharded_backward(int mb, int chunk) {
    const auto& ls = layout_.layers(stage_, chunk);
    const bool full = s_.training.recompute == RecomputeGranularity::Full;
    const bool selective = selective_attention();
    const int recompute_n = full ? recomputed_layers_on_stage(s_, stage_, layout_.layers_on_stage(stage_)) : 0;
    if (has_lm_head(chunk)) emitter_->lm_head_backward(mb);
    const auto gather = [&](int layer) {
      return rb_.collective({Phase::Backward, layer, mb}, Stream::DpComm, "fsdp.allgather.bwd", CollKind::AllGather, dp_,
                            layer_gather_bytes(d_.layer_params));
    };
    std::optional<std::uint32_t> next;
    if (!ls.empty()) next = gather(ls.back());
    const auto grad = static_cast<std::int64_t>(d_.layer_params * grad_bytes(s_));
    for (int i = static_cast<int>(ls.size()) - 1; i >= 0; --i) {
      const int layer = ls[static_cast<std::size_t>(i)];
      rb_.wait(*next);
      if (i > 0) next = gather(ls[static_cast<std::size_t>(i - 1)]);  // BACKWARD_PRE prefetch
      if (full && i < recompute_n) emitter_->forward(layer, mb, Phase::Recompute);
      emitter_->backward(layer, mb, selective);
      cast_grad_for_reduce({Phase::Backward, layer, mb}, d_.layer_params);
      pending_dp_.push_back(rb_.collective({Phase::GradSync, layer, mb}, Stream::DpComm, "fsdp.reduce_scatter",
                                           CollKind::ReduceScatter, dp_, grad));
    }
    if (has_embedding(chunk)) emitter_->embedding_backward(mb);
    if (mb == m_ - 1) {
      const double root = d_.embedding_params + d_.final_norm_params + (owns_lm_head_weight() ? d_.lm_head_params : 0);
      cast_grad_for_reduce({Phase::Backward, -1, mb}, root);
      pending_dp_.push_back(rb_.collective({Phase::GradSync, -1, mb}, Stream::DpComm, "fsdp.reduce_scatter.root",
                                           CollKind::ReduceScatter, dp_, static_cast<std::int64_t>(root * grad_bytes(s_))));
    }
  }

  const Scenario& s_;
  const ParallelPlan& plan_;
  const StageLayout& layout_;
  const LayerDims& d_;
  WorkloadBuilder& wb_;
  RankBuilder rb_;
  int rank_;
  RankCoord coord_;
  int stage_, p_, v_, m_;
  LayerGroups groups_;
  std::uint32_t dp_ = 0, world_ = 0, mp_ = 0, edp_ = 0;
  std::optional<std::uint32_t> prev_, next_, embedding_;
  int mtp_stage_ = -1;  // the pipeline stage holding the MTP blocks (-1: none)
  std::int64_t p2p_bytes_ = 0;
  double local_params_ = 0;  // dense + expert parameters on this rank
  std::vector<GradBuffer> buffers_;  // [0] dense; [1] expert, when the stage holds routed experts
  std::map<int, bool> first_forward_done_, chunk_reduced_;
  std::vector<std::uint32_t> pending_dp_;
  std::map<int, std::uint32_t> pair_groups_;  // interleaved: peer stage -> pair communicator
  LayerEmitter* emitter_ = nullptr;
  std::unique_ptr<DeepSpeedZero> ds_;
};

// What Megatron rejects for the interleaved schedule (schedules.py, arguments.py).
void check_interleaved(const Scenario& s) {
  const auto& p = s.parallelism;
  const std::string key = "parallelism.virtual_pipeline";
  const std::string v = "virtual_pipeline " + std::to_string(p.virtual_pipeline);
  if (p.framework != Framework::Megatron)
    throw ScenarioError(s.file, key,
                        v + " selects Megatron-LM's interleaved 1F1B schedule; framework " + to_string(p.framework) +
                            " has no interleaved schedule (use virtual_pipeline 1)");
  const int m = s.micro_batches_per_iteration();
  if (const auto why = interleaved_micro_batch_problem(p.pipeline, m); !why.empty())
    throw ScenarioError(s.file, key,
                        v + " (interleaved 1F1B) " + why +
                            ": micro-batches per iteration = training.global_batch_size " +
                            std::to_string(s.training.global_batch_size) + " / (training.micro_batch_size " +
                            std::to_string(s.training.micro_batch_size) + " x data " + std::to_string(p.data) +
                            ") = " + std::to_string(m) + " with pipeline " + std::to_string(p.pipeline) +
                            " (Megatron's microbatch_group_size_per_vp_stage defaults to the pipeline size)");
}

}  // namespace

ParallelPlan parallel_plan_of(const Scenario& s) {
  const auto& p = s.parallelism;
  return ParallelPlan(p.tensor, p.context, p.data, p.pipeline, s.model.moe.enabled() ? p.expert : 1,
                      s.model.moe.enabled() ? p.expert_tensor : 0);
}

std::vector<int> simulated_ranks(const Scenario& s, const WorkloadOptions& o) {
  const auto& p = s.parallelism;
  ParallelPlan plan(p.tensor, p.context, p.data, p.pipeline);
  std::vector<int> out;
  if (o.per_rank) {
    for (int r = 0; r < plan.world_size(); ++r) out.push_back(r);
  } else {
    for (int stage = 0; stage < p.pipeline; ++stage) out.push_back(plan.rank_of({0, 0, 0, stage}));
  }
  return out;
}

Workload generate_workload(const Scenario& s, const WorkloadOptions& o) {
  if (!s.has_training_job) throw Error(s.file + ": no training job to simulate (this is a collective benchmark)");
  const auto& p = s.parallelism;
  if (s.model.moe.enabled() && p.framework != Framework::Megatron)  // validation rejects it; a direct caller too
    throw ScenarioError(s.file, "parallelism.framework", "model.moe is simulated with framework megatron only");
  if (p.virtual_pipeline > 1) check_interleaved(s);
  const ParallelPlan plan = parallel_plan_of(s);
  StageLayout layout(s);
  const LayerDims dims = LayerDims::of(s);
  const auto ranks = simulated_ranks(s, o);
  WorkloadBuilder wb(plan.world_size(), ranks);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    RankGenerator g(s, plan, layout, dims, wb, i, ranks[i]);
    g.generate();
  }
  Workload wl = wb.finish();
  if (s.training.cuda_graphs) capture_layers_in_cuda_graphs(wl, s.model.moe.enabled() && !s.model.moe.capacity_factor);
  const std::int64_t per_timeline = o.per_rank ? 1 : static_cast<std::int64_t>(p.tensor) * p.context * p.data;
  for (auto& r : wl.ranks) r.represents = per_timeline;
  return wl;
}

}  // namespace trainsim
