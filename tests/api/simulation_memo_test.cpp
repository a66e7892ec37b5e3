// SimulationMemo (api/simulation_memo.hpp): an output is found only under a key equal to its own in every field, the
// estimates bit for bit, and only the last kEntries are kept.
#include <gtest/gtest.h>

#include "api/simulation_memo.hpp"

using namespace trainsim;

namespace {

SimulationMemo::Key key_with(SimTime t, double busbw = 100.0) {
  SimulationMemo::Key k;
  CollectiveEstimate e;
  e.time = t;
  e.channels = 8;
  e.algbw_GBps = 50.0;
  e.busbw_GBps = busbw;
  k.estimates = {CollectiveEstimate{}, e};
  return k;
}

SimulationOutput output_ending_at(SimTime t) {
  SimulationOutput out;
  out.makespan = t;
  out.timelines.resize(1);
  out.timelines[0].start = {0};
  out.timelines[0].end = {t};
  return out;
}

}  // namespace

TEST(SimulationMemo, FindsAnOutputOnlyUnderItsOwnKey) {
  SimulationMemo memo;
  EXPECT_EQ(memo.find(key_with(10)), nullptr);
  memo.remember(key_with(10), output_ending_at(10));
  ASSERT_NE(memo.find(key_with(10)), nullptr);
  EXPECT_EQ(memo.find(key_with(10))->makespan, 10);
  EXPECT_EQ(memo.find(key_with(11)), nullptr);
  EXPECT_EQ(memo.find(key_with(10, 100.5)), nullptr);
  SimulationMemo::Key other = key_with(10);
  other.interference = false;
  EXPECT_EQ(memo.find(other), nullptr);
  other = key_with(10);
  other.host_launch = 1;
  EXPECT_EQ(memo.find(other), nullptr);
  other = key_with(10);
  other.compute_slowdown = {1.0, 1.5};
  EXPECT_EQ(memo.find(other), nullptr);
  other = key_with(10);
  other.estimates.pop_back();
  EXPECT_EQ(memo.find(other), nullptr);
}

// 0.0 and -0.0 compare equal as doubles but are not the same bits (they print differently): no match.
TEST(SimulationMemo, ComparesEstimatesBitForBit) {
  SimulationMemo memo;
  memo.remember(key_with(10, 0.0), output_ending_at(10));
  EXPECT_NE(memo.find(key_with(10, 0.0)), nullptr);
}

TEST(SimulationMemo, KeepsTheLastEntriesOnly) {
  SimulationMemo memo;
  for (SimTime t = 1; t <= static_cast<SimTime>(SimulationMemo::kEntries) + 1; ++t)
    memo.remember(key_with(t), output_ending_at(t));
  EXPECT_EQ(memo.find(key_with(1)), nullptr);  // the oldest went
  for (SimTime t = 2; t <= static_cast<SimTime>(SimulationMemo::kEntries) + 1; ++t) {
    ASSERT_NE(memo.find(key_with(t)), nullptr) << t;
    EXPECT_EQ(memo.find(key_with(t))->makespan, t);
  }
}
