#include "explore/tune_prune.hpp"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "explore/parallel_eval.hpp"
#include "scenario/scenario_loader.hpp"
#include "model/flops.hpp"
#include "workload/memory_model.hpp"
#include "workload/recompute.hpp"

namespace trainsim::explore {

const char* to_string(Verdict v) {
  switch (v) {
    case Verdict::Simulate: return "simulate";
    case Verdict::TpBeyondScaleUp: return "tp_beyond_scale_up";
    case Verdict::Invalid: return "invalid";
    case Verdict::OutOfMemory: return "out_of_memory";
    case Verdict::Dominated: return "dominated";
  }
  return "";
}

namespace {

// Rules 1-3 for one candidate. Never throws.
Screening screen_one(const ScenarioSource& scenario_source, const std::vector<std::string>& base_overrides,
                     const TuneCandidate& c, const SpaceBasis& basis, bool allow_tp_beyond_scale_up) {
  Screening s;
  if (c.tensor > basis.scale_up_domain && !allow_tp_beyond_scale_up) {
    s.verdict = Verdict::TpBeyondScaleUp;
    s.reason = fmt::format("tensor {} is beyond the scale-up domain of {} GPUs (--allow-tp-beyond-scale-up)", c.tensor,
                           basis.scale_up_domain);
    return s;
  }
  try {
    std::vector<std::string> overrides = base_overrides;
    const std::vector<std::string> own = c.overrides(basis.reset_stage_keys);
    overrides.insert(overrides.end(), own.begin(), own.end());
    const Scenario scenario = load_scenario(scenario_source, overrides);
    s.capacity_gib = scenario.cluster.gpu.memory_gib;
    const std::vector<StageMemory> stages = estimate_memory(scenario);
    const StageMemory* worst = nullptr;
    for (const StageMemory& st : stages)
      if (!worst || st.total_gib() > worst->total_gib()) worst = &st;
    TRAINSIM_CHECK(worst != nullptr, "the memory model returned no pipeline stage");
    s.peak_gib = worst->total_gib();
    const ParallelSpec& p = scenario.parallelism;
    const double flops = hardware_flops_per_iteration(scenario.model, scenario.training.global_batch_size, p.tensor,
                                                      scenario.training.recompute, recomputed_layers_total(scenario),
                                                      scenario.training.recompute_modules);
    const double fill =
        static_cast<double>(p.pipeline - 1) /
        static_cast<double>(std::max<std::int64_t>(1, scenario.micro_batches_per_iteration() * p.virtual_pipeline));
    s.work_estimate = flops / scenario.cluster.num_gpus * (1 + fill);
    // The same test as run_scenario's (memory.fits), so a pruned candidate is one `run` would refuse.
    if (s.peak_gib > s.capacity_gib) {
      s.verdict = Verdict::OutOfMemory;
      s.reason = fmt::format("pipeline stage {} needs {:.1f} GiB per GPU of {:.1f} GiB", worst->stage, s.peak_gib,
                             s.capacity_gib);
    }
  } catch (const InternalError& e) {  // a bug, said so in the candidate's reason rather than ending the search
    s.verdict = Verdict::Invalid;
    s.reason = internal_error_message(e);
  } catch (const std::exception& e) {  // ScenarioError above all; anything else is no better a candidate
    s.verdict = Verdict::Invalid;
    s.reason = e.what();
  }
  return s;
}

}  // namespace

std::vector<Screening> screen_candidates(const ScenarioSource& scenario, const std::vector<std::string>& base_overrides,
                                         const std::vector<TuneCandidate>& candidates, const SpaceBasis& basis,
                                         bool allow_tp_beyond_scale_up, int threads) {
  std::vector<Screening> out(candidates.size());
  // Each candidate writes only its slot: the result does not depend on scheduling.
  run_in_parallel(candidates.size(), resolve_thread_count(threads), [&](std::size_t i) {
    out[i] = screen_one(scenario, base_overrides, candidates[i], basis, allow_tp_beyond_scale_up);
  });
  return out;
}

namespace {
std::array<int, kTuneDims> group_key(const TuneCandidate& c) {
  TuneCandidate g = c;
  g.recompute = RecomputeGranularity::None;
  return g.key();
}
}  // namespace

void mark_dominated(const std::vector<TuneCandidate>& candidates, std::vector<Screening>& screens) {
  // The lightest surviving recompute of each group of candidates that differ only in recompute.
  std::map<std::array<int, kTuneDims>, std::size_t> lightest;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (screens[i].verdict != Verdict::Simulate) continue;
    const auto [it, inserted] = lightest.emplace(group_key(candidates[i]), i);
    if (!inserted && candidates[i].recompute < candidates[it->second].recompute) it->second = i;
  }
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (screens[i].verdict != Verdict::Simulate) continue;
    const std::size_t best = lightest.at(group_key(candidates[i]));
    if (best == i) continue;
    screens[i].verdict = Verdict::Dominated;
    screens[i].reason = fmt::format("recompute {} also fits and is never slower than {}",
                                    to_string(candidates[best].recompute), to_string(candidates[i].recompute));
  }
}

std::vector<std::size_t> promote_dominated(const std::vector<TuneCandidate>& candidates,
                                           std::vector<Screening>& screens, const std::vector<RunState>& runs) {
  struct Group {
    bool settled = false;  // a member has a result or is still to run
    std::optional<std::size_t> lightest_dominated;
  };
  std::map<std::array<int, kTuneDims>, Group> groups;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    Group& g = groups[group_key(candidates[i])];
    if (screens[i].verdict == Verdict::Simulate && runs[i] != RunState::NoResult) g.settled = true;
    if (screens[i].verdict == Verdict::Dominated &&
        (!g.lightest_dominated || candidates[i].recompute < candidates[*g.lightest_dominated].recompute))
      g.lightest_dominated = i;
  }
  std::vector<std::size_t> promoted;
  for (const auto& [key, g] : groups) {
    if (g.settled || !g.lightest_dominated) continue;
    screens[*g.lightest_dominated].verdict = Verdict::Simulate;
    screens[*g.lightest_dominated].reason.clear();
    promoted.push_back(*g.lightest_dominated);
  }
  std::sort(promoted.begin(), promoted.end());
  return promoted;
}

PruneCounts count_verdicts(const std::vector<Screening>& screens) {
  PruneCounts c;
  c.candidates = screens.size();
  for (const Screening& s : screens) {
    switch (s.verdict) {
      case Verdict::Simulate: ++c.to_simulate; break;
      case Verdict::TpBeyondScaleUp: ++c.tp_beyond_scale_up; break;
      case Verdict::Invalid: ++c.invalid; break;
      case Verdict::OutOfMemory: ++c.out_of_memory; break;
      case Verdict::Dominated: ++c.dominated; break;
    }
  }
  return c;
}

}  // namespace trainsim::explore
