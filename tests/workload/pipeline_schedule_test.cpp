// Pipeline schedules must issue steps in exactly Megatron-Core's order
// (schedules.py::forward_backward_pipelining_without_interleaving / _with_interleaving).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "workload/pipeline_schedule.hpp"

using namespace trainsim;

namespace {
std::string step_order(const std::vector<PipelineStep>& steps) {
  std::string s;
  for (const auto& st : steps) s += (s.empty() ? "" : " ") + to_string(st);
  return s;
}
}  // namespace

// Non-interleaved 1F1B, p=4, m=8: warm-up p-r-1 forwards, 1F1B steady state, cool-down backwards; p2p helpers
// without a peer (recv on stage 0, send on the last stage) are omitted.
TEST(PipelineSchedule, OneFOneBMatchesMegatronForFourStagesEightMicroBatches) {
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::OneFOneB, 4, 0, 8)),
            "F0 sf0 F1 sf1 F2 sf2 F3 sfrb3 B0 F4 sfrb4 B1 F5 sfrb5 B2 F6 sfrb6 B3 F7 sfrb7 B4 rb5 B5 rb6 B6 rb7 B7");
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::OneFOneB, 4, 1, 8)),
            "rf0 F0 sf0 rf1 F1 sf1 rf2 F2 sfrb2 B0 sbrf0 F3 sfrb3 B1 sbrf1 F4 sfrb4 B2 sbrf2 F5 sfrb5 B3 sbrf3 "
            "F6 sfrb6 B4 sbrf4 F7 sfrb7 B5 sb5 rb6 B6 sb6 rb7 B7 sb7");
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::OneFOneB, 4, 2, 8)),
            "rf0 F0 sf0 rf1 F1 sfrb1 B0 sbrf0 F2 sfrb2 B1 sbrf1 F3 sfrb3 B2 sbrf2 F4 sfrb4 B3 sbrf3 F5 sfrb5 B4 sbrf4 "
            "F6 sfrb6 B5 sbrf5 F7 sfrb7 B6 sb6 rb7 B7 sb7");
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::OneFOneB, 4, 3, 8)),
            "rf0 F0 B0 sbrf0 F1 B1 sbrf1 F2 B2 sbrf2 F3 B3 sbrf3 F4 B4 sbrf4 F5 B5 sbrf5 F6 B6 sbrf6 F7 B7 sb7");
}

// Every stage must post the same number of p2p calls towards each neighbour as that neighbour posts
// back, or the blocking rendezvous would deadlock.
TEST(PipelineSchedule, OneFOneBPairsP2PCallsBetweenNeighbours) {
  for (int p : {2, 3, 4, 8})
    for (int m : {1, 2, 5, 8, 16}) {
      for (int r = 0; r + 1 < p; ++r) {
        int to_next = 0, from_prev = 0;
        for (const auto& st : pipeline_schedule(ScheduleKind::OneFOneB, p, r, m))
          if (st.action == PipelineAction::SendForward || st.action == PipelineAction::SendForwardRecvBackward ||
              st.action == PipelineAction::RecvBackward)
            ++to_next;
        for (const auto& st : pipeline_schedule(ScheduleKind::OneFOneB, p, r + 1, m))
          if (st.action == PipelineAction::RecvForward || st.action == PipelineAction::SendBackwardRecvForward ||
              st.action == PipelineAction::SendBackward)
            ++from_prev;
        EXPECT_EQ(to_next, from_prev) << "p=" << p << " m=" << m << " r=" << r;
      }
    }
}

// Fewer micro-batches than stages: warm-up is capped at m, nothing runs in the steady state.
TEST(PipelineSchedule, OneFOneBWithFewMicroBatches) {
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::OneFOneB, 4, 0, 2)), "F0 sf0 F1 sf1 rb0 B0 rb1 B1");
}

TEST(PipelineSchedule, GPipeRunsAllForwardsThenAllBackwards) {
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::GPipe, 2, 0, 3)), "F0 sf0 F1 sf1 F2 sf2 rb0 B0 rb1 B1 rb2 B2");
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::GPipe, 2, 1, 3)), "rf0 F0 rf1 F1 rf2 F2 B0 sb0 B1 sb1 B2 sb2");
}

TEST(PipelineSchedule, NoPipeliningAlternatesForwardAndBackward) {
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::NoPipelining, 1, 0, 3)), "F0 B0 F1 B1 F2 B2");
}

// Interleaved 1F1B, p=2, v=2, m=4, N=2: forward order c0m0 c0m1 c1m0 c1m1 c0m2 c0m3 c1m2 c1m3; backward runs the
// same table on chunk v-1-c; rank 0 has warm-up (p-r-1)*2 + (v-1)*N = 4, rank 1 has 2.
TEST(PipelineSchedule, InterleavedOrderMatchesMegatron) {
  EXPECT_EQ(step_order(interleaved_table(2, 4, 2)), "F0 F1 c1F0 c1F1 F2 F3 c1F2 c1F3");
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::Interleaved, 2, 0, 4, 2)),
            "F0 F1 c1F0 c1F1 F2 c1B0 F3 c1B1 c1F2 B0 c1F3 B1 c1B2 c1B3 B2 B3");
  EXPECT_EQ(step_order(pipeline_schedule(ScheduleKind::Interleaved, 2, 1, 4, 2)),
            "F0 F1 c1F0 c1B0 c1F1 c1B1 F2 B0 F3 B1 c1F2 c1B2 c1F3 c1B3 B2 B3");
}

TEST(PipelineSchedule, RejectsInvalidParameters) {
  EXPECT_THROW(pipeline_schedule(ScheduleKind::OneFOneB, 4, 4, 8), std::exception);
  EXPECT_THROW(pipeline_schedule(ScheduleKind::OneFOneB, 4, 0, 0), std::exception);
}
