// Scenario -> Workload: one iteration's op program per simulated rank. The generator owns what every framework
// shares - the rank's communicators, the pipeline schedule with its p2p transfers, finalize_model_grads'
// reductions - and asks the rank's training framework (frameworks/training_framework.hpp) for everything around
// the layers: parameter gathers, gradient reductions, the optimizer step.
#include "workload/generator.hpp"

#include <algorithm>
#include <map>
#include <memory>

#include "core/check.hpp"
#include "core/error.hpp"
#include "workload/cuda_graphs.hpp"
#include "workload/frameworks/training_framework.hpp"
#include "workload/interleaved_schedule.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/layer_ops.hpp"
#include "workload/pipeline_schedule.hpp"
#include "workload/program_builder.hpp"
#include "workload/rank_context.hpp"
#include "workload/stage_layout.hpp"

namespace trainsim {

namespace {

class RankGenerator {
 public:
  RankGenerator(const Scenario& s, const TrainingFramework& framework, const ParallelPlan& plan,
                const StageLayout& layout, const LayerDims& dims, WorkloadBuilder& workload_builder, std::size_t index,
                int rank)
      : scenario_(s),
        framework_(framework),
        plan_(plan),
        workload_builder_(workload_builder),
        rank_builder_(workload_builder.rank_builder(index)),
        rank_(rank),
        pipeline_stage_(plan.coord_of(rank).pp),
        pipeline_stages_(plan.pipeline()),
        communicators_(create_communicators(layout, dims)),
        emitter_(rank_builder_, dims, communicators_.layer, s.parallelism.tp_comm_overlap),
        context_{s,
                 plan,
                 layout,
                 dims,
                 rank_builder_,
                 emitter_,
                 communicators_,
                 rank,
                 pipeline_stage_,
                 pipeline_stages_,
                 layout.chunks(),
                 s.micro_batches_per_iteration()},
        p2p_bytes_(static_cast<std::int64_t>(static_cast<double>(dims.s * dims.b * dims.h) *
                                             activation_bytes(s.training.precision) /
                                             static_cast<double>(dims.c * (dims.sp ? dims.t : 1)))) {
    if (s.training.recompute == RecomputeGranularity::Selective)
      emitter_.set_selective_recompute(s.training.recompute_modules);
  }

  // The iteration: the framework clears its gradients, the pipeline schedule runs every micro-batch's forward and
  // backward, the gradients are synchronised, the optimizer steps.
  void generate() {
    framework_rank_ = framework_.start_rank(context_);
    framework_rank_->zero_grad();
    run_schedule();
    framework_rank_->finish_grad_sync();
    finalize_model_grads();
    framework_rank_->optimizer_step();
    framework_rank_.reset();
  }

 private:
  // The rank's communicators, in the order Megatron's parallel_state.py creates them (the order fixes group ids).
  RankCommunicators create_communicators(const StageLayout& layout, const LayerDims& dims) {
    RankCommunicators c;
    WorkloadBuilder& wb = workload_builder_;
    const ParallelPlan& plan = plan_;
    const int rank = rank_, stage = pipeline_stage_, stages = pipeline_stages_;
    c.layer.tp = wb.group(GroupKind::TP, plan.group_members(GroupKind::TP, rank));
    c.layer.cp = wb.group(GroupKind::CP, plan.group_members(GroupKind::CP, rank));
    c.data = wb.group(GroupKind::DP, plan.group_members(GroupKind::DP, rank));
    c.world = wb.group(GroupKind::World, plan.group_members(GroupKind::World, rank));
    c.model_parallel = wb.group(GroupKind::ModelParallel, plan.group_members(GroupKind::ModelParallel, rank));
    const auto pp = plan.group_members(GroupKind::PP, rank);
    if (stage > 0) c.previous_stage = wb.group(GroupKind::PP, {pp[static_cast<std::size_t>(stage - 1)], rank});
    if (stage < stages - 1) c.next_stage = wb.group(GroupKind::PP, {rank, pp[static_cast<std::size_t>(stage + 1)]});
    if (stages > 1 && !scenario_.model.untie_embeddings && (stage == 0 || stage == stages - 1))
      c.embedding = wb.group(GroupKind::Embedding, plan.group_members(GroupKind::Embedding, rank));
    // MTP blocks embed the shifted tokens with a copy of the word embedding on their stage (gpt_model.py builds
    // self.embedding where pre_process or mtp_process); untied, its gradient is all-reduced with the first
    // stage's (finalize_model_grads' word-embedding all-reduce over the embedding group, which then holds the
    // MTP stage). Tied, the last stage's copy already is the embedding group's.
    int mtp_stage = -1;  // the pipeline stage holding the MTP blocks (-1: none)
    for (int st = 0; st < stages; ++st)
      if (layout.mtp_layers_on_stage(st) > 0) mtp_stage = st;
    if (stages > 1 && scenario_.model.untie_embeddings && mtp_stage > 0 && (stage == 0 || stage == mtp_stage))
      c.embedding = wb.group(GroupKind::Embedding, {pp[0], pp[static_cast<std::size_t>(mtp_stage)]});
    if (dims.moe.on) {  // the expert view's communicators (parallel_state.py): only those with more than one rank
      if (plan.expert() > 1) c.layer.ep = wb.group(GroupKind::EP, plan.group_members(GroupKind::EP, rank));
      if (plan.expert_tensor() > 1)
        c.layer.etp = wb.group(GroupKind::ExpertTP, plan.group_members(GroupKind::ExpertTP, rank));
      if (plan.expert() * plan.expert_tensor() > 1)
        c.layer.etp_ep = wb.group(GroupKind::ExpertTPxEP, plan.group_members(GroupKind::ExpertTPxEP, rank));
      c.expert_data = wb.group(GroupKind::ExpertDP, plan.group_members(GroupKind::ExpertDP, rank));
    }
    return c;
  }

