// Megatron-LM / Megatron-Core: DDP gradient buckets (zero_stage 0) or the distributed optimizer (zero_stage >= 1)
// over bucketed_data_parallel.hpp, plus the step's own checks; the only framework with the MoE layer and the
// interleaved 1F1B schedule.
#include <memory>
#include <string>

#include "core/error.hpp"
#include "workload/frameworks/bucketed_data_parallel.hpp"
#include "workload/frameworks/frameworks.hpp"
#include "workload/interleaved_schedule.hpp"
#include "workload/kernels_factory.hpp"

namespace trainsim {

namespace {

class MegatronRank final : public BucketedDataParallel {
 public:
  using BucketedDataParallel::BucketedDataParallel;

  // The non-interleaved schedule batches each transfer (batch_p2p_comm = not overlap_p2p_comm, which arguments.py
  // turns off without virtual stages) and then calls torch.cuda.synchronize() (batch_p2p_sync, default True;
  // p2p_communication.py::_communicate): the host waits for everything queued on the device, collectives on other
  // streams included, before it issues the next step.
  void after_pipeline_transfer() override { rank_.builder.host_synchronize(); }

  void optimizer_step() override {
    const OpContext ctx{Phase::Optimizer, -1, -1};
    RankBuilder& builder = rank_.builder;
    const RankCommunicators& groups = rank_.communicators;
    // Rerun state machine: world all-reduce of one int.
    builder.sync_collective(ctx, Stream::DpComm, "world.rerun_check", CollKind::AllReduce, groups.world, 4);
    BucketedDataParallel::optimizer_step();
    if (rank_.dims.t > 1 || rank_.pipeline_stages > 1)
      builder.sync_collective(ctx, Stream::TpComm, "model_parallel.update_ok_grad_norm", CollKind::AllReduce,
                              groups.model_parallel, 8);
  }
};

class Megatron final : public TrainingFramework {
 public:
  Framework id() const override { return Framework::Megatron; }

  // What Megatron rejects for the interleaved schedule (schedules.py, arguments.py).
  void validate(const Scenario& s) const override {
    const auto& p = s.parallelism;
    if (p.virtual_pipeline <= 1) return;
    const int m = s.micro_batches_per_iteration();
    if (const auto why = interleaved_micro_batch_problem(p.pipeline, m); !why.empty())
      throw ScenarioError(s.file, "parallelism.virtual_pipeline",
                          "virtual_pipeline " + std::to_string(p.virtual_pipeline) + " (interleaved 1F1B) " + why +
                              ": micro-batches per iteration = training.global_batch_size " +
                              std::to_string(s.training.global_batch_size) + " / (training.micro_batch_size " +
                              std::to_string(s.training.micro_batch_size) + " x data " + std::to_string(p.data) +
                              ") = " + std::to_string(m) + " with pipeline " + std::to_string(p.pipeline) +
                              " (Megatron's microbatch_group_size_per_vp_stage defaults to the pipeline size)");
  }

  double grad_reduce_bytes(const Scenario& s) const override { return megatron_grad_reduce_bytes(s); }

  std::unique_ptr<FrameworkRank> start_rank(const RankContext& rank) const override {
    const bool distributed_optimizer = rank.scenario.parallelism.zero_stage >= 1;
    DataParallelSettings settings{grad_reduce_bytes(rank.scenario), distributed_optimizer, distributed_optimizer};
    settings.host_reads_grad_norm = true;
    settings.host_checks_for_nan = true;
    return std::make_unique<MegatronRank>(rank, settings);
  }
};

}  // namespace

std::unique_ptr<TrainingFramework> make_megatron_framework() { return std::make_unique<Megatron>(); }

// grad_reduce_in_fp32 (param_and_grad_buffer.py) follows accumulate_allreduce_grads_in_fp32, which arguments.py
// turns on for --bf16 unless --grad-reduce-in-bf16; fp16 recipes reduce in fp16.
double megatron_grad_reduce_bytes(const Scenario& s) {
  return s.training.precision == Precision::FP16 || s.training.grad_reduce_in_bf16 ? 2.0 : 4.0;
}

}  // namespace trainsim
