// Compute-communication interference in the engine: a kernel running while a collective of its rank is
// in flight progresses at 1 / slowdown, and is re-timed when the collective starts or ends. Fixed
// kernel and collective times so every expected time is simple arithmetic.
#include <gtest/gtest.h>

#include "collective/flows/flow_dag.hpp"
#include "engine/engine.hpp"
#include "fixed_models.hpp"
#include "workload/program_builder.hpp"

using namespace trainsim;

namespace {

using test::us;

// A 100 us "GEMM": beside collectives holding c CTAs it runs 1 + c/100 times slower; every collective
// holds 25 CTAs.
KernelDesc gemm_us(double t) { return test::kernel_us(t, KernelKind::Gemm); }

SimulationOutput simulate_interfering(const Workload& wl, bool interference = true) {
  EngineOptions opt;
  opt.interference = interference;
  return test::simulate_fixed(wl, opt, test::FixedCompute(0.01), test::FixedCollectives(25));
}

// Both ranks launch a 50 us collective and a 100 us kernel at 0: the kernel does 50 / 1.25 = 40 us of
// its work while the collective runs, the other 60 us after: it ends at 110 (100 without interference).
Workload overlapped_at_start() {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    rb.collective({}, Stream::DpComm, "rs", CollKind::ReduceScatter, g, 50);
    rb.compute({}, "gemm", gemm_us(100));
  }
  return wb.finish();
}

}  // namespace

TEST(Interference, KernelBesideCollectiveSlowsWhileItRuns) {
  const auto out = simulate_interfering(overlapped_at_start());
  EXPECT_NEAR(us(out.timelines[0].end[1]), 110.0, 1e-6);
  EXPECT_NEAR(us(out.interference[0]), 10.0, 1e-6);
  EXPECT_NEAR(us(out.makespan), 110.0, 1e-6);
}

TEST(Interference, OffPricesKernelsAlone) {
  const auto out = simulate_interfering(overlapped_at_start(), false);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].end[1]), 100.0);
  EXPECT_DOUBLE_EQ(us(out.interference[0]), 0.0);
  // Re-timing skips the kernel's first end event: events count what happened, the same either way.
  EXPECT_EQ(simulate_interfering(overlapped_at_start()).events, out.events);
}

// The collective starts mid-kernel: rank 1 reaches it at 30, so rank 0's 100 us kernel runs alone for
// 30 us, at 1/1.25 for the 50 us the collective takes (40 us of work), and alone for the last 30: 110.
TEST(Interference, CollectiveStartingMidKernelRetimesIt) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  auto r0 = wb.rank_builder(0);
  r0.collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 50);
  r0.compute({}, "gemm", gemm_us(100));
  auto r1 = wb.rank_builder(1);
  r1.compute({}, "late", gemm_us(30));
  r1.collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 50);
  const auto out = simulate_interfering(wb.finish());
  EXPECT_NEAR(us(out.timelines[0].start[0]), 30.0, 1e-6);
  EXPECT_NEAR(us(out.timelines[0].end[1]), 110.0, 1e-6);
  // Rank 1's kernel ran before the collective: untouched.
  EXPECT_NEAR(us(out.timelines[1].end[0]), 30.0, 1e-6);
  EXPECT_NEAR(us(out.interference[1]), 0.0, 1e-6);
}

// Two collectives on two streams overlap the kernel: 50 CTAs for 20 us (x1.5), then 25 for 20 us (x1.25).
// Work done: 20/1.5 + 20/1.25 = 13.33 + 16 = 29.33 of 100; the other 70.67 alone: ends at 110.67.
TEST(Interference, ConcurrentCollectivesAddTheirCtas) {
  WorkloadBuilder wb(2, {0, 1});
  const auto dp = wb.group(GroupKind::DP, {0, 1});
  const auto tp = wb.group(GroupKind::TP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    rb.collective({}, Stream::DpComm, "ag", CollKind::AllGather, dp, 40);
    rb.collective({}, Stream::TpComm, "ar", CollKind::AllReduce, tp, 20);
    rb.compute({}, "gemm", gemm_us(100));
  }
  const auto out = simulate_interfering(wb.finish());
  EXPECT_NEAR(us(out.timelines[0].end[2]), 100.0 + 20.0 * (1 - 1 / 1.5) + 20.0 * (1 - 1 / 1.25), 1e-5);
}

// A kernel that starts while the collective is already running begins at the slow speed.
TEST(Interference, KernelStartingDuringCollectiveStartsSlow) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    rb.collective({}, Stream::DpComm, "ag", CollKind::AllGather, g, 100);
    rb.compute({}, "first", gemm_us(25));   // 0..31.25 at x1.25
    rb.compute({}, "second", gemm_us(10));  // 31.25..43.75
  }
  const auto out = simulate_interfering(wb.finish());
  EXPECT_NEAR(us(out.timelines[0].end[1]), 31.25, 1e-6);
  EXPECT_NEAR(us(out.timelines[0].end[2]), 43.75, 1e-6);
  EXPECT_NEAR(us(out.interference[0]), 8.75, 1e-6);
}

// The same workload gives the same timeline run after run (stale end events are skipped, not raced).
TEST(Interference, Deterministic) {
  const auto a = simulate_interfering(overlapped_at_start());
  const auto b = simulate_interfering(overlapped_at_start());
  EXPECT_EQ(a.timelines[0].end, b.timelines[0].end);
  EXPECT_EQ(a.events, b.events);
}

// A userbuffers call (CollectiveDesc::sms) holds the SMs the workload says, not the model's channels:
// 1 SM (x1.01) instead of 25 (x1.25) while the 50 us all-gather runs beside the 100 us kernel.
TEST(Interference, UserbuffersCallHoldsItsOwnSmCount) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::TP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    rb.collective_on_sms({}, Stream::TpComm, "ag", CollKind::AllGather, g, 50, 1);
    rb.compute({}, "gemm", gemm_us(100));
  }
  const Workload wl = wb.finish();
  ASSERT_EQ(wl.collectives.size(), 1u);
  EXPECT_EQ(wl.collectives[0].sms, 1);
  const auto out = simulate_interfering(wl);
  EXPECT_NEAR(us(out.timelines[0].end[1]), 100.0 + 50.0 * (1 - 1 / 1.01), 1e-6);
}
