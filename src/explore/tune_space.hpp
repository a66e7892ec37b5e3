#pragma once
// The search space of `trainsim tune` (docs/tune.md, "The space"): the parallel configurations of one
// model on one cluster. Each searched key has a default list of values that depends on the model and
// on the keys before it (pipeline sizes that leave an integer data-parallel size, micro-batch sizes
// that divide the batch of one data-parallel rank, ...); `--space key=v1,v2` replaces a key's list.
// parallelism.data is never searched: it is num_gpus / (tensor x pipeline x context) at every point.
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim::explore {

// The searched keys, in key order: enumeration nests them in this order (num_gpus outermost,
// recompute innermost) and ties in the ranking are broken in it, so the order of candidates and of
// equal results never depends on anything but the configurations themselves.
enum class TuneDim {
  NumGpus,
  Tensor,
  Context,
  Pipeline,
  Expert,
  VirtualPipeline,
  SequenceParallel,
  ZeroStage,
  MicroBatchSize,
  Recompute,
};
constexpr std::size_t kTuneDims = 10;

// The scenario key of a dimension ("parallelism.tensor").
const char* tune_key(TuneDim d);
// All dimensions, in key order.
const std::array<TuneDim, kTuneDims>& tune_dims();
// A dimension from its full key ("parallelism.tensor") or its last component ("tensor").
std::optional<TuneDim> find_tune_dim(const std::string& key);
// A value as the scenario spells it: "4", "true", "selective". Values are held as ints: booleans as
// 0/1, recompute as 0 none, 1 selective, 2 full.
std::string format_value(TuneDim d, int value);

// What the user asked for, beyond the defaults.
struct SpaceSpec {
  std::map<TuneDim, std::vector<int>> given;  // a key's values (sorted, unique), replacing its default list
  bool allow_tp_beyond_scale_up = false;
};

// Adds "key=v1,v2,..." to `spec`. `flag` names the option in errors ("--space", or "--set" for a
// pinned key). Throws Error naming the flag for an unknown or non-searchable key, a bad value, or a
// key given twice.
void add_space_values(SpaceSpec& spec, const std::string& text, const std::string& flag = "--space");

// Sorts the user's `--set` overrides: one on a searched key pins that key (as `--space key=value`
// would); parallelism.data and the per-stage keys tune resets (first/last_stage_layers,
// recompute_num_layers) are errors naming --set; the rest are returned unchanged, to apply to every
// candidate.
std::vector<std::string> absorb_pinned_overrides(SpaceSpec& spec, const std::vector<std::string>& sets);

// What the default lists depend on, read from the base scenario.
struct SpaceBasis {
  int num_gpus = 0;
  int num_layers = 0;
  int heads = 0;
  int query_groups = 0;
  std::int64_t seq_length = 0;
  int num_experts = 0;  // 0: dense
  std::int64_t global_batch_size = 0;
  int scale_up_domain = 8;
  Framework framework = Framework::Megatron;
  // The base sets an uneven pipeline split or per-stage recompute counts, which mean nothing once
  // the pipeline size changes: every candidate then clears them.
  bool reset_stage_keys = false;
};
SpaceBasis space_basis(const Scenario& base);

// One configuration. data = 0 when num_gpus is not a multiple of tensor x context x pipeline (only
// possible with --space lists; such a candidate is invalid).
struct TuneCandidate {
  int num_gpus = 0;
  int tensor = 1;
  int context = 1;
  int pipeline = 1;
  int data = 0;
  int expert = 1;
  int virtual_pipeline = 1;
  bool sequence_parallel = false;
  int zero_stage = 0;
  int micro_batch_size = 1;
  RecomputeGranularity recompute = RecomputeGranularity::None;

  int value(TuneDim d) const;
  // The tie-breaking key: the dimensions' values in key order.
  std::array<int, kTuneDims> key() const;
  // The `--set` overrides that select this configuration (searched keys, then the derived data size,
  // then the resets when `reset_stage_keys`).
  std::vector<std::string> overrides(bool reset_stage_keys) const;
  // "TP 2 PP 1 DP 4 CP 1 EP 1 VP 1 SP on ZeRO 1 mbs 2 recompute none" (with "GPUs N " first when asked).
  std::string label(bool with_gpus = false) const;
};
bool key_less(const TuneCandidate& a, const TuneCandidate& b);
// Identical but for training.recompute (the dominance rule compares such candidates).
bool same_but_recompute(const TuneCandidate& a, const TuneCandidate& b);

// Every candidate of the space, in key order. Pure: no scenario is loaded.
std::vector<TuneCandidate> enumerate_candidates(const SpaceBasis& basis, const SpaceSpec& spec);

}  // namespace trainsim::explore
