#pragma once
// `trainsim tune` without the printing: enumerate the space (tune_space), prune (tune_prune), simulate
// the survivors in parallel (parallel_eval) and rank them (tune_rank). Deterministic: the outcome is
// the same whatever the thread count.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "explore/parallel_eval.hpp"
#include "explore/tune_prune.hpp"
#include "explore/tune_rank.hpp"
#include "explore/tune_space.hpp"

namespace trainsim::explore {

struct TuneRequest {
  ScenarioSource scenario;             // the base scenario: a file, or YAML text (the Python module's dicts)
  std::vector<std::string> overrides;  // the user's --set; those on searched keys pin them
  SpaceSpec space;
  Objective objective;
  int threads = 0;      // 0 = all cores
  ProgressFn progress;  // called as simulations finish
  // The configurations the caller lists: those are exact. A candidate whose compute alone cannot beat the
  // top-th best found so far is not simulated (TuneCounts::bounded); 0 = simulate every survivor.
  std::size_t top = 5;
};

struct TuneCounts {
  std::size_t candidates = 0;
  std::size_t tp_beyond_scale_up = 0;
  std::size_t invalid = 0;
  std::size_t out_of_memory = 0;
  std::size_t dominated = 0;
  std::size_t simulated = 0;
  std::size_t bounded = 0;  // of the simulated: stopped before the engine, compute alone slower than the top-th best
  std::size_t failed = 0;   // of the simulated: the simulation itself failed
};

// The candidate that missed the GPU's memory by the least.
struct ClosestMiss {
  TuneCandidate candidate;
  double peak_gib = 0;
  double capacity_gib = 0;
};

struct TuneOutcome {
  std::string scenario;  // the base scenario's name
  std::string model;
  std::string gpu;
  SpaceBasis basis;
  std::vector<std::string> base_overrides;  // the --set that apply to every candidate
  bool varies_num_gpus = false;             // cluster.num_gpus took more than one value
  TuneCounts counts;
  std::vector<RankedConfig> ranked;  // every successful simulation, best first
  std::optional<ClosestMiss> closest_miss;
  std::string first_invalid;  // the first invalid candidate's error (for "nothing valid" messages)
  std::string first_failure;  // the first failed simulation's error
};

// Throws Error for a scenario that cannot serve as a base (it does not load even with its parallel
// settings neutralised) and for bad --set / --space input; everything else is counted, not thrown.
TuneOutcome run_tune(const TuneRequest& request);

// The base scenario: the file with the pass-through overrides, data derived. When its own parallel
// settings make it invalid (a --set cluster.num_gpus that its data no longer fits, say), it is loaded
// again with them neutralised; then `reset_stage_keys` is set in the basis. Throws the first error
// when both fail.
Scenario load_tune_base(const ScenarioSource& source, const std::vector<std::string>& overrides,
                        bool& reset_stage_keys);

}  // namespace trainsim::explore
