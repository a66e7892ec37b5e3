#include "explore/tune_search.hpp"

#include <optional>
#include <set>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"

namespace trainsim::explore {

Scenario load_tune_base(const std::string& path, const std::vector<std::string>& overrides, bool& reset_stage_keys) {
  std::vector<std::string> as_written = overrides;
  as_written.emplace_back("parallelism.data=null");
  std::optional<ScenarioError> first;
  try {
    Scenario s = load_scenario(path, as_written);
    reset_stage_keys = space_basis(s).reset_stage_keys;
    return s;
  } catch (const ScenarioError& e) {
    first = e;
  }
  // Only the model, cluster and batch matter to the space: retry with no model parallelism at all.
  std::vector<std::string> neutral = as_written;
  for (const char* o : {"parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.context=1", "parallelism.expert=1",
                        "parallelism.virtual_pipeline=1", "parallelism.first_stage_layers=null",
                        "parallelism.last_stage_layers=null", "training.recompute_num_layers=null",
                        "training.micro_batch_size=1"})
    neutral.emplace_back(o);
  try {
    Scenario s = load_scenario(path, neutral);
    reset_stage_keys = true;
    return s;
  } catch (const ScenarioError&) {
    throw *first;  // the error of the scenario as written names what the user wrote
  }
}

TuneOutcome run_tune(const TuneRequest& request) {
  check_objective(request.objective);
  TuneOutcome out;
  SpaceSpec space = request.space;
  out.base_overrides = absorb_pinned_overrides(space, request.overrides);

  bool reset_stage_keys = false;
  const Scenario base = load_tune_base(request.scenario_path, out.base_overrides, reset_stage_keys);
  if (!base.has_training_job)
    throw Error(base.file + ": tune needs a training job (model, training, parallelism); this is a collective benchmark");
  out.scenario = base.name;
  out.model = base.model.name;
  out.gpu = base.cluster.gpu.name;
  out.basis = space_basis(base);
  out.basis.reset_stage_keys = reset_stage_keys;

  const std::vector<TuneCandidate> candidates = enumerate_candidates(out.basis, space);
  std::set<int> gpu_counts;
  for (const TuneCandidate& c : candidates) gpu_counts.insert(c.num_gpus);
  out.varies_num_gpus = gpu_counts.size() > 1;
  if (gpu_counts.size() == 1) out.basis.num_gpus = *gpu_counts.begin();  // pinned by --set or --space

  std::vector<Screening> screens = screen_candidates(request.scenario_path, out.base_overrides, candidates, out.basis,
                                                     space.allow_tp_beyond_scale_up, request.threads);
  mark_dominated(candidates, screens);

  // Simulate the survivors; where the simulator refuses one that screening let through, the next
  // heavier recompute of its group is simulated in another round (promote_dominated).
  std::vector<RunState> runs(candidates.size(), RunState::NotRun);
  std::vector<std::size_t> batch;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (screens[i].verdict == Verdict::Simulate) batch.push_back(i);
  std::size_t done_before = 0;
  while (!batch.empty()) {
    std::vector<Overrides> points(candidates.size());
    for (std::size_t i : batch) {
      points[i] = out.base_overrides;
      const std::vector<std::string> own = candidates[i].overrides(out.basis.reset_stage_keys);
      points[i].insert(points[i].end(), own.begin(), own.end());
    }
    const std::size_t total = done_before + batch.size();
    ProgressFn progress;
    if (request.progress)
      progress = [&request, done_before, total](std::size_t done, std::size_t) { request.progress(done_before + done, total); };
    const std::vector<PointOutcome> outcomes =
        evaluate_points(request.scenario_path, points, batch, request.threads, {}, progress);
    for (std::size_t j = 0; j < batch.size(); ++j) {
      const std::size_t i = batch[j];
      const PointOutcome& o = outcomes[j];
      const double tokens_per_s = o.status == PointStatus::Ok ? o.result.value("tokens_per_s", 0.0) : 0.0;
      if (o.status == PointStatus::Ok && tokens_per_s > 0) {
        runs[i] = RunState::Ok;
        out.ranked.push_back({candidates[i], o.result, objective_value(request.objective, tokens_per_s, candidates[i].num_gpus)});
        continue;
      }
      runs[i] = RunState::NoResult;
      // The simulator's own checks (e.g. interleaving needs as many micro-batches as stages) make it invalid too.
      if (o.status == PointStatus::Invalid) screens[i].verdict = Verdict::Invalid;
      if (o.status == PointStatus::OutOfMemory) screens[i].verdict = Verdict::OutOfMemory;
      screens[i].reason = o.status == PointStatus::Ok ? "the simulation reported no throughput" : o.reason;
    }
    done_before = total;
    batch = promote_dominated(candidates, screens, runs);
  }

  const PruneCounts pc = count_verdicts(screens);
  out.counts.candidates = pc.candidates;
  out.counts.tp_beyond_scale_up = pc.tp_beyond_scale_up;
  out.counts.invalid = pc.invalid;
  out.counts.out_of_memory = pc.out_of_memory;
  out.counts.dominated = pc.dominated;
  out.counts.simulated = pc.to_simulate;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Screening& s = screens[i];
    if (s.verdict == Verdict::Invalid && out.first_invalid.empty()) out.first_invalid = s.reason;
    if (s.verdict == Verdict::Simulate && runs[i] == RunState::NoResult) {
      ++out.counts.failed;
      if (out.first_failure.empty()) out.first_failure = candidates[i].label() + ": " + s.reason;
    }
    if (s.verdict == Verdict::OutOfMemory && s.peak_gib > s.capacity_gib &&
        (!out.closest_miss || s.peak_gib - s.capacity_gib < out.closest_miss->peak_gib - out.closest_miss->capacity_gib))
      out.closest_miss = ClosestMiss{candidates[i], s.peak_gib, s.capacity_gib};
  }
  rank_configs(out.ranked, request.objective.kind);
  return out;
}

}  // namespace trainsim::explore
