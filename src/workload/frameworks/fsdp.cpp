// PyTorch FSDP. FULL_SHARD (zero_stage 3): parameters sharded over dp x cp, each layer's gathered before its forward
// and again before its backward, its gradient reduce-scattered right after, each gather prefetched one layer ahead
// so it overlaps the neighbouring layer's compute; the embedding a unit of its own like a layer (gathered again for
// a tied LM head, and then kept through the backward), the root unit (final norm, LM head) gathered first and kept
// until its backward; every micro-batch reduce-scatters and ends waiting for its reductions (FSDP's final callback).
// SHARD_GRAD_OP (zero_stage 2) gathers each layer once, before its forward, and keeps it until its backward has
// produced the gradient (no gather in backward); the gradient is reduce-scattered per layer as with FULL_SHARD (FSDP1
// _runtime_utils.py: _should_free_in_backward; reference zero-fsdp.md §5: AG Psi + RS Psi per micro-batch; Composer
// syncs every micro-batch under FSDP). With pipeline parallelism SHARD_GRAD_OP, and NO_SHARD (zero_stage 0 or 1)
// always, reduce through the bucketed data-parallel path (bucketed_data_parallel.hpp).
#include <memory>
#include <optional>

#include "workload/frameworks/bucketed_data_parallel.hpp"
#include "workload/frameworks/frameworks.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/recompute.hpp"

namespace trainsim {

namespace {

// FULL_SHARD and SHARD_GRAD_OP: they differ only in whether a layer is gathered again for its backward.
class ShardedRank final : public BucketedDataParallel {
 public:
  ShardedRank(const RankContext& rank, DataParallelSettings settings, bool gather_in_backward)
      : BucketedDataParallel(rank, settings), gather_in_backward_(gather_in_backward) {}

  void forward(int micro_batch, int chunk) override {
    const int mb = micro_batch;
    RankBuilder& builder = rank_.builder;
    const OpContext ctx{Phase::Forward, -1, mb};
    const auto& ls = rank_.layout.layers(rank_.pipeline_stage, chunk);
    // The root unit is gathered at the root's pre-forward and kept until its backward (never resharded after
    // forward).
    auto root_ag = builder.collective(ctx, Stream::DpComm, "fsdp.allgather.root", CollKind::AllGather, dp(),
                                      layer_gather_bytes(root_params()));
    builder.wait(root_ag);
    copy_out(ctx, root_params());
    std::optional<std::uint32_t> embedding_ag;
    if (rank_.has_embedding(chunk)) embedding_ag = gather_embedding(ctx);
    std::optional<std::uint32_t> next;
    if (!ls.empty())
      next = builder.collective({Phase::Forward, ls[0], mb}, Stream::DpComm, "fsdp.allgather.fwd", CollKind::AllGather,
                                dp(), layer_gather_bytes(rank_.dims.layer_params));
    if (embedding_ag) {
      builder.wait(*embedding_ag);
      copy_out(ctx, embedding_params());
      rank_.emitter.embedding_forward(mb);
    }
    for (std::size_t i = 0; i < ls.size(); ++i) {
      builder.wait(*next);
      copy_out({Phase::Forward, ls[i], mb}, rank_.dims.layer_params);
      if (i + 1 < ls.size())
        next = builder.collective({Phase::Forward, ls[i + 1], mb}, Stream::DpComm, "fsdp.allgather.fwd",
                                  CollKind::AllGather, dp(), layer_gather_bytes(rank_.dims.layer_params));
      rank_.emitter.forward(ls[i], mb, Phase::Forward);
    }
    if (!rank_.has_lm_head(chunk)) return;
    // A tied LM head is the embedding module called again (MPT's wte(x, unembed=True)): its unit, resharded after
    // the embedding's forward under FULL_SHARD, is gathered a second time.
    if (tied_head() && gather_in_backward_) {
      const auto again = gather_embedding(ctx);
      builder.wait(again);
      copy_out(ctx, embedding_params());
    }
    rank_.emitter.lm_head_forward(mb);
  }

