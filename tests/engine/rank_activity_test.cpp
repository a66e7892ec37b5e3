// RankActivity (engine/engine.hpp): how each simulated rank's time from 0 to the makespan divides between kernels,
// the optimizer, exposed collectives by class (the lowest class first where several run), waits for the host and
// idle time before and after its last forward/backward kernel. Fixed kernel and collective times (microseconds), so
// each expected sum is read off the timeline drawn in the comments.
#include <gtest/gtest.h>

#include "engine/engine.hpp"
#include "fixed_models.hpp"
#include "workload/program_builder.hpp"

using namespace trainsim;

namespace {

using test::kernel_us;
using test::us;

constexpr std::uint8_t kTpClass = 0, kPpClass = 2, kDpClass = 4;

struct TwoStageJob {
  Workload wl;
  std::vector<std::uint8_t> classes;  // by group
};

// Rank 0: forward [0,100), p2p with rank 1 [100,110), then a DP collective [110,160) and a TP one [110,140) beside
//         a backward kernel [110,130); the optimizer kernel waits for the DP call: [160,170); a last kernel of
//         phase Other [170,200).
// Rank 1: forward [0,40), waits for rank 0 at the p2p until 100, p2p [100,110), backward [110,125), then nothing
//         until the makespan, 200.
TwoStageJob two_stage_job() {
  // Ranks 2 and 3 are not simulated: rank 0 alone runs the TP and DP calls (with a member each that is not).
  WorkloadBuilder wb(4, {0, 1});
  const auto pp = wb.group(GroupKind::PP, {0, 1});
  const auto tp = wb.group(GroupKind::TP, {0, 2});
  const auto dp = wb.group(GroupKind::DP, {0, 3});
  std::vector<std::uint8_t> classes(3);
  classes[pp] = kPpClass;
  classes[tp] = kTpClass;
  classes[dp] = kDpClass;
  const OpContext fwd{Phase::Forward}, bwd{Phase::Backward}, opt{Phase::Optimizer}, other{Phase::Other};
  {
    auto rb = wb.rank_builder(0);
    rb.compute(fwd, "f", kernel_us(100));
    rb.sync_collective(fwd, Stream::PpComm, "p2p", CollKind::SendRecv, pp, 10);
    const auto grads = rb.collective(bwd, Stream::DpComm, "rs", CollKind::ReduceScatter, dp, 50);
    rb.collective(bwd, Stream::TpComm, "ar", CollKind::AllReduce, tp, 30);
    rb.compute(bwd, "b", kernel_us(20));
    rb.wait(grads);
    rb.compute(opt, "adam", kernel_us(10));
    rb.compute(other, "tail", kernel_us(30));
  }
  {
    auto rb = wb.rank_builder(1);
    rb.compute(fwd, "f", kernel_us(40));
    rb.sync_collective(fwd, Stream::PpComm, "p2p", CollKind::SendRecv, pp, 10);
    rb.compute(bwd, "b", kernel_us(15));
  }
  return {wb.finish(), classes};
}

SimTime sum_of(const RankActivity& a) {
  SimTime s = a.compute + a.optimizer + a.host + a.idle_scheduled + a.idle_after;
  for (SimTime x : a.exposed) s += x;
  return s;
}

}  // namespace

TEST(RankActivity, SplitsEachRanksTimeAsItsTimelineShows) {
  const TwoStageJob job = two_stage_job();
  EngineOptions eo;
  eo.activity = true;
  eo.exposed_class = job.classes;
  const auto out = test::simulate_fixed(job.wl, eo);
  ASSERT_DOUBLE_EQ(us(out.makespan), 200.0);
  ASSERT_EQ(out.activity.size(), 2u);

  const RankActivity& r0 = out.activity[0];
  EXPECT_DOUBLE_EQ(us(r0.compute), 100.0 + 20.0 + 30.0);
  EXPECT_DOUBLE_EQ(us(r0.optimizer), 10.0);
  EXPECT_DOUBLE_EQ(us(r0.exposed[kPpClass]), 10.0);
  EXPECT_DOUBLE_EQ(us(r0.exposed[kTpClass]), 10.0);  // [130,140): TP and DP both run, TP's class is lower
  EXPECT_DOUBLE_EQ(us(r0.exposed[kDpClass]), 20.0);  // [140,160)
  EXPECT_EQ(r0.host, 0);
  EXPECT_EQ(r0.idle_scheduled + r0.idle_after, 0);

  const RankActivity& r1 = out.activity[1];
  EXPECT_DOUBLE_EQ(us(r1.compute), 40.0 + 15.0);
  EXPECT_DOUBLE_EQ(us(r1.idle_scheduled), 60.0);  // waiting for rank 0, before its backward kernel
  EXPECT_DOUBLE_EQ(us(r1.exposed[kPpClass]), 10.0);
  EXPECT_DOUBLE_EQ(us(r1.idle_after), 75.0);  // after its last backward kernel, to the makespan
  EXPECT_EQ(r1.optimizer, 0);

  for (const RankActivity& a : out.activity) EXPECT_EQ(sum_of(a), out.makespan);
}

// Kernels of 2 us launched every 12 us: the GPU waits for the host before each, [0,12), [14,24) and [26,36).
TEST(RankActivity, CountsTheWaitsForTheHost) {
  WorkloadBuilder wb(1, {0});
  auto rb = wb.rank_builder(0);
  for (int i = 0; i < 3; ++i) rb.compute({Phase::Forward}, "k", kernel_us(2));
  const Workload wl = wb.finish();
  EngineOptions eo;
  eo.host_launch = from_microseconds(12);
  eo.activity = true;  // no groups, no classes
  const auto out = test::simulate_fixed(wl, eo);
  ASSERT_DOUBLE_EQ(us(out.makespan), 38.0);
  EXPECT_DOUBLE_EQ(us(out.activity[0].host), 32.0);
  EXPECT_DOUBLE_EQ(us(out.activity[0].compute), 6.0);
  EXPECT_EQ(out.activity[0].idle_scheduled + out.activity[0].idle_after, 0);
}

// Interference re-times rank 0's backward kernel (beside the DP and TP calls, 50 CTAs: 1.5x slower): its end moves,
// and the sums follow the timeline as it ran, the kernels' time with it.
TEST(RankActivity, FollowsKernelsStretchedByInterference) {
  const TwoStageJob job = two_stage_job();
  EngineOptions eo;
  eo.activity = true;
  eo.exposed_class = job.classes;
  const auto out = test::simulate_fixed(job.wl, eo, test::FixedCompute(0.01), test::FixedCollectives(25));
  for (std::size_t r = 0; r < 2; ++r) {
    EXPECT_EQ(sum_of(out.activity[r]), out.makespan) << "rank " << r;
    SimTime kernels = 0;
    const auto& t = out.timelines[r];
    for (std::size_t i = 0; i < job.wl.ranks[r].ops.size(); ++i)
      if (job.wl.ranks[r].ops[i].type == Op::Type::Compute) kernels += t.end[i] - t.start[i];
    EXPECT_EQ(out.activity[r].compute + out.activity[r].optimizer, kernels) << "rank " << r;
  }
  EXPECT_GT(us(out.activity[0].compute), 150.0);  // stretched
}

TEST(RankActivity, NoneKeptWithoutClasses) {
  const TwoStageJob job = two_stage_job();
  EXPECT_TRUE(test::simulate_fixed(job.wl).activity.empty());
}
