// `trainsim tune` end to end in the library: its best configuration is the best of an exhaustive
// sweep of the same space, the thread count changes nothing, and the edge cases (nothing fits, pinned
// keys, a GPU count in the space, a base that is invalid as written).
#include <map>
#include <set>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/parallel_eval.hpp"
#include "explore/tune_search.hpp"
#include "tune_test_scenarios.hpp"

using namespace trainsim;
using namespace trainsim::explore;
using ::testing::HasSubstr;

namespace {

TuneRequest request(const std::string& path, int threads = 2) {
  TuneRequest r;
  r.scenario = path;
  r.threads = threads;
  return r;
}

std::string fingerprint(const TuneOutcome& o) {
  std::string s = std::to_string(o.counts.candidates) + "/" + std::to_string(o.counts.invalid) + "/" +
                  std::to_string(o.counts.out_of_memory) + "/" + std::to_string(o.counts.dominated) + "/" +
                  std::to_string(o.counts.simulated) + "/" + std::to_string(o.counts.bounded) + "/" +
                  std::to_string(o.counts.failed) + "\n";
  for (const auto& r : o.ranked) s += r.candidate.label(true) + " " + r.result.dump() + "\n";
  return s;
}

}  // namespace

// The check: evaluate EVERY candidate of the space (no pruning at all) and compare the best
// with tune's #1. The space (4 GiB GPUs, pipeline 1, 2 or 3, ZeRO 1) has candidates of every pruning kind.
TEST(TuneSearch, BestEqualsTheBestOfAnExhaustiveSweepOfTheSameSpace) {
  const std::string path = tune_test::write_scenario("exhaustive", tune_test::tiny_scenario_text(4.0));
  TuneRequest req = request(path);
  add_space_values(req.space, "parallelism.pipeline=1,2,3");
  add_space_values(req.space, "parallelism.zero_stage=1");
  const TuneOutcome tuned = run_tune(req);
  ASSERT_FALSE(tuned.ranked.empty());
  EXPECT_GT(tuned.counts.invalid, 0u);
  EXPECT_GT(tuned.counts.out_of_memory, 0u);
  EXPECT_GT(tuned.counts.dominated, 0u);
  EXPECT_GT(tuned.counts.simulated, 1u);
  EXPECT_EQ(tuned.counts.candidates, tuned.counts.invalid + tuned.counts.tp_beyond_scale_up +
                                         tuned.counts.out_of_memory + tuned.counts.dominated + tuned.counts.simulated);

  const std::vector<TuneCandidate> all = enumerate_candidates(tuned.basis, req.space);
  ASSERT_EQ(all.size(), tuned.counts.candidates);
  std::vector<Overrides> points;
  for (const auto& c : all) points.push_back(c.overrides(tuned.basis.reset_stage_keys));
  const std::vector<PointOutcome> outcomes = evaluate_all(path, points, 2);

  std::vector<RankedConfig> exhaustive;
  std::size_t invalid = 0, oom = 0;
  std::map<std::array<int, kTuneDims>, double> time_of;
  for (std::size_t i = 0; i < all.size(); ++i) {
    const PointOutcome& o = outcomes[i];
    if (o.status == PointStatus::Invalid) ++invalid;
    if (o.status == PointStatus::OutOfMemory) ++oom;
    if (o.status != PointStatus::Ok) continue;
    const double tps = o.result["tokens_per_s"].get<double>();
    exhaustive.push_back({all[i], o.result, objective_value(req.objective, tps, all[i].num_gpus)});
    time_of[all[i].key()] = o.result["iteration_time_s"].get<double>();
  }
  rank_configs(exhaustive, req.objective.kind);
  ASSERT_FALSE(exhaustive.empty());
  EXPECT_EQ(exhaustive.front().candidate.label(), tuned.ranked.front().candidate.label());
  EXPECT_EQ(exhaustive.front().result.dump(), tuned.ranked.front().result.dump());
  // Pruning agrees with what simulating says: the same candidates are invalid and out of memory.
  EXPECT_EQ(invalid, tuned.counts.invalid);
  EXPECT_EQ(oom, tuned.counts.out_of_memory);
  EXPECT_EQ(exhaustive.size(), tuned.counts.simulated + tuned.counts.dominated);

  // The premise of the dominance rule holds on every pair in this space: a heavier recompute is never faster.
  std::size_t pairs = 0;
  for (const auto& [key, t] : time_of) {
    auto lighter = key;
    for (int r = key.back() - 1; r >= 0; --r) {
      lighter.back() = r;
      const auto it = time_of.find(lighter);
      if (it == time_of.end()) continue;
      ++pairs;
      EXPECT_LE(it->second, t);
    }
  }
  EXPECT_GT(pairs, 0u);
}

