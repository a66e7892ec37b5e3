// The search space of `trainsim tune`: default lists, --space, pinned --set, and the candidates'
// overrides. Expected counts are worked out by hand in the comments.
#include <algorithm>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/tune_space.hpp"
#include "support/error_of.hpp"

using namespace trainsim;
using namespace trainsim::explore;
using ::testing::HasSubstr;
using trainsim::test::error_of;

namespace {

// 8 GPUs, 4 heads (and 4 query groups), 4 layers, global batch 16, scale-up domain 8, Megatron.
SpaceBasis small_basis() {
  SpaceBasis b;
  b.num_gpus = 8;
  b.num_layers = 4;
  b.heads = 4;
  b.query_groups = 4;
  b.seq_length = 1024;
  b.num_experts = 0;
  b.global_batch_size = 16;
  b.scale_up_domain = 8;
  b.framework = Framework::Megatron;
  return b;
}

std::set<int> values_of(const std::vector<TuneCandidate>& cands, TuneDim d) {
  std::set<int> out;
  for (const auto& c : cands) out.insert(c.value(d));
  return out;
}

}  // namespace

// tensor in {1,2,4} (powers of two dividing 4 heads); pipeline p | 4 layers with t*p | 8:
// t1: p 1,2,4; t2: p 1,2,4; t4: p 1,2 (4x4 = 16 > 8). data = 8/(t*p).
// virtual_pipeline: {1} at p 1 and p 4 (4 % (4*2) != 0), {1,2} at p 2. SP only on at t > 1.
// ZeRO {0,1}; mbs: powers of two <= 8 dividing 16/data (d8: 1,2; d4: 1,2,4; d2, d1: 1,2,4,8); recompute x3.
//  t1p1 (d8): 1x2x2x3 = 12   t1p2 (d4): 2x2x3x3 = 36   t1p4 (d2): 1x2x4x3 = 24
//  t2p1 (d4): 1x2x3x3 = 18   t2p2 (d2): 2x2x4x3 = 48   t2p4 (d1): 1x2x4x3 = 24
//  t4p1 (d2): 1x2x4x3 = 24   t4p2 (d1): 2x2x4x3 = 48   total 234.
TEST(TuneSpace, DefaultSpaceOfASmallCaseHasTheHandCountedCandidates) {
  const std::vector<TuneCandidate> cands = enumerate_candidates(small_basis(), {});
  EXPECT_EQ(cands.size(), 234u);

  std::set<std::pair<int, int>> tp;
  for (const auto& c : cands) {
    tp.insert({c.tensor, c.pipeline});
    EXPECT_EQ(c.tensor * c.pipeline * c.context * c.data, 8) << c.label();
    EXPECT_EQ(c.num_gpus, 8);
    EXPECT_EQ(c.context, 1);
    EXPECT_EQ(c.expert, 1);
    EXPECT_EQ(c.sequence_parallel, c.tensor > 1) << c.label();
    if (c.virtual_pipeline > 1) {
      EXPECT_EQ(c.pipeline, 2) << c.label();
      EXPECT_EQ(c.virtual_pipeline, 2) << c.label();
    }
    EXPECT_EQ((16 / c.data) % c.micro_batch_size, 0) << c.label();
    EXPECT_LE(c.micro_batch_size, 8);
  }
  const std::set<std::pair<int, int>> expected = {{1, 1}, {1, 2}, {1, 4}, {2, 1}, {2, 2}, {2, 4}, {4, 1}, {4, 2}};
  EXPECT_EQ(tp, expected);
  EXPECT_EQ(values_of(cands, TuneDim::ZeroStage), (std::set<int>{0, 1}));
  EXPECT_EQ(values_of(cands, TuneDim::Recompute), (std::set<int>{0, 1, 2}));
  EXPECT_EQ(values_of(cands, TuneDim::MicroBatchSize), (std::set<int>{1, 2, 4, 8}));

  // In key order, without duplicates: the order ties are broken in.
  for (std::size_t i = 1; i < cands.size(); ++i) EXPECT_TRUE(key_less(cands[i - 1], cands[i])) << cands[i].label();
  // The first: everything at its smallest, data-parallel only.
  EXPECT_EQ(cands.front().label(), "TP 1 PP 1 DP 8 CP 1 EP 1 VP 1 SP off ZeRO 0 mbs 1 recompute none");
}