  void run_schedule() {
    if (context_.interleaved()) {
      run_interleaved();
      return;
    }
    const auto steps = pipeline_schedule(schedule_kind(scenario_), pipeline_stages_, pipeline_stage_,
                                         context_.micro_batches, context_.chunks);
    for (const auto& st : steps) run_step(st);
  }

  void run_step(const PipelineStep& st) {
    const OpContext pctx{Phase::Other, -1, st.micro_batch};
    RankBuilder& rb = rank_builder_;
    const bool transfer = st.action != PipelineAction::Forward && st.action != PipelineAction::Backward;
    switch (st.action) {
      case PipelineAction::Forward: step(false, st.micro_batch, st.chunk); break;
      case PipelineAction::Backward: step(true, st.micro_batch, st.chunk); break;
      // Non-interleaved p2p: one batch_isend_irecv per helper, then cuda.synchronize (p2p_communication.py):
      // a blocking rendezvous with the neighbour.
      case PipelineAction::RecvForward:
        rb.sync_collective(pctx, Stream::PpComm, "pp.recv_forward", CollKind::SendRecv, *communicators_.previous_stage,
                           p2p_bytes_, previous_stage_rank());
        break;
      case PipelineAction::SendBackwardRecvForward:
        rb.sync_collective(pctx, Stream::PpComm, "pp.send_backward_recv_forward", CollKind::SendRecv,
                           *communicators_.previous_stage, p2p_bytes_);
        break;
      case PipelineAction::SendBackward:
        rb.sync_collective(pctx, Stream::PpComm, "pp.send_backward", CollKind::SendRecv, *communicators_.previous_stage,
                           p2p_bytes_, rank_);
        break;
      case PipelineAction::SendForward:
        rb.sync_collective(pctx, Stream::PpCommNext, "pp.send_forward", CollKind::SendRecv, *communicators_.next_stage,
                           p2p_bytes_, rank_);
        break;
      case PipelineAction::SendForwardRecvBackward:
        rb.sync_collective(pctx, Stream::PpCommNext, "pp.send_forward_recv_backward", CollKind::SendRecv,
                           *communicators_.next_stage, p2p_bytes_);
        break;
      case PipelineAction::RecvBackward:
        rb.sync_collective(pctx, Stream::PpCommNext, "pp.recv_backward", CollKind::SendRecv, *communicators_.next_stage,
                           p2p_bytes_, next_stage_rank());
        break;
    }
    if (transfer) framework_rank_->after_pipeline_transfer();
  }

  // One forward or backward step, recorded with the ops it issued (RankProgram::steps).
  void step(bool backward, int micro_batch, int chunk) {
    const auto first = static_cast<std::uint32_t>(rank_builder_.op_count());
    if (backward)
      framework_rank_->backward(micro_batch, chunk);
    else
      framework_rank_->forward(micro_batch, chunk);
    rank_builder_.record_step(
        {backward, micro_batch, chunk, first, static_cast<std::uint32_t>(rank_builder_.op_count())});
  }