TEST(TuneSearch, TheThreadCountChangesNothing) {
  const std::string path = tune_test::write_scenario("threads", tune_test::tiny_scenario_text(4.0));
  TuneRequest one = request(path, 1);
  TuneRequest two = request(path, 2);
  for (TuneRequest* r : {&one, &two}) add_space_values(r->space, "parallelism.zero_stage=1");
  EXPECT_EQ(fingerprint(run_tune(one)), fingerprint(run_tune(two)));
}

// Candidates whose compute alone cannot beat the listed ones stop before the engine; the listed ones are those a
// search that simulates every survivor finds, in the same order, with the same results.
TEST(TuneSearch, BoundingKeepsTheListedConfigurationsExact) {
  const std::string path = tune_test::write_scenario("bounded", tune_test::tiny_scenario_text(80.0));
  TuneRequest all = request(path);
  all.top = 0;  // no bound: every survivor simulated
  TuneRequest listed = request(path);
  listed.top = 3;
  for (TuneRequest* r : {&all, &listed}) add_space_values(r->space, "parallelism.zero_stage=1");
  const TuneOutcome full = run_tune(all), bounded = run_tune(listed);
  EXPECT_EQ(full.counts.bounded, 0u);
  EXPECT_GT(bounded.counts.bounded, 0u);
  EXPECT_EQ(bounded.counts.simulated, full.counts.simulated);  // bounded ones are counted among the simulated
  EXPECT_EQ(bounded.ranked.size() + bounded.counts.bounded, full.ranked.size());
  ASSERT_GE(full.ranked.size(), 3u);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(bounded.ranked[i].candidate.label(true), full.ranked[i].candidate.label(true)) << "rank " << i + 1;
    EXPECT_EQ(bounded.ranked[i].result.dump(), full.ranked[i].result.dump()) << "rank " << i + 1;
  }
  // Every one it stopped is slower than the third: its compute alone already is.
  const double third = full.ranked[2].result.at("iteration_time_s").get<double>();
  std::set<std::string> kept;
  for (const auto& r : bounded.ranked) kept.insert(r.candidate.label(true));
  for (const auto& r : full.ranked)
    if (!kept.count(r.candidate.label(true))) { EXPECT_GT(r.result.at("iteration_time_s").get<double>(), third); }
}

// A run-level objective ranks by each candidate's run plan (days with failures, restarts and checkpoints), and
// its bound (a run takes at least its training time) keeps the listed ones exact, as for the iteration's objectives.
TEST(TuneSearch, RunLevelObjectivesRankByThePlanOfEachRun) {
  const std::string text = tune_test::tiny_scenario_text(80.0);
  const std::string with_storage = tune_test::write_scenario("run-level", text.substr(0, text.find("parallelism:")) +
                                                                              "  resilience: {storage_GBps: 5}\n" +
                                                                              text.substr(text.find("parallelism:")));
  for (const ObjectiveKind kind : {ObjectiveKind::Days, ObjectiveKind::Energy}) {
    SCOPED_TRACE(objective_name(kind));
    TuneRequest all = request(with_storage), listed = request(with_storage);
    all.top = 0;
    listed.top = 2;
    for (TuneRequest* r : {&all, &listed}) {
      r->objective = read_objective(objective_name(kind), std::nullopt, std::string("1e11"));
      add_space_values(r->space, "parallelism.zero_stage=1");
    }
    const TuneOutcome full = run_tune(all), bounded = run_tune(listed);
    ASSERT_GE(full.ranked.size(), 2u);
    for (std::size_t i = 0; i < full.ranked.size(); ++i) {
      const auto& plan = full.ranked[i].result.at("run_plan");
      EXPECT_DOUBLE_EQ(full.ranked[i].objective, plan.at(kind == ObjectiveKind::Days ? "days" : "energy_mwh"));
      EXPECT_LT(plan.at("goodput").get<double>(), 1.0);  // checkpoints and failures cost something
      if (i > 0) { EXPECT_LE(full.ranked[i - 1].objective, full.ranked[i].objective); }
    }
    for (std::size_t i = 0; i < 2; ++i)
      EXPECT_EQ(bounded.ranked[i].candidate.label(true), full.ranked[i].candidate.label(true)) << "rank " << i + 1;
    // Days have a bound (the training time), energy none here: every survivor is simulated.
    if (kind == ObjectiveKind::Days) {
      EXPECT_GT(bounded.counts.bounded, 0u);
    } else {
      EXPECT_EQ(bounded.counts.bounded, 0u);
    }
  }
  // Without a storage bandwidth the base cannot be planned: one error naming the key, before anything runs.
  TuneRequest no_storage = request(tune_test::write_scenario("run-level-bare", tune_test::tiny_scenario_text(80.0)));
  no_storage.objective = read_objective("days", std::nullopt, std::string("1e11"));
  try {
    run_tune(no_storage);
    ADD_FAILURE() << "expected a ScenarioError";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "training.resilience.storage_GBps"); }
}

