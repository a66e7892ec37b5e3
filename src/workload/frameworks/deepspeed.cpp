// DeepSpeed. With ZeRO (zero_stage 1-3) its optimizer walks the model and issues its own gradient buckets,
// parameter gathers and step (deepspeed_zero.hpp); without ZeRO its gradients are reduced through the bucketed
// data-parallel path (bucketed_data_parallel.hpp).
#include <memory>

#include "workload/deepspeed_zero.hpp"
#include "workload/frameworks/bucketed_data_parallel.hpp"
#include "workload/frameworks/frameworks.hpp"
#include "workload/kernels_factory.hpp"

namespace trainsim {

namespace {

class DeepSpeedZeroRank final : public FrameworkRank {
 public:
  explicit DeepSpeedZeroRank(const RankContext& rank)
      : zero_(rank.scenario, deepspeed_rank(rank), rank.builder, rank.emitter,
              [&rank](int micro_batch) { rank.data_broadcast(micro_batch); }) {}

  void zero_grad() override {}  // DeepSpeed's zero_grad sets the gradients to None: no memset
  void forward(int micro_batch, int /*chunk*/) override { zero_.forward(micro_batch); }
  void backward(int micro_batch, int /*chunk*/) override { zero_.backward(micro_batch); }
  void finish_grad_sync() override { zero_.finish_backward(); }
  void optimizer_step() override { zero_.optimizer_step(); }

 private:
  static DeepSpeedRank deepspeed_rank(const RankContext& rank) {
    const Scenario& s = rank.scenario;
    DeepSpeedRank r;
    r.dp = rank.communicators.data;
    r.dp_size = rank.plan.data() * rank.plan.context();
    r.mp = rank.communicators.model_parallel;
    r.model_parallel = rank.dims.t * rank.pipeline_stages > 1;
    r.micro_batches = rank.micro_batches;
    r.layers = rank.layout.layers(rank.pipeline_stage, 0);  // DeepSpeed has no interleaved schedule (validate)
    r.recomputed_layers = s.training.recompute == RecomputeGranularity::Full ? rank.recomputed_layers_in_chunk(0) : 0;
    r.selective_recompute = rank.selective_attention();
    r.first_stage = rank.first_stage();
    r.last_stage = rank.last_stage();
    r.own_lm_head = rank.owns_lm_head_weight();
    return r;
  }

  DeepSpeedZero zero_;
};

class DeepSpeed final : public TrainingFramework {
 public:
  Framework id() const override { return Framework::DeepSpeed; }

  // DeepSpeed reduces in the training dtype.
  double grad_reduce_bytes(const Scenario& s) const override { return activation_bytes(s.training.precision); }

  std::unique_ptr<FrameworkRank> start_rank(const RankContext& rank) const override {
    if (rank.scenario.parallelism.zero_stage >= 1) return std::make_unique<DeepSpeedZeroRank>(rank);
    return std::make_unique<BucketedDataParallel>(rank,
                                                  DataParallelSettings{grad_reduce_bytes(rank.scenario), false, false});
  }
};

}  // namespace

std::unique_ptr<TrainingFramework> make_deepspeed_framework() { return std::make_unique<DeepSpeed>(); }

}  // namespace trainsim
