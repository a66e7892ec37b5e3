#pragma once
// Pruning the candidates of `trainsim tune` before anything is simulated (docs/tune.md, "Pruning").
// Rules, applied in this order, each counted:
//   1. TP beyond scale-up: tensor > the cluster's scale-up domain (unless allowed): TP's all-gathers and
//      reduce-scatters would cross the scale-out network on every layer.
//   2. invalid: load_scenario refuses the configuration (ScenarioError: divisibility, batch, ...).
//   3. out of memory: the memory model (the same check `trainsim run` makes) says a stage does not fit.
//   4. dominated: a candidate identical but for a lighter training.recompute also fits; none is never
//      slower than selective, selective never slower than full (each only adds forward work), so only
//      the lightest recompute that fits is simulated.
#include <cstddef>
#include <string>
#include <vector>

#include "explore/tune_space.hpp"
#include "scenario/scenario_loader.hpp"

namespace trainsim::explore {

enum class Verdict { Simulate, TpBeyondScaleUp, Invalid, OutOfMemory, Dominated };
const char* to_string(Verdict v);

// One candidate's fate before simulation.
struct Screening {
  Verdict verdict = Verdict::Simulate;
  std::string reason;       // why it was pruned (the ScenarioError's message, the memory numbers, ...)
  double peak_gib = 0;      // memory model, worst pipeline stage (candidates that loaded)
  double capacity_gib = 0;  // the GPU's memory
  // Hardware FLOPs per GPU per iteration, stretched by the pipeline's fill and drain ((p - 1) / (m v) of the
  // schedule): an ordering key, not a time, so that the search simulates the likely best first.
  double work_estimate = 0;
};

// Rules 1-3 for every candidate, `threads` at a time (0 = all cores); `base_overrides` (the user's
// --set) come before each candidate's own. Result i belongs to candidates[i].
std::vector<Screening> screen_candidates(const ScenarioSource& scenario, const std::vector<std::string>& base_overrides,
                                         const std::vector<TuneCandidate>& candidates, const SpaceBasis& basis,
                                         bool allow_tp_beyond_scale_up, int threads);

// Rule 4: among candidates identical but for recompute that passed rules 1-3, all but the lightest
// become Dominated.
void mark_dominated(const std::vector<TuneCandidate>& candidates, std::vector<Screening>& screens);

// What simulating a candidate gave.
// Bounded: not simulated, its compute alone slower than the configurations already listed (settled, as Ok is).
enum class RunState : char { NotRun, Ok, NoResult, Bounded };

// Rule 4 undone where its premise fails: in a group (identical but for recompute) whose simulated
// members all gave no result (a configuration the simulator refuses, such as interleaving with fewer
// micro-batches than stages, or a failed simulation) and none is still to run, the lightest dominated
// member goes back to Verdict::Simulate. Returns the indices promoted, in order.
std::vector<std::size_t> promote_dominated(const std::vector<TuneCandidate>& candidates,
                                           std::vector<Screening>& screens, const std::vector<RunState>& runs);

struct PruneCounts {
  std::size_t candidates = 0;
  std::size_t tp_beyond_scale_up = 0;
  std::size_t invalid = 0;
  std::size_t out_of_memory = 0;
  std::size_t dominated = 0;
  std::size_t to_simulate = 0;
};
PruneCounts count_verdicts(const std::vector<Screening>& screens);

}  // namespace trainsim::explore