  // ---- interleaved 1F1B (schedules.py, with_interleaving): the events interleaved_program records, as ops ----
  void run_interleaved() {
    std::vector<std::uint32_t> handle_ops;  // handle id -> the p2p op it names
    for (const auto& e :
         interleaved_program(pipeline_stages_, pipeline_stage_, context_.micro_batches, context_.chunks)) {
      switch (e.kind) {
        case InterleavedEvent::Kind::Forward: step(false, e.micro_batch, e.chunk); break;
        case InterleavedEvent::Kind::Backward: step(true, e.micro_batch, e.chunk); break;
        case InterleavedEvent::Kind::Post:
          TRAINSIM_CHECK(e.handle == static_cast<int>(handle_ops.size()), "interleaved schedule: handles out of order");
          handle_ops.push_back(post_p2p(e));
          break;
        case InterleavedEvent::Kind::Wait: rank_builder_.wait(handle_ops.at(static_cast<std::size_t>(e.handle))); break;
        case InterleavedEvent::Kind::GradSync: framework_rank_->start_chunk_grad_sync(e.chunk); break;
        case InterleavedEvent::Kind::ParamSync: framework_rank_->start_chunk_param_sync(e.chunk); break;
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
    return rank_builder_.collective(ctx, to_next ? Stream::PpCommNext : Stream::PpComm,
                                    kNames[static_cast<int>(e.direction)], CollKind::SendRecv, pair_group(e.peer),
                                    p2p_bytes_, sender);
  }

  // The other member of the pipeline pair with the previous / next stage.
  int peer_of(std::uint32_t pair) const {
    const auto& r = workload_builder_.group_ranks(pair);
    return r.front() == rank_ ? r.back() : r.front();
  }
  int previous_stage_rank() const { return peer_of(*communicators_.previous_stage); }
  int next_stage_rank() const { return peer_of(*communicators_.next_stage); }

  std::uint32_t pair_group(int peer_stage) {
    if (auto it = pair_groups_.find(peer_stage); it != pair_groups_.end()) return it->second;
    const auto pp = plan_.group_members(GroupKind::PP, rank_);
    std::vector<int> members{rank_, pp[static_cast<std::size_t>(peer_stage)]};
    std::sort(members.begin(), members.end());
    const auto id = workload_builder_.group(GroupKind::PP, members);
    pair_groups_.emplace(peer_stage, id);
    return id;
  }

  // finalize_model_grads after the framework's own reductions: the TP all-reduce of SP-tagged grads (norms,
  // row-parallel biases, routers, MLA down-projections) and the tied-embedding all-reduce between the first and
  // last stage (finalize_model_grads, _allreduce_word_embedding_grads).
  void finalize_model_grads() {
    const OpContext ctx{Phase::GradSync, -1, -1};
    const LayerDims& d = context_.dims;
    if (d.sp && d.t > 1) {
      double sp_params = 0;
      for (int c = 0; c < context_.chunks; ++c)
        for (const auto* ls :
             {&context_.layout.layers(pipeline_stage_, c), &context_.layout.mtp_layers(pipeline_stage_, c)})
          for (int l : *ls) sp_params += d.sp_params_by_layer[static_cast<std::size_t>(l)];
      rank_builder_.sync_collective(ctx, Stream::TpComm, "tp.ar.sequence_parallel_grads", CollKind::AllReduce,
                                    communicators_.layer.tp, static_cast<std::int64_t>(sp_params * 4.0));
    }
    if (communicators_.embedding)
      rank_builder_.sync_collective(
          ctx, Stream::DpComm, "embedding.grad_all_reduce", CollKind::AllReduce, *communicators_.embedding,
          static_cast<std::int64_t>(d.lm_head_params * framework_.grad_reduce_bytes(scenario_)));
  }

  const Scenario& scenario_;
  const TrainingFramework& framework_;
  const ParallelPlan& plan_;
  WorkloadBuilder& workload_builder_;
  RankBuilder rank_builder_;
  int rank_;
  int pipeline_stage_, pipeline_stages_;
  RankCommunicators communicators_;
  LayerEmitter emitter_;
  RankContext context_;
  std::int64_t p2p_bytes_ = 0;
  std::map<int, std::uint32_t> pair_groups_;  // interleaved: peer stage -> pair communicator
  std::unique_ptr<FrameworkRank> framework_rank_;
};

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
  const std::unique_ptr<TrainingFramework> framework = make_training_framework(p.framework);
  framework->validate(s);
  const ParallelPlan plan = parallel_plan_of(s);
  StageLayout layout(s);
  const LayerDims dims = LayerDims::of(s);
  const auto ranks = simulated_ranks(s, o);
  WorkloadBuilder wb(plan.world_size(), ranks);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (i > 0) wb.reserve_like(i, i - 1);
    RankGenerator g(s, *framework, plan, layout, dims, wb, i, ranks[i]);
    g.generate();
  }
  Workload wl = wb.finish();
  if (s.training.cuda_graphs) capture_layers_in_cuda_graphs(wl, s.model.moe.enabled() && !s.model.moe.capacity_factor);
  const std::int64_t per_timeline = o.per_rank ? 1 : static_cast<std::int64_t>(p.tensor) * p.context * p.data;
  for (auto& r : wl.ranks) r.represents = per_timeline;
  return wl;
}

}  // namespace trainsim
