#pragma once
// Megatron's DistributedDataParallel over the rank's gradient buffers (grad_buffers.hpp): gradients reduced bucket by
// bucket as the last micro-batch's backward produces them (overlap_grad_reduce), by all-reduce, or by reduce-scatter
// with the distributed optimizer, whose parameter all-gathers then run before the next forward
// (overlap_param_gather) or after the step. Megatron's own path (megatron.cpp); FSDP NO_SHARD and DeepSpeed
// without ZeRO reduce their gradients through it too (fsdp.cpp, deepspeed.cpp), and FSDP FULL_SHARD and
// SHARD_GRAD_OP keep its buffers' zeroing and optimizer step.
#include <cstdint>
#include <map>
#include <optional>
#include <vector>

#include "workload/frameworks/training_framework.hpp"
#include "workload/grad_buffers.hpp"

namespace trainsim {

struct DataParallelSettings {
  double grad_bytes = 4;               // bytes per gradient element in the reduction
  bool distributed_optimizer = false;  // reduce-scatter the buckets; all-gather the updated parameters
  bool sharded_optimizer = false;      // optimizer state sharded over DP: the gradient norm spans the world
  // The step starts by zeroing the gradient buffers (Megatron's zero_grad_buffer memset). PyTorch's FSDP keeps no
  // persistent buffer: optimizer.zero_grad(set_to_none=True) frees the gradients, and the next backward allocates
  // them (zero-fsdp.md §3.1, §7): no kernel.
  bool zero_grad_memset = true;
  // The host reads the gradient norm back before it issues the update (Megatron's get_grad_norm_fp32:
  // total_norm.item(), clip_grads.py), so it waits for the norm's all-reduce. PyTorch's clip_grad_norm_ keeps it on
  // the device.
  bool host_reads_grad_norm = false;
  // Megatron's check_for_nan_in_loss_and_grad (default on): the host reads back each micro-batch's loss on the last
  // stage (rerun_state_machine.validate_result's isnan / isinf) and each gradient bucket's norm before it issues the
  // bucket's reduction (param_and_grad_buffer.py start_grad_sync -> check_grads); megatron.md §3.3, §5.1, §9.
  bool host_checks_for_nan = false;
};

class BucketedDataParallel : public FrameworkRank {
 public:
  BucketedDataParallel(const RankContext& rank, DataParallelSettings settings);

  void zero_grad() override;
  void forward(int micro_batch, int chunk) override;
  void backward(int micro_batch, int chunk) override;
  void start_chunk_grad_sync(int chunk) override;
  void start_chunk_param_sync(int chunk) override;
  void finish_grad_sync() override;
  void optimizer_step() override;

 protected:
  // Bucket size of pipeline rank 0's first chunk in elements (0: one bucket): only with overlap_grad_reduce,
  // parallelism.grad_bucket_mb or Megatron's default max(40M, 1M x dp x cp) (DistributedDataParallelConfig).
  double first_chunk_bucket_elements() const;
  // Bytes of a parameter all-gather's output: the bucket's parameters in the training dtype.
  std::int64_t param_gather_bytes(const GradBucket& bucket) const;
  bool overlapped_param_gather() const;
  void reduce_bucket(const GradBuffer& buffer, double params, int micro_batch);
  // Waits for every gradient reduction launched so far (finalize_model_grads' finish_grad_sync).
  void wait_for_reductions();
  // The tensors the optimizer iterates over on this rank, `local_total` elements in all (optimizer_step.hpp).
  std::vector<double> optimizer_tensors(double local_total) const;

  const RankContext& rank_;
  DataParallelSettings settings_;
  GradBuffers buffers_;
  std::vector<std::uint32_t> pending_reductions_;

 private:
  // Per buffer: the parameter all-gather in flight (forward pre-hook chain), and with the interleaved schedule the
  // handles of each chunk's bucket gathers.
  std::vector<std::optional<std::uint32_t>> param_gather_inflight_;
  std::vector<std::vector<std::vector<std::optional<std::uint32_t>>>> chunk_param_gathers_;
  std::map<int, bool> first_forward_done_, chunk_reduced_;
};

}  // namespace trainsim