  void backward(int micro_batch, int chunk) override {
    const int mb = micro_batch;
    const Scenario& s = rank_.scenario;
    RankBuilder& builder = rank_.builder;
    LayerEmitter& emitter = rank_.emitter;
    const double layer_params = rank_.dims.layer_params;
    const auto& ls = rank_.layout.layers(rank_.pipeline_stage, chunk);
    const bool full = s.training.recompute == RecomputeGranularity::Full;
    const bool selective = rank_.selective_attention();
    const int recompute_n =
        full ? recomputed_layers_on_stage(s, rank_.pipeline_stage, rank_.layout.layers_on_stage(rank_.pipeline_stage))
             : 0;
    const OpContext ctx{Phase::Backward, -1, mb};
    // The embedding unit's backward gather: for a tied head before the head's backward (the unit stays gathered
    // until the embedding's gradient is in, its post-backward hook firing once for both uses); otherwise prefetched
    // one unit ahead like a layer's.
    std::optional<std::uint32_t> embedding_ag;
    const bool embedding_here = rank_.has_embedding(chunk) && gather_in_backward_;
    if (rank_.has_lm_head(chunk)) {
      if (tied_head() && embedding_here) {
        embedding_ag = gather_embedding(ctx);
        builder.wait(*embedding_ag);
        copy_out(ctx, embedding_params());
        embedding_ag.reset();
      }
      emitter.lm_head_backward(mb);
      reduce(-1, mb, "fsdp.reduce_scatter.root", root_params());  // the root's post-backward hook
    }
    const auto gather = [&](int layer) -> std::optional<std::uint32_t> {
      if (!gather_in_backward_) return std::nullopt;  // SHARD_GRAD_OP: still gathered from the forward
      return builder.collective({Phase::Backward, layer, mb}, Stream::DpComm, "fsdp.allgather.bwd", CollKind::AllGather,
                                dp(), layer_gather_bytes(layer_params));
    };
    std::optional<std::uint32_t> next;
    if (!ls.empty()) next = gather(ls.back());
    for (int i = static_cast<int>(ls.size()) - 1; i >= 0; --i) {
      const int layer = ls[static_cast<std::size_t>(i)];
      if (next) {
        builder.wait(*next);
        copy_out({Phase::Backward, layer, mb}, layer_params);
      }
      if (i > 0)
        next = gather(ls[static_cast<std::size_t>(i - 1)]);  // BACKWARD_PRE prefetch
      else if (embedding_here && !tied_head())
        embedding_ag = gather_embedding(ctx);
      if (full && i < recompute_n) emitter.forward(layer, mb, Phase::Recompute);
      emitter.backward(layer, mb, selective);
      reduce(layer, mb, "fsdp.reduce_scatter", layer_params);
    }
    if (rank_.has_embedding(chunk)) {
      if (embedding_ag) {
        builder.wait(*embedding_ag);
        copy_out(ctx, embedding_params());
      }
      emitter.embedding_backward(mb);
      reduce(-1, mb, "fsdp.reduce_scatter.embedding", embedding_params());
    }
    // The end of every backward (each micro-batch: FSDP has no no_sync here): the final callback makes the compute
    // stream wait for every reduction (FSDP1 _post_backward_final_callback, FSDP2 _root_post_backward_final_callback;
    // zero-fsdp.md §6.4 / §6.5).
    wait_for_reductions();
    pending_reductions_.clear();
  }

  // Every unit's gradient was reduce-scattered in backward: only the wait is left.
  void finish_grad_sync() override { wait_for_reductions(); }

 private:
  std::uint32_t dp() const { return rank_.communicators.data; }

  // The root unit: the final norm and the LM head when it is a weight of its own (torchtitan's root; Composer's MPT
  // wraps the norm as a unit of its own, as small either way).
  double root_params() const {
    const LayerDims& d = rank_.dims;
    return d.final_norm_params + (rank_.owns_lm_head_weight() ? d.lm_head_params : 0);
  }
  // The embedding (word and learned position tables) is a unit of its own, resharded after its forward (Composer's
  // MPT: wte / wpe wrapped; torchtitan: fully_shard(tok_embeddings)).
  double embedding_params() const { return rank_.dims.embedding_params; }
  bool tied_head() const { return !rank_.owns_lm_head_weight(); }

  std::uint32_t gather_embedding(const OpContext& ctx) {
    return rank_.builder.collective(ctx, Stream::DpComm, "fsdp.allgather.embedding", CollKind::AllGather, dp(),
                                    layer_gather_bytes(embedding_params()));
  }

  // A unit's post-backward (unit `layer`, -1 for the root and the embedding): its gradient cast for the reduction,
  // then reduce-scattered on the side stream.
  void reduce(int layer, int mb, const char* name, double params) {
    cast_grad_for_reduce({Phase::Backward, layer, mb}, params);
    pending_reductions_.push_back(rank_.builder.collective({Phase::GradSync, layer, mb}, Stream::DpComm, name,
                                                           CollKind::ReduceScatter, dp(),
                                                           static_cast<std::int64_t>(params * settings_.grad_bytes)));
  }

  std::int64_t layer_gather_bytes(double params) const {
    return static_cast<std::int64_t>(params * activation_bytes(rank_.scenario.training.precision));
  }

  bool fsdp2() const { return rank_.scenario.parallelism.fsdp_version == 2; }