TEST(TuneSearch, NothingFitsGivesTheSmallestShortfall) {
  const std::string path = tune_test::write_scenario("nofit", tune_test::tiny_scenario_text(1.0));
  const TuneOutcome o = run_tune(request(path));
  EXPECT_TRUE(o.ranked.empty());
  EXPECT_EQ(o.counts.simulated, 0u);
  EXPECT_GT(o.counts.out_of_memory, 0u);
  ASSERT_TRUE(o.closest_miss.has_value());
  EXPECT_DOUBLE_EQ(o.closest_miss->capacity_gib, 1.0);
  EXPECT_GT(o.closest_miss->peak_gib, 1.0);
  // With 4 GiB the closest miss fits: it needs less than 4 GiB.
  EXPECT_LT(o.closest_miss->peak_gib, 4.0);
}

TEST(TuneSearch, SetOnASearchedKeyPinsIt) {
  const std::string path = tune_test::write_scenario("pinned", tune_test::tiny_scenario_text(80.0));
  TuneRequest req = request(path);
  req.overrides = {"parallelism.tensor=2", "training.recompute=none", "cluster.num_gpus=16"};
  add_space_values(req.space, "parallelism.zero_stage=1");
  add_space_values(req.space, "training.micro_batch_size=1,2");
  const TuneOutcome o = run_tune(req);
  ASSERT_FALSE(o.ranked.empty());
  for (const auto& r : o.ranked) {
    EXPECT_EQ(r.candidate.tensor, 2);
    EXPECT_EQ(r.candidate.recompute, RecomputeGranularity::None);
    EXPECT_EQ(r.candidate.num_gpus, 16);
    EXPECT_EQ(r.result["tokens_per_s"].get<double>(), r.objective);
  }
  EXPECT_TRUE(o.base_overrides.empty());
  EXPECT_EQ(o.basis.num_gpus, 16);  // what the report's header shows
  EXPECT_FALSE(o.varies_num_gpus);
}

TEST(TuneSearch, GpuCountsInTheSpaceAreRankedByCost) {
  const std::string path = tune_test::write_scenario("gpus", tune_test::tiny_scenario_text(80.0));
  TuneRequest req = request(path);
  add_space_values(req.space, "cluster.num_gpus=8,16");
  add_space_values(req.space, "parallelism.tensor=1");
  add_space_values(req.space, "parallelism.pipeline=1");
  req.objective = {ObjectiveKind::Cost, 2.5, 0};
  const TuneOutcome o = run_tune(req);
  EXPECT_TRUE(o.varies_num_gpus);
  ASSERT_GE(o.ranked.size(), 2u);
  std::set<int> gpus;
  for (std::size_t i = 0; i < o.ranked.size(); ++i) {
    const auto& r = o.ranked[i];
    gpus.insert(r.candidate.num_gpus);
    EXPECT_EQ(r.candidate.data, r.candidate.num_gpus);
    EXPECT_NEAR(r.objective, r.candidate.num_gpus * 2.5 / 3600 / r.result["tokens_per_s"].get<double>() * 1e6, 1e-12);
    if (i > 0) { EXPECT_LE(o.ranked[i - 1].objective, r.objective); }
  }
  EXPECT_EQ(gpus, (std::set<int>{8, 16}));
}

TEST(TuneSearch, ABaseInvalidAsWrittenStillDefinesTheSpace) {
  std::string text = tune_test::tiny_scenario_text(80.0);
  text.replace(text.find("tensor: 2"), 9, "tensor: 3");  // 4 heads over TP 3: invalid as written
  const std::string path = tune_test::write_scenario("invalid_base", text);
  TuneRequest req = request(path);
  add_space_values(req.space, "parallelism.zero_stage=1");
  add_space_values(req.space, "training.recompute=none");
  const TuneOutcome o = run_tune(req);
  EXPECT_TRUE(o.basis.reset_stage_keys);
  ASSERT_FALSE(o.ranked.empty());

  // A base that cannot load at all reports the scenario's own error.
  std::string broken_text = tune_test::tiny_scenario_text(80.0);
  broken_text.replace(broken_text.find("gpt3-1.3b"), 9, "no-such-model");
  const std::string broken = tune_test::write_scenario("broken_base", broken_text);
  try {
    run_tune(request(broken));
    FAIL() << "expected an error";
  } catch (const ScenarioError& e) { EXPECT_THAT(e.what(), HasSubstr("no-such-model")); }
}

TEST(TuneSearch, CompanionFlagsAreCheckedBeforeAnythingRuns) {
  TuneRequest req = request("/nonexistent.yaml");
  req.objective.kind = ObjectiveKind::TimeToTrain;
  try {
    run_tune(req);
    FAIL() << "expected an error";
  } catch (const Error& e) { EXPECT_THAT(e.what(), HasSubstr("--tokens")); }
}
