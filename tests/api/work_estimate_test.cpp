// The work estimate made before anything is built: close to the ops the generator really emits (so
// the limit means what it says), multiplied by the ranks simulated per stage with per_rank, and a
// refusal above simulation.max_ops that names the key making the work largest.
#include <cmath>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/work_estimate.hpp"
#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "support/examples.hpp"
#include "trainsim/trainsim.hpp"
#include "workload/generator.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;

using test::example;

// The refusal's key, or "" when the estimate passes.
std::string refused_key(const Scenario& s, bool per_rank = false) {
  try {
    check_work_limit(s, estimate_work(s, per_rank));
  } catch (const ScenarioError& e) { return e.key(); }
  return "";
}

class EstimateMatchesGenerator : public ::testing::TestWithParam<const char*> {};

// Dense, MoE with MTP and full recompute, interleaved, TP with sequence parallelism: the estimate is
// within 10% of Workload::op_count() (measured: within 1% on every example, -8% to +15% on all
// 265 published training cases).
TEST_P(EstimateMatchesGenerator, WithinTenPercent) {
  const Scenario s = load_scenario(example(GetParam()));
  const double estimated = estimate_work(s, false).ops;
  const auto actual = static_cast<double>(generate_workload(s).op_count());
  EXPECT_NEAR(estimated / actual, 1.0, 0.10) << "estimated " << estimated << ", generated " << actual;
}

INSTANTIATE_TEST_SUITE_P(Examples, EstimateMatchesGenerator,
                         ::testing::Values("tiny-8-h100.yaml", "mixtral-8x7b-64-h100.yaml", "llama3-70b-512-h100.yaml",
                                           "gpt3-175b-1024-h100-interleaved.yaml", "deepseek-v3-2048-h800.yaml"));

// PyTorch FSDP's per-layer gathers and reduce-scatters are counted for the modes that issue them (FULL_SHARD, and
// SHARD_GRAD_OP without a pipeline); NO_SHARD reduces through buckets. Measured: +1.1 to +1.2% on each (SHARD_GRAD_OP
// was -5.1% when only FULL_SHARD was counted).
TEST(WorkEstimate, FsdpShardingModesMatchTheGenerator) {
  for (const char* zero : {"parallelism.zero_stage=3", "parallelism.zero_stage=2", "parallelism.zero_stage=0"}) {
    const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {"parallelism.framework=fsdp", "parallelism.tensor=1",
                                                                   "parallelism.data=8", zero});
    const double estimated = estimate_work(s, false).ops;
    const auto actual = static_cast<double>(generate_workload(s).op_count());
    EXPECT_NEAR(estimated / actual, 1.0, 0.03) << zero << ": estimated " << estimated << ", generated " << actual;
  }
}

TEST(WorkEstimate, PerRankMultipliesByTheRanksOfAStage) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"));  // TP 2 x DP 4, one stage
  const WorkEstimate one = estimate_work(s, false), every = estimate_work(s, true);
  EXPECT_EQ(every.ranks_per_stage, 8);
  EXPECT_DOUBLE_EQ(every.ops, 8 * one.ops);
  const Workload wl = generate_workload(s, WorkloadOptions{true});
  EXPECT_NEAR(every.ops / static_cast<double>(wl.op_count()), 1.0, 0.10);
}

TEST(WorkEstimate, ScalesWithMicroBatchesWithoutBuildingThem) {
  // 1048576 sequences (a token count typed as sequences): 131072 micro-batches of 24 layers. Counted
  // in doubles: 2^31 must not overflow on the way.
  const Scenario big = load_scenario(example("tiny-8-h100.yaml"), {"training.global_batch_size=1048576"});
  const WorkEstimate e = estimate_work(big, false);
  EXPECT_EQ(e.micro_batches, 131072);
  EXPECT_GT(e.ops, 1e8);
  EXPECT_GT(e.bytes, 1e9);
  const Scenario huge = load_scenario(example("tiny-8-h100.yaml"), {"training.global_batch_size=2147483648"});
  EXPECT_NEAR(estimate_work(huge, false).ops / e.ops, 2048, 1);
}

TEST(WorkLimit, RefusalNamesTheKeyThatMakesTheWorkLargest) {
  const std::string tiny = example("tiny-8-h100.yaml");
  EXPECT_EQ(refused_key(load_scenario(tiny)), "");
  // Micro-batches: the global batch, with the tokens-versus-sequences hint.
  const Scenario tokens = load_scenario(tiny, {"training.global_batch_size=1048576"});
  EXPECT_EQ(refused_key(tokens), "training.global_batch_size");
  try {
    check_work_limit(tokens, estimate_work(tokens, false));
  } catch (const ScenarioError& e) {
    EXPECT_THAT(e.detail(), HasSubstr("131072 micro-batches"));
    EXPECT_THAT(e.detail(), HasSubstr("simulation.max_ops 50000000"));
    EXPECT_THAT(
        e.detail(),
        HasSubstr("counts sequences, not tokens (1048576 tokens at model.seq_length 2048 would be 512 sequences)"));
  }
  // Layers: 24 layers are the largest factor against 4 micro-batches.
  EXPECT_EQ(refused_key(load_scenario(tiny, {"simulation.max_ops=1000"})), "model.num_layers");
  // Every rank of 128 per stage simulated: DeepSeek-V3 on 2048 GPUs is ~90 million ops.
  const Scenario ds = load_scenario(example("deepseek-v3-2048-h800.yaml"));
  EXPECT_EQ(refused_key(ds, false), "");
  EXPECT_EQ(refused_key(ds, true), "simulation.per_rank");
  // 0 lifts the limit.
  EXPECT_EQ(refused_key(load_scenario(tiny, {"training.global_batch_size=1048576", "simulation.max_ops=0"})), "");
}

TEST(WorkLimit, RunScenarioRefusesBeforeBuildingAnything) {
  const Scenario s = load_scenario(example("tiny-8-h100.yaml"), {"training.global_batch_size=2147483648"});
  try {
    run_scenario(s);
    ADD_FAILURE() << "not refused";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "training.global_batch_size"); }
}

}  // namespace
}  // namespace trainsim
