#pragma once
// What DeepSpeed's ZeRO optimizers issue on one rank in one iteration (deepspeed/runtime/zero/stage_1_and_2.py
// DeepSpeedZeroOptimizer for stages 1/2, stage3.py DeepSpeedZeroOptimizer_Stage3 and
// partitioned_param_coordinator.py for stage 3): the model walk of each micro-
// batch's forward and backward with the LayerEmitter's kernels, plus the gradient buckets, parameter gathers and
// the optimizer step. DeepSpeed's TrainingFramework (frameworks/deepspeed.cpp) runs it when zero_stage >= 1;
// docs/zero-and-fsdp.md lists what is emitted.
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"
#include "workload/deepspeed_plan.hpp"
#include "workload/layer_ops.hpp"

namespace trainsim {

// The rank's place in the job (from its RankContext, rank_context.hpp).
struct DeepSpeedRank {
  std::uint32_t dp = 0;  // the partitioning group (dp x cp)
  int dp_size = 1;
  std::uint32_t mp = 0;  // tp x pp: DeepSpeed's model-parallel group for the overflow and norm scalars
  bool model_parallel = false;
  int micro_batches = 1;
  std::vector<int> layers;    // the stage's layers, forward order
  int recomputed_layers = 0;  // full recompute: the first n of them
  bool selective_recompute = false;
  bool first_stage = true, last_stage = true;
  bool own_lm_head = false;  // the LM head is a weight of its own on this rank
};

class DeepSpeedZero {
 public:
  // Installs a module hook on `le` (removed by the destructor). `data_broadcast(mb)` is the TP broadcast of the
  // batch, issued before the embedding (first stage) and before the LM head (last stage, when not also first).
  DeepSpeedZero(const Scenario& s, const DeepSpeedRank& rank, RankBuilder& rb, LayerEmitter& le,
                std::function<void(int mb)> data_broadcast);
  ~DeepSpeedZero();
  DeepSpeedZero(const DeepSpeedZero&) = delete;
  DeepSpeedZero& operator=(const DeepSpeedZero&) = delete;

  void forward(int mb);
  void backward(int mb);
  // After the last micro-batch: ZeRO-1 without overlap_comm reduces every gradient here (stage_1_and_2.py).
  void finish_backward();
  void optimizer_step();

 private:
  // Module hook: pending gradients become ready, then the module's parameters are fetched (ZeRO-3).
  void on_module(int layer, const char* module, bool backward);
  void fetch(int module, bool backward, int layer);
  int head_module() const;  // the module the LM head's weight belongs to
  std::vector<int> autograd_order() const;
  void set_order(std::vector<int> order);
  void grads_ready();  // the pending modules' gradients, in autograd order
  void arrive(int tensor);
  void flush_bucket();
  void backward_epilogue();
  std::uint32_t all_gather(const OpContext& ctx, const char* name, double gather_elements);

  // ZeRO-1/2 bucket flush and its pieces (reduce_ipg_grads).
  void flush_all_reduce(double elements);
  void copy_owned(double elements);
  // ZeRO-3 bucket flush (stage3.py).
  void flush_reduce_scatter(double padded_elements);

  void step_zero12();
  void step_zero3();
  // The optimizer's kernels over its flat partitions (one per parameter group or sub-group), in order.
  void step_kernels(const OpContext& ctx, const std::vector<double>& partitions);
  void overflow_check(const OpContext& ctx, double shard_elements);
  void scalar_all_reduce(const OpContext& ctx, const char* name, std::int64_t bytes);

  double padded(double numel) const;  // ceil(numel / N) * N: a ZeRO-3 partitioned tensor's full size

  const Scenario& s_;
  DeepSpeedRank r_;
  RankBuilder& rb_;
  LayerEmitter& le_;
  std::function<void(int)> broadcast_;
  int stage_ = 1;
  bool overlap_ = false;
  double lp_bytes_ = 2, comm_bytes_ = 2;
  DsParams params_;
  std::map<std::pair<int, std::string>, int> module_ids_;

  // Gradient reduction of the current backward.
  std::vector<int> order_;          // tensors in reduction order
  std::vector<IpgBucket> buckets_;  // greedy_buckets over order_
  std::vector<int> order_pos_;      // tensor -> position in order_
  std::size_t next_ = 0;            // next position in order_ expected to arrive
  std::size_t bucket_ = 0;          // bucket being filled
  double bucket_padded_ = 0;        // ZeRO-3: padded elements of the bucket being filled
  bool reducing_ = false;           // this backward reduces gradients
  std::vector<int> pending_;        // modules whose backward ran and whose gradients are not yet in the bucket
  std::optional<std::uint32_t> last_all_reduce_;  // overlap_comm: the bucket on the reduction stream
  double last_all_reduce_elements_ = 0;
  std::deque<std::uint32_t> reduce_scatters_;  // ZeRO-3: outstanding flushes

  // ZeRO-3 fetching.
  std::vector<ModuleVisit> visits_;
  Zero3Plan plan_;
  std::vector<double> gather_elements_;  // per module: padded non-persistent elements
  std::vector<std::uint32_t> batch_ops_;
  std::size_t visit_ = 0;
  int mb_ = -1;
  bool in_backward_ = false;
};

}  // namespace trainsim
