// Each pruning rule of `trainsim tune`, on a tiny scenario, and the dominance rule on hand-made verdicts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "explore/point_eval.hpp"
#include "explore/tune_prune.hpp"
#include "explore/tune_search.hpp"
#include "scenario/scenario_loader.hpp"
#include "tune_test_scenarios.hpp"

using namespace trainsim;
using namespace trainsim::explore;
using ::testing::HasSubstr;

namespace {

struct TinyCase {
  std::string path;
  SpaceBasis basis;
};

TinyCase setup(const std::string& name, double memory_gib, int scale_up_domain = 8) {
  TinyCase s;
  s.path = tune_test::write_scenario(name, tune_test::tiny_scenario_text(memory_gib, scale_up_domain));
  bool reset = false;
  s.basis = space_basis(load_tune_base(s.path, {}, reset));
  s.basis.reset_stage_keys = reset;
  return s;
}

TuneCandidate candidate(int tensor, int pipeline, int micro_batch,
                        RecomputeGranularity r = RecomputeGranularity::None) {
  TuneCandidate c;
  c.num_gpus = 8;
  c.tensor = tensor;
  c.pipeline = pipeline;
  c.data = 8 % (tensor * pipeline) == 0 ? 8 / (tensor * pipeline) : 0;
  c.sequence_parallel = tensor > 1;
  c.zero_stage = 1;
  c.micro_batch_size = micro_batch;
  c.recompute = r;
  return c;
}

std::vector<std::string> with_base(const TuneCandidate& c) { return c.overrides(false); }

}  // namespace

TEST(TunePrune, TensorBeyondTheScaleUpDomainIsPrunedUnlessAllowed) {
  const TinyCase s = setup("prune_tp", 80, 2);  // scale-up domains of 2 GPUs
  const std::vector<TuneCandidate> cands = {candidate(2, 1, 1), candidate(4, 1, 1)};
  auto screens = screen_candidates(s.path, {}, cands, s.basis, false, 1);
  EXPECT_EQ(screens[0].verdict, Verdict::Simulate) << screens[0].reason;
  EXPECT_EQ(screens[1].verdict, Verdict::TpBeyondScaleUp);
  EXPECT_THAT(screens[1].reason, HasSubstr("--allow-tp-beyond-scale-up"));
  screens = screen_candidates(s.path, {}, cands, s.basis, true, 1);
  EXPECT_EQ(screens[1].verdict, Verdict::Simulate) << screens[1].reason;
}

TEST(TunePrune, ConfigurationsTheLoaderRefusesAreInvalidWithItsReason) {
  const TinyCase s = setup("prune_invalid", 80);
  // 4 heads are not divisible by tensor 3 (and 3 does not divide 8 GPUs either).
  TuneCandidate heads = candidate(1, 1, 1);
  heads.tensor = 3;
  heads.data = 0;
  // Pipeline 3 does not divide 4 layers; 8/(1*3) is no integer either.
  TuneCandidate layers = candidate(1, 1, 1);
  layers.pipeline = 3;
  layers.data = 0;
  // micro-batch 4 x data 8 = 32 does not divide the global batch of 16.
  const TuneCandidate batch = candidate(1, 1, 4);
  const auto screens = screen_candidates(s.path, {}, {heads, layers, batch, candidate(1, 1, 2)}, s.basis, false, 2);
  EXPECT_EQ(screens[0].verdict, Verdict::Invalid);
  EXPECT_THAT(screens[0].reason, HasSubstr("tensor 3"));
  EXPECT_EQ(screens[1].verdict, Verdict::Invalid);
  EXPECT_EQ(screens[2].verdict, Verdict::Invalid);
  EXPECT_THAT(screens[2].reason, HasSubstr("training.global_batch_size"));
  EXPECT_EQ(screens[3].verdict, Verdict::Simulate) << screens[3].reason;
  // The verdict agrees with what evaluating the point says.
  EXPECT_EQ(evaluate_point(s.path, with_base(batch)).status, PointStatus::Invalid);
}

