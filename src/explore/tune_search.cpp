#include "explore/tune_search.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"

namespace trainsim::explore {

namespace {

// Points per wave of simulations (see run_tune): large enough to keep the threads of a big machine busy, small
// enough that the limits tighten often.
constexpr std::size_t kTuneWave = 16;

// The objective of the top-th best configuration so far: a candidate that cannot do better is not listed. None
// while fewer than `top` have results (or top is 0: nothing is bounded).
std::optional<double> listed_threshold(const std::vector<RankedConfig>& ranked, std::size_t top, ObjectiveKind kind) {
  if (top == 0 || ranked.size() < top) return std::nullopt;
  std::vector<double> values;
  values.reserve(ranked.size());
  for (const RankedConfig& r : ranked) values.push_back(r.objective);
  const auto nth = values.begin() + static_cast<std::ptrdiff_t>(top - 1);
  if (maximises(kind))
    std::nth_element(values.begin(), nth, values.end(), std::greater<>());
  else
    std::nth_element(values.begin(), nth, values.end());
  return *nth;
}

// The iteration time beyond which a candidate of `gpus` GPUs cannot score better than `objective`. An
// iteration-level objective is tokens/s (maximised, inversely proportional to the time) or a cost or duration
// (minimised, proportional to it). A run-level one is at least its value at full goodput (failures, restarts and
// checkpoints only add): days at least the training time, the run's cost at least its GPU-hours at
// `gpu_hour_price_usd` (the price the plans use; none: no bound); energy has no such bound here. A hair of slack
// keeps a candidate that would tie.
double time_at_objective(const Objective& o, double gpu_hour_price_usd, double objective, double tokens, int gpus) {
  Objective bound = o;
  if (o.kind == ObjectiveKind::Energy) return std::numeric_limits<double>::infinity();
  if (o.kind == ObjectiveKind::Cost && o.run_level()) {
    if (!(gpu_hour_price_usd > 0)) return std::numeric_limits<double>::infinity();
    bound.gpu_hour_price_usd = gpu_hour_price_usd;
  }
  const double at_one_second = objective_value(bound, tokens, gpus);
  const double t = maximises(o.kind) ? at_one_second / objective : objective / at_one_second;
  return t * (1 + 1e-9);
}

}  // namespace

Scenario load_tune_base(const ScenarioSource& source, const std::vector<std::string>& overrides,
                        bool& reset_stage_keys) {
  std::vector<std::string> as_written = overrides;
  as_written.emplace_back("parallelism.data=null");
  std::optional<ScenarioError> first;
  try {
    Scenario s = load_scenario(source, as_written);
    reset_stage_keys = space_basis(s).reset_stage_keys;
    return s;
  } catch (const ScenarioError& e) { first = e; }
  // Only the model, cluster and batch matter to the space: retry with no model parallelism at all.
  std::vector<std::string> neutral = as_written;
  for (const char* o :
       {"parallelism.tensor=1", "parallelism.pipeline=1", "parallelism.context=1", "parallelism.expert=1",
        "parallelism.virtual_pipeline=1", "parallelism.first_stage_layers=null", "parallelism.last_stage_layers=null",
        "training.recompute_num_layers=null", "training.micro_batch_size=1"})
    neutral.emplace_back(o);
  try {
    Scenario s = load_scenario(source, neutral);
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
  const Scenario base = load_tune_base(request.scenario, out.base_overrides, reset_stage_keys);
  if (!base.has_training_job)
    throw Error(base.file +
                ": tune needs a training job (model, training, parallelism); this is a collective benchmark");
  out.scenario = base.name;
  out.model = base.model.name;
  out.gpu = base.cluster.gpu.name;
  out.basis = space_basis(base);
  out.basis.reset_stage_keys = reset_stage_keys;
  // A run-level objective plans each candidate's whole run at the scenario's resilience, power and cost blocks.
  PointOptions plan_options;
  const Objective& objective = request.objective;
  const double gpu_hour_price =
      objective.gpu_hour_price_usd > 0 ? objective.gpu_hour_price_usd : base.cost.usd_per_gpu_hour.value_or(0);
  if (objective.run_level()) {
    check_plan_inputs(base);
    plan_options.plan_runs(objective.tokens, objective.gpu_hour_price_usd > 0
                                                 ? std::optional<double>(objective.gpu_hour_price_usd)
                                                 : std::nullopt);
    if (objective.kind == ObjectiveKind::Cost && !(gpu_hour_price > 0) && !base.cost.usd_per_mwh)
      throw Error(
          "--objective cost with --tokens: the run's cost needs a price: --gpu-hour-price, or cost.usd_per_gpu_hour "
          "or cost.usd_per_mwh in the scenario");
  }

  const std::vector<TuneCandidate> candidates = enumerate_candidates(out.basis, space);
  std::set<int> gpu_counts;
  for (const TuneCandidate& c : candidates) gpu_counts.insert(c.num_gpus);
  out.varies_num_gpus = gpu_counts.size() > 1;
  if (gpu_counts.size() == 1) out.basis.num_gpus = *gpu_counts.begin();  // pinned by --set or --space

  std::vector<Screening> screens = screen_candidates(request.scenario, out.base_overrides, candidates, out.basis,
                                                     space.allow_tp_beyond_scale_up, request.threads);
  mark_dominated(candidates, screens);

  // Simulate the survivors; where the simulator refuses one that screening let through, the next
  // heavier recompute of its group is simulated in another round (promote_dominated).
  std::vector<RunState> runs(candidates.size(), RunState::NotRun);
  std::vector<std::size_t> batch;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (screens[i].verdict == Verdict::Simulate) batch.push_back(i);
  const double tokens =
      static_cast<double>(base.training.global_batch_size) * static_cast<double>(base.model.seq_length);
  // What a point that gave no result says about its candidate (the simulator's own checks, e.g. interleaving needs
  // as many micro-batches as stages, make it invalid too).
  const auto no_result = [&](std::size_t i, const PointOutcome& o) {
    runs[i] = RunState::NoResult;
    if (o.status == PointStatus::Invalid) screens[i].verdict = Verdict::Invalid;
    if (o.status == PointStatus::OutOfMemory) screens[i].verdict = Verdict::OutOfMemory;
    screens[i].reason = o.status != PointStatus::Ok ? o.reason
                        : request.objective.run_level()
                            ? std::string("the run plan has no ") + objective_name(request.objective.kind)
                            : "the simulation reported no throughput";
  };
  std::size_t done_before = 0;
  while (!batch.empty()) {
    std::vector<Overrides> points(candidates.size());
    for (std::size_t i : batch) {
      points[i] = out.base_overrides;
      const std::vector<std::string> own = candidates[i].overrides(out.basis.reset_stage_keys);
      points[i].insert(points[i].end(), own.begin(), own.end());
    }
    const std::size_t total = done_before + batch.size();
    // The likely best first (least work per GPU), so that the listed ones are found early and candidates whose
    // compute alone cannot beat them stop before the engine (run_scenario's give_up_above_s).
    std::vector<std::size_t> order = batch;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return screens[a].work_estimate < screens[b].work_estimate; });
    // Waves of a fixed size, whatever the thread count, so that the limit each wave runs under (from the results
    // of the waves before it), and so the outcome, are the same on every machine.
    for (std::size_t first = 0; first < order.size(); first += kTuneWave) {
      const auto from = order.begin() + static_cast<std::ptrdiff_t>(first);
      const std::vector<std::size_t> wave(
          from, from + static_cast<std::ptrdiff_t>(std::min(kTuneWave, order.size() - first)));
      PointOptions options = plan_options;
      if (const auto threshold = listed_threshold(out.ranked, request.top, objective.kind)) {
        options.give_up_above_s.assign(candidates.size(), std::numeric_limits<double>::infinity());
        for (std::size_t i : wave)
          options.give_up_above_s[i] =
              time_at_objective(objective, gpu_hour_price, *threshold, tokens, candidates[i].num_gpus);
      }
      ProgressFn progress;
      const std::size_t before = done_before + first;
      if (request.progress)
        progress = [&request, before, total](std::size_t done, std::size_t) { request.progress(before + done, total); };
      const std::vector<PointOutcome> outcomes =
          evaluate_points(request.scenario, points, wave, request.threads, options, progress);
      for (std::size_t j = 0; j < wave.size(); ++j) {
        const std::size_t i = wave[j];
        const PointOutcome& o = outcomes[j];
        const std::optional<double> value =
            o.status == PointStatus::Ok ? objective_of(objective, o.result, candidates[i].num_gpus) : std::nullopt;
        if (value) {
          runs[i] = RunState::Ok;
          out.ranked.push_back({candidates[i], o.result, *value});
        } else if (o.status == PointStatus::Bounded) {
          runs[i] = RunState::Bounded;
        } else {
          no_result(i, o);
        }
      }
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
  for (RunState r : runs) out.counts.bounded += r == RunState::Bounded ? 1 : 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Screening& s = screens[i];
    if (s.verdict == Verdict::Invalid && out.first_invalid.empty()) out.first_invalid = s.reason;
    if (s.verdict == Verdict::Simulate && runs[i] == RunState::NoResult) {
      ++out.counts.failed;
      if (out.first_failure.empty()) out.first_failure = candidates[i].label() + ": " + s.reason;
    }
    if (s.verdict == Verdict::OutOfMemory && s.peak_gib > s.capacity_gib &&
        (!out.closest_miss ||
         s.peak_gib - s.capacity_gib < out.closest_miss->peak_gib - out.closest_miss->capacity_gib))
      out.closest_miss = ClosestMiss{candidates[i], s.peak_gib, s.capacity_gib};
  }
  rank_configs(out.ranked, objective.kind);
  return out;
}

}  // namespace trainsim::explore