TEST(TuneSpace, SpaceReplacesADimensionsDefaultValues) {
  SpaceSpec spec;
  add_space_values(spec, "parallelism.pipeline=4,2,4");  // unsorted, repeated: sorted and unique
  add_space_values(spec, "recompute=full");              // the short name works too
  EXPECT_EQ(spec.given.at(TuneDim::Pipeline), (std::vector<int>{2, 4}));
  const auto cands = enumerate_candidates(small_basis(), spec);
  EXPECT_EQ(values_of(cands, TuneDim::Pipeline), (std::set<int>{2, 4}));
  EXPECT_EQ(values_of(cands, TuneDim::Recompute), (std::set<int>{2}));
  // t4 x p4 = 16 does not divide 8 GPUs: kept (pruning counts it invalid), with no data size.
  bool found = false;
  for (const auto& c : cands)
    if (c.tensor == 4 && c.pipeline == 4) {
      found = true;
      EXPECT_EQ(c.data, 0);
      const auto o = c.overrides(false);
      EXPECT_NE(std::find(o.begin(), o.end(), "parallelism.data=null"), o.end());
    }
  EXPECT_TRUE(found);
}

TEST(TuneSpace, SequenceParallelCollapsesToOffAtTensorOne) {
  SpaceSpec spec;
  add_space_values(spec, "parallelism.sequence_parallel=true,false");
  add_space_values(spec, "parallelism.pipeline=1");
  add_space_values(spec, "parallelism.zero_stage=1");
  add_space_values(spec, "training.micro_batch_size=1");
  add_space_values(spec, "training.recompute=none");
  const auto cands = enumerate_candidates(small_basis(), spec);
  // t1: SP off only; t2, t4: both.
  ASSERT_EQ(cands.size(), 5u);
  EXPECT_FALSE(cands[0].sequence_parallel);
  EXPECT_EQ(cands[0].tensor, 1);
  EXPECT_EQ(cands[1].tensor, 2);
  EXPECT_FALSE(cands[1].sequence_parallel);
  EXPECT_TRUE(cands[2].sequence_parallel);
}

TEST(TuneSpace, TensorBeyondTheScaleUpDomainStaysInTheSpaceForPruningToCount) {
  SpaceBasis b = small_basis();
  b.scale_up_domain = 2;
  EXPECT_EQ(values_of(enumerate_candidates(b, {}), TuneDim::Tensor), (std::set<int>{1, 2, 4}));
}

TEST(TuneSpace, TensorDividesHeadsAndQueryGroups) {
  SpaceBasis b = small_basis();
  b.heads = 8;
  b.query_groups = 2;  // GQA: TP 4 would split 2 KV heads
  EXPECT_EQ(values_of(enumerate_candidates(b, {}), TuneDim::Tensor), (std::set<int>{1, 2}));
}

TEST(TuneSpace, LongSequencesAddContextParallelism) {
  SpaceBasis b = small_basis();
  b.num_gpus = 16;
  b.global_batch_size = 64;
  EXPECT_EQ(values_of(enumerate_candidates(b, {}), TuneDim::Context), (std::set<int>{1}));
  b.seq_length = 32768;
  const auto cands = enumerate_candidates(b, {});
  EXPECT_EQ(values_of(cands, TuneDim::Context), (std::set<int>{1, 2, 4, 8}));
  for (const auto& c : cands) EXPECT_EQ(c.tensor * c.context * c.pipeline * c.data, 16) << c.label();
}

TEST(TuneSpace, ExpertSizesDivideExpertsAndDataTimesContext) {
  SpaceBasis b = small_basis();
  b.num_experts = 4;
  const auto cands = enumerate_candidates(b, {});
  EXPECT_EQ(values_of(cands, TuneDim::Expert), (std::set<int>{1, 2, 4}));
  for (const auto& c : cands) {
    EXPECT_EQ(4 % c.expert, 0);
    EXPECT_EQ((c.data * c.context) % c.expert, 0) << c.label();
  }
  // Dense models: expert 1 only (see the default test).
}

TEST(TuneSpace, ZeroStagesFollowTheFramework) {
  SpaceBasis b = small_basis();
  b.framework = Framework::DeepSpeed;
  EXPECT_EQ(values_of(enumerate_candidates(b, {}), TuneDim::ZeroStage), (std::set<int>{0, 1, 2, 3}));
  b.framework = Framework::FSDP;
  EXPECT_EQ(values_of(enumerate_candidates(b, {}), TuneDim::ZeroStage), (std::set<int>{2, 3}));
}