TEST(TunePrune, OutOfMemoryUsesTheSameTestAsRun) {
  // 4 GiB GPUs: data-parallel only with micro-batch 2 holds the whole model and more activations than
  // TP 4 with micro-batch 1.
  const TinyCase s = setup("prune_oom", 4);
  const TuneCandidate big = candidate(1, 1, 2);
  const TuneCandidate small = candidate(4, 1, 1);
  const auto screens = screen_candidates(s.path, {}, {big, small}, s.basis, false, 1);
  ASSERT_EQ(screens[0].verdict, Verdict::OutOfMemory) << screens[0].reason;
  EXPECT_GT(screens[0].peak_gib, screens[0].capacity_gib);
  EXPECT_DOUBLE_EQ(screens[0].capacity_gib, 4.0);
  ASSERT_EQ(screens[1].verdict, Verdict::Simulate) << screens[1].reason;
  EXPECT_LE(screens[1].peak_gib, 4.0);
  // `trainsim run` refuses the first for the same reason and runs the second, with the same peak.
  EXPECT_EQ(evaluate_point(s.path, with_base(big)).status, PointStatus::OutOfMemory);
  const PointOutcome ok = evaluate_point(s.path, with_base(small));
  ASSERT_EQ(ok.status, PointStatus::Ok) << ok.reason;
  EXPECT_NEAR(ok.result["memory"]["peak"].get<double>(), screens[1].peak_gib, 1e-9);
}

// Dominance: within a group identical but for recompute, only the lightest recompute that passed
// screening is simulated; other groups are untouched.
TEST(TunePrune, OnlyTheLightestFittingRecomputeOfAGroupIsSimulated) {
  using R = RecomputeGranularity;
  std::vector<TuneCandidate> cands;
  for (int mbs : {1, 2, 4})
    for (R r : {R::None, R::Selective, R::Full}) cands.push_back(candidate(2, 1, mbs, r));
  std::vector<Screening> screens(cands.size());
  // mbs 1: all fit. mbs 2: none does not fit. mbs 4: only full fits.
  screens[3].verdict = Verdict::OutOfMemory;
  screens[6].verdict = Verdict::OutOfMemory;
  screens[7].verdict = Verdict::OutOfMemory;
  mark_dominated(cands, screens);
  const std::vector<Verdict> expected = {Verdict::Simulate,    Verdict::Dominated,   Verdict::Dominated,
                                         Verdict::OutOfMemory, Verdict::Simulate,    Verdict::Dominated,
                                         Verdict::OutOfMemory, Verdict::OutOfMemory, Verdict::Simulate};
  for (std::size_t i = 0; i < cands.size(); ++i)
    EXPECT_STREQ(to_string(screens[i].verdict), to_string(expected[i])) << cands[i].label();
  EXPECT_THAT(screens[1].reason, HasSubstr("recompute none also fits"));

  const PruneCounts counts = count_verdicts(screens);
  EXPECT_EQ(counts.candidates, 9u);
  EXPECT_EQ(counts.out_of_memory, 3u);
  EXPECT_EQ(counts.dominated, 3u);
  EXPECT_EQ(counts.to_simulate, 3u);
}

TEST(TunePrune, ADominatedRecomputeIsSimulatedWhenTheLighterOneGivesNoResult) {
  using R = RecomputeGranularity;
  std::vector<TuneCandidate> cands;
  for (int mbs : {1, 2})
    for (R r : {R::None, R::Selective, R::Full}) cands.push_back(candidate(2, 1, mbs, r));
  std::vector<Screening> screens(cands.size());
  mark_dominated(cands, screens);
  std::vector<RunState> runs(cands.size(), RunState::NotRun);
  runs[0] = RunState::NoResult;  // mbs 1, none: refused by the simulator
  screens[0].verdict = Verdict::Invalid;
  runs[3] = RunState::Ok;  // mbs 2, none: fine
  EXPECT_EQ(promote_dominated(cands, screens, runs), (std::vector<std::size_t>{1}));
  EXPECT_EQ(screens[1].verdict, Verdict::Simulate);
  EXPECT_EQ(screens[2].verdict, Verdict::Dominated);
  EXPECT_EQ(screens[4].verdict, Verdict::Dominated);
  // While the promoted one has not run, nothing more is promoted.
  EXPECT_TRUE(promote_dominated(cands, screens, runs).empty());
}
