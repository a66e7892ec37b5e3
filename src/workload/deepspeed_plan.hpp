#pragma once
// Pure planning for DeepSpeed ZeRO (deepspeed/runtime/zero/stage_1_and_2.py, stage3.py): which gradients share an ipg
// bucket, and which parameter all-gathers ZeRO-3's partitioned_param_coordinator issues, waits for and releases
// over one micro-batch's module trace. No ops are emitted here (deepspeed_zero.cpp does that), so every rule
// can be checked by hand in tests/workload/deepspeed_plan_test.cpp.
#include <string>
#include <vector>

#include "model/model_spec.hpp"

namespace trainsim {

// ---- the parameters one rank holds, as DeepSpeed sees them ----
// DeepSpeed flattens / partitions the rank's own parameters: its TP shard of its pipeline stage. Modules are
// ZeRO-3's fetch units (every leaf module's direct parameters, _register_deepspeed_module).
struct DsTensor {
  int module = 0;
  double numel = 0;     // elements on this rank (TP-sharded tensors divided by TP)
  bool vector = false;  // 1-D: the no-weight-decay parameter group
};
struct DsModule {
  int layer = -1;            // global layer, -1 for the embedding, final norm and LM head
  std::string name;          // layer_param_tensors' module names; "embedding", "position_embedding",
                             // "final_norm", "lm_head" for the others
  std::vector<int> tensors;  // indices into DsParams::tensors, forward order
};
struct DsParams {
  std::vector<DsTensor> tensors;                            // forward (construction) order
  std::vector<DsModule> modules;                            // forward order
  int module_of(int layer, const std::string& name) const;  // -1 when the rank has no such module
  double total() const;
};
// The rank's parameters in forward order: word (and learned position) embedding on the first stage, the
// stage's layers, then the final norm and, when the LM head is a weight of its own (untied, or tied with
// pipeline parallelism: the last stage's copy), the LM head on the last stage.
DsParams rank_params(const ModelSpec& m, int tensor, const std::vector<int>& layers, bool first_stage, bool last_stage,
                     bool own_lm_head);

// ---- ipg gradient buckets (stage_1_and_2.py, stage3.py) ----
struct IpgBucket {
  int last = 0;         // index of the bucket's last tensor in reduction order
  double elements = 0;  // sum of its tensors' numel
};
// DeepSpeed's rule, per tensor in reduction order: if the bucket is non-empty and elements + numel > cap,
// flush it first; then add the tensor. A tensor larger than `cap` therefore ends up alone.
std::vector<IpgBucket> greedy_buckets(const std::vector<double>& numels, double cap);

// ---- ZeRO-3 parameter fetching (partitioned_param_coordinator.py) ----
struct Zero3Config {
  double prefetch_bucket_size = 5e7;  // stage3_prefetch_bucket_size
  double max_live_parameters = 1e9;   // stage3_max_live_parameters
  double max_reuse_distance = 1e9;    // stage3_max_reuse_distance
};

// One module visit of the trace: the module and its non-persistent elements (persistent parameters stay
// gathered for the whole step). Every visit of one module must carry the same numel; 0 = nothing to fetch.
struct TraceVisit {
  int module = 0;
  double numel = 0;
};

// One coalesced all-gather (one all_gather_coalesced call).
struct Zero3Batch {
  std::vector<int> modules;  // in the order they were added
  double elements = 0;       // sum of their numel
  int visit = 0;             // the visit that issued it
  bool prefetch = false;     // false: the on-demand fetch of the visit's own module
};

// What happens at one visit, in this order: on-demand gather, wait, prefetch, (the module's compute), release.
struct Zero3Visit {
  int module = 0;
  double on_demand = 0;      // elements gathered on demand (0: the module was available or in flight)
  int on_demand_batch = -1;  // index into Zero3Plan::batches, or -1
  int wait_batch = -1;       // the batch the compute stream waits for, or -1 (already available)
  int prefetch_batch = -1;   // the prefetch issued after the wait, or -1
  double prefetch = 0;       // its elements
  bool released = false;     // parameters freed after the visit
};

struct Zero3Plan {
  std::vector<Zero3Visit> visits;   // one per trace entry
  std::vector<Zero3Batch> batches;  // in issue order
  double gathered() const;          // elements of all batches
};

// Emulates the coordinator at module granularity over one micro-batch (the trace is rebuilt every forward,
// so every micro-batch starts with nothing gathered): statuses NOT_AVAILABLE / INFLIGHT / AVAILABLE; at visit
// i an on-demand gather if not available, a wait for the batch holding the module (the whole batch completes),
// then one prefetch batch: budget = min(max_live - n_available, prefetch_bucket), trace entries after the
// current position are consumed by a monotonic cursor while the batch holds fewer elements than the budget,
// and each not-available module is added once with its full numel. After the visit the module is released
// unless a later visit of it was already consumed by the cursor, or it recurs among the following entries
// whose cumulative numel is below max_reuse_distance. n_available rises at issue and falls at release.
Zero3Plan plan_zero3(const std::vector<TraceVisit>& trace, const Zero3Config& config);

// One micro-batch's module visits on a single-stage rank (ZeRO-3 has no pipeline): forward (embedding,
// position embedding, every layer's modules, final norm, LM head = the embedding module when tied), then
// backward (LM head, final norm, per layer in reverse: its modules' forward again if the layer is recomputed,
// then its modules in reverse, position embedding, embedding). `recomputed[i]` is for the i-th layer of
// `params` in forward order. Each visit carries the module's non-persistent elements: tensors of at most
// `persistence_threshold` elements are persistent (partition_parameters.py).
struct ModuleVisit {
  int module = 0;
  bool backward = false;
};
std::vector<ModuleVisit> zero3_visits(const DsParams& params, const std::vector<bool>& recomputed);
bool persistent(const DsTensor& t, double persistence_threshold);
std::vector<TraceVisit> zero3_trace(const DsParams& params, const std::vector<ModuleVisit>& visits,
                                    double persistence_threshold);

}  // namespace trainsim