TEST(TuneSpace, NumGpusInTheSpaceDerivesDataPerPoint) {
  SpaceSpec spec;
  add_space_values(spec, "cluster.num_gpus=4,8");
  const auto cands = enumerate_candidates(small_basis(), spec);
  EXPECT_EQ(values_of(cands, TuneDim::NumGpus), (std::set<int>{4, 8}));
  for (const auto& c : cands) EXPECT_EQ(c.tensor * c.pipeline * c.data, c.num_gpus) << c.label();
}

TEST(TuneSpace, BadSpaceOptionsAreErrorsNamingTheFlag) {
  SpaceSpec spec;
  EXPECT_THAT(
      error_of([&] { add_space_values(spec, "parallelism.tensr=1,2"); }),
      AllOf(HasSubstr("--space"), HasSubstr("unknown key 'parallelism.tensr'"), HasSubstr("parallelism.tensor")));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.tensor"); }), HasSubstr("--space"));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.tensor=0,2"); }),
              AllOf(HasSubstr("--space parallelism.tensor"), HasSubstr("'0'")));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.tensor="); }),
              HasSubstr("--space parallelism.tensor"));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "training.recompute=some"); }),
              HasSubstr("none, selective or full"));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.zero_stage=4"); }), HasSubstr("0, 1, 2 or 3"));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.sequence_parallel=yes"); }),
              HasSubstr("true or false"));
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.data=2,4"); }),
              AllOf(HasSubstr("--space"), HasSubstr("never searches parallelism.data")));
  add_space_values(spec, "tensor=2");
  EXPECT_THAT(error_of([&] { add_space_values(spec, "parallelism.tensor=4"); }), HasSubstr("given twice"));
}

TEST(TuneSpace, SetOnASearchedKeyPinsItAndOtherSetsPassThrough) {
  SpaceSpec spec;
  const auto pass = absorb_pinned_overrides(spec, {"parallelism.tensor=2", "cluster.nic_gbps=200"});
  EXPECT_EQ(pass, (std::vector<std::string>{"cluster.nic_gbps=200"}));
  EXPECT_EQ(spec.given.at(TuneDim::Tensor), (std::vector<int>{2}));
  EXPECT_EQ(values_of(enumerate_candidates(small_basis(), spec), TuneDim::Tensor), (std::set<int>{2}));

  SpaceSpec both;
  add_space_values(both, "parallelism.tensor=1,2");
  EXPECT_THAT(error_of([&] { absorb_pinned_overrides(both, {"parallelism.tensor=4"}); }),
              AllOf(HasSubstr("--set"), HasSubstr("given twice")));
  SpaceSpec s2;
  EXPECT_THAT(error_of([&] { absorb_pinned_overrides(s2, {"parallelism.data=2"}); }),
              AllOf(HasSubstr("--set parallelism.data"), HasSubstr("derives")));
  EXPECT_THAT(error_of([&] { absorb_pinned_overrides(s2, {"training.recompute_num_layers=1"}); }),
              HasSubstr("--set training.recompute_num_layers"));
  EXPECT_THAT(error_of([&] { absorb_pinned_overrides(s2, {"training.recompute=sometimes"}); }),
              AllOf(HasSubstr("--set training.recompute"), HasSubstr("none, selective or full")));
}

TEST(TuneSpace, OverridesSelectEveryKeyAndTheDerivedDataSize) {
  TuneCandidate c;
  c.num_gpus = 8;
  c.tensor = 2;
  c.pipeline = 2;
  c.data = 2;
  c.virtual_pipeline = 2;
  c.sequence_parallel = true;
  c.zero_stage = 1;
  c.micro_batch_size = 4;
  c.recompute = RecomputeGranularity::Selective;
  const std::vector<std::string> expected = {"cluster.num_gpus=8",
                                             "parallelism.tensor=2",
                                             "parallelism.context=1",
                                             "parallelism.pipeline=2",
                                             "parallelism.data=2",
                                             "parallelism.expert=1",
                                             "parallelism.virtual_pipeline=2",
                                             "parallelism.sequence_parallel=true",
                                             "parallelism.zero_stage=1",
                                             "training.micro_batch_size=4",
                                             "training.recompute=selective"};
  EXPECT_EQ(c.overrides(false), expected);
  const auto reset = c.overrides(true);
  EXPECT_EQ(reset.size(), expected.size() + 3);
  EXPECT_EQ(reset.back(), "training.recompute_num_layers=null");
  EXPECT_EQ(c.label(), "TP 2 PP 2 DP 2 CP 1 EP 1 VP 2 SP on ZeRO 1 mbs 4 recompute selective");
}