  // FSDP2 copies a unit's parameters out of the flat all-gather buffer into their own tensors on the compute stream
  // (foreach_all_gather_copy_out: split_with_sizes_copy, read and write the training dtype), after each all-gather;
  // FSDP1's FlatParameter is used in place.
  void copy_out(const OpContext& ctx, double params) {
    if (!fsdp2()) return;
    const Precision precision = rank_.scenario.training.precision;
    const double ab = activation_bytes(precision);
    rank_.builder.compute(ctx, "fsdp.copy_out", memory_kernel(KernelKind::Elementwise, params * 2 * ab, 0, precision));
  }

  // A unit's unsharded gradient on its way to the reduce-scatter (read the training dtype, write the reduce dtype):
  //   FSDP1: cast to the reduce dtype on the post-backward stream, which waited for the compute stream, then the
  //          reduce-scatter on that stream (_post_backward_hook / _reduce_grad); nothing when the dtypes agree;
  //   FSDP2: foreach_reduce's chunk_cat of the unit's gradients into the reduce-scatter input, the cast included, on
  //          the compute stream, a copy even when the dtypes agree (zero-fsdp.md §3.2 step 2).
  void cast_grad_for_reduce(const OpContext& ctx, double params) {
    const Precision precision = rank_.scenario.training.precision;
    const double from = activation_bytes(precision);
    const KernelDesc k =
        memory_kernel(KernelKind::Elementwise, params * (from + settings_.grad_bytes), params, precision);
    if (fsdp2()) {
      rank_.builder.compute(ctx, "fsdp.grad_chunk_cat", k);
      return;
    }
    if (from < settings_.grad_bytes) rank_.builder.compute_beside(ctx, Stream::DpComm, "fsdp.grad_cast", k);
    // _reduce_grad's pre-divide on the same stream: the unsharded gradient divided in place by the predivide factor
    // (_get_gradient_predivide_factor: 2 or more whenever the shard group has 2 ranks or more), so that the sum over
    // the ranks stays in range (zero-fsdp.md §3.1 step 3). The post-divide runs on the 1/N shard (not priced).
    if (rank_.plan.data() * rank_.plan.context() > 1)
      rank_.builder.compute_beside(
          ctx, Stream::DpComm, "fsdp.grad_predivide",
          memory_kernel(KernelKind::Elementwise, params * 2 * settings_.grad_bytes, params, precision));
  }

  bool gather_in_backward_;
};

class Fsdp final : public TrainingFramework {
 public:
  Framework id() const override { return Framework::FSDP; }

  // FSDP reduces in fp32, as the common configurations set its MixedPrecision (Composer's mixed_precision DEFAULT:
  // param_dtype = the autocast dtype, reduce_dtype = float32, composer/distributed/mixed_precision.py
  // get_mixed_precision; torchtitan's mixed_precision_reduce default float32): the gradient is cast up before the
  // reduce-scatter (FSDP1 _runtime_utils.py::_post_backward_hook / _reduce_grad).
  // reduce_dtype bf16 (Composer's mixed_precision PURE, torchtitan's mixed_precision_reduce bfloat16) when the
  // scenario says so.
  double grad_reduce_bytes(const Scenario& s) const override { return s.training.grad_reduce_in_bf16 ? 2.0 : 4.0; }

  std::unique_ptr<FrameworkRank> start_rank(const RankContext& rank) const override {
    const int zero_stage = rank.scenario.parallelism.zero_stage;
    // 0 and 1 are NO_SHARD: every rank holds and updates the whole optimizer state (docs/zero-and-fsdp.md §6).
    const DataParallelSettings settings{grad_reduce_bytes(rank.scenario), false, zero_stage >= 2, false};
    const int gathers = fsdp_layer_gathers(rank.scenario.parallelism);
    if (gathers > 0) return std::make_unique<ShardedRank>(rank, settings, gathers == 2);
    return std::make_unique<BucketedDataParallel>(rank, settings);
  }
};

}  // namespace

int fsdp_layer_gathers(const ParallelSpec& p) {
  if (p.framework != Framework::FSDP) return 0;
  if (p.zero_stage == 3) return 2;
  // With pipeline parallelism (validation allows only SHARD_GRAD_OP there) the pipeline schedule turns gradient
  // sync off for all but the last micro-batch and parameters stay gathered across micro-batches (torchtitan:
  // reshard_after_forward=False; torch.distributed.pipelining's stage: set_requires_gradient_sync(False)):
  // one reduction per step, as the bucketed path gives.
  if (p.zero_stage == 2 && p.pipeline == 1) return 1;
  return 0;
}

std::unique_ptr<TrainingFramework> make_fsdp_framework() { return std::make_unique<Fsdp>(); }

}  // namespace trainsim
