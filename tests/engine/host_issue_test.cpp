// The host issue stream (EngineOptions::host_launch): each rank's host launches its ops in program order, an op
// costs Op::launches launches, and no op starts before the host has issued it. Fixed kernel times, so every
// expected time is simple arithmetic.
#include <gtest/gtest.h>

#include "engine/engine.hpp"
#include "fixed_models.hpp"
#include "workload/program_builder.hpp"

using namespace trainsim;

namespace {

using test::kernel_us;
using test::us;

SimulationOutput simulate_with_launch(const Workload& wl, double launch_us) {
  EngineOptions eo;
  eo.host_launch = from_microseconds(launch_us);
  return test::simulate_fixed(wl, eo);
}

// Ten kernels of `kernel` us each, one launch apiece.
Workload chain(double kernel, int launches = 1) {
  WorkloadBuilder wb(1, {0});
  auto rb = wb.rank_builder(0);
  for (int i = 0; i < 10; ++i) rb.compute({}, "k", kernel_us(kernel), launches);
  return wb.finish();
}

double waited_us(const SimulationOutput& out) {
  double sum = 0;
  for (const auto& [from, to] : out.host_waits[0]) sum += us(to - from);
  return sum;
}

}  // namespace

// Kernels shorter than a launch: the GPU runs each as soon as it is issued, at 12, 24, ... 120 us, and the
// last ends at 120 + 2. It waited 12 us before the first and 10 us before each of the other nine.
TEST(HostIssue, ShortKernelsWaitForTheHost) {
  const auto out = simulate_with_launch(chain(2), 12);
  EXPECT_DOUBLE_EQ(us(out.makespan), 122.0);
  EXPECT_DOUBLE_EQ(waited_us(out), 12.0 + 9 * 10.0);
  EXPECT_EQ(out.host_waits[0].size(), 10u);
}

// Kernels longer than a launch: the host runs ahead after the first launch, so the step is the first launch
// plus the kernels, and the GPU waited only for that first launch.
TEST(HostIssue, LongKernelsHideTheHost) {
  const auto out = simulate_with_launch(chain(50), 12);
  EXPECT_DOUBLE_EQ(us(out.makespan), 12.0 + 10 * 50.0);
  EXPECT_DOUBLE_EQ(waited_us(out), 12.0);
}

// No host cost: the old timing, and nothing recorded.
TEST(HostIssue, ZeroLaunchCostChangesNothing) {
  const auto out = simulate_with_launch(chain(2), 0);
  EXPECT_DOUBLE_EQ(us(out.makespan), 20.0);
  EXPECT_TRUE(out.host_waits[0].empty());
}

// An op standing for several eager kernels costs that many launches; one replayed in a CUDA graph none.
TEST(HostIssue, LaunchesPerOpScaleTheHostTime) {
  EXPECT_DOUBLE_EQ(us(simulate_with_launch(chain(2, 3), 10).makespan), 10 * 30.0 + 2.0);
  WorkloadBuilder wb(1, {0});
  auto rb = wb.rank_builder(0);
  rb.compute({}, "graph", kernel_us(2), 1);
  for (int i = 0; i < 9; ++i) rb.compute({}, "replayed", kernel_us(2), 0);
  EXPECT_DOUBLE_EQ(us(simulate_with_launch(wb.finish(), 10).makespan), 10.0 + 10 * 2.0);
}

// A collective is issued by the host too: rank 1's host has three launches before the all-reduce, rank 0's
// one, so the call starts at 3 x 10 = 30 us on both and ends at 35; rank 0's kernel after it was issued at
// 20 and starts at 35.
TEST(HostIssue, CollectivesStartWhenTheirLastMemberIssuedThem) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  auto r0 = wb.rank_builder(0);
  r0.sync_collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 5);
  r0.compute({}, "after", kernel_us(1));
  auto r1 = wb.rank_builder(1);
  r1.compute({}, "a", kernel_us(1));
  r1.compute({}, "b", kernel_us(1));
  r1.sync_collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 5);
  const auto out = simulate_with_launch(wb.finish(), 10);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[0]), 30.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[1]), 35.0);
  EXPECT_DOUBLE_EQ(us(out.makespan), 36.0);
}

// Host waits (Op::host_waits): `.item()`, an event's synchronize(), torch.cuda.synchronize(). The host blocks until
// the ops waited for have finished and launches nothing meanwhile; its clock restarts where the wait ended.

// A kernel of 100 us, then `.item()` on its result before the next kernel: the host resumes when it ends (110),
// launches the next at 120; a kernel after that is launched at 130. Without the wait the host ran ahead and the two
// short kernels followed the long one at once.
TEST(HostWait, TheHostClockRestartsWhereTheWaitEnded) {
  const auto build = [](bool wait) {
    WorkloadBuilder wb(1, {0});
    auto rb = wb.rank_builder(0);
    const auto a = rb.compute({}, "long", kernel_us(100));
    if (wait) rb.host_wait({a});
    rb.compute({}, "b", kernel_us(2));
    rb.compute({}, "c", kernel_us(2));
    return wb.finish();
  };
  const auto waited = simulate_with_launch(build(true), 10);
  EXPECT_DOUBLE_EQ(us(waited.timelines[0].start[1]), 120.0);
  EXPECT_DOUBLE_EQ(us(waited.timelines[0].start[2]), 130.0);
  EXPECT_DOUBLE_EQ(us(waited.makespan), 132.0);
  const auto ahead = simulate_with_launch(build(false), 10);
  EXPECT_DOUBLE_EQ(us(ahead.timelines[0].start[1]), 110.0);
  EXPECT_DOUBLE_EQ(us(ahead.makespan), 114.0);
}

// The host waits for a side-stream kernel (50 us, issued at 10) while a short kernel it had launched before the wait
// (X, 20..25) is done: the compute kernel after the wait is ready at 25 but not launched until the host resumes at
// 60 and has launched the op carrying the wait (70) and itself (80). It counts as waiting for the host from 25.
TEST(HostWait, OpsPastTheWaitAreNotIssuedUntilItEnds) {
  const auto build = [] {
    WorkloadBuilder wb(1, {0});
    auto rb = wb.rank_builder(0);
    const auto d = rb.compute_beside({}, Stream::TpComm, "side", kernel_us(50));
    rb.compute({}, "x", kernel_us(5));
    rb.host_wait({d});
    rb.compute_beside({}, Stream::DpComm, "after_wait", kernel_us(5));
    rb.compute({}, "k", kernel_us(2));
    return wb.finish();
  };
  const auto wl = build();
  EXPECT_EQ(wl.ranks[0].ops[2].host_waits, 1);
  EXPECT_EQ(wl.ranks[0].deps[wl.ranks[0].ops[2].first_dep], 0u);  // the op waited for leads its deps
  const auto out = simulate_with_launch(wl, 10);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[2]), 70.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[3]), 80.0);
  ASSERT_FALSE(out.host_waits[0].empty());
  EXPECT_DOUBLE_EQ(us(out.host_waits[0].back().first), 25.0);
  EXPECT_DOUBLE_EQ(us(out.host_waits[0].back().second), 80.0);
  // With no launch cost the host still waits: the kernel starts when the side kernel ends.
  const auto free_host = simulate_with_launch(wl, 0);
  EXPECT_DOUBLE_EQ(us(free_host.timelines[0].start[3]), 50.0);
}

// torch.cuda.synchronize() waits for the last op of every stream: here the side kernel (10..60) outlasts the compute
// one (20..25), so the next kernel is launched at 70.
TEST(HostWait, SynchronizeWaitsForEveryStream) {
  WorkloadBuilder wb(1, {0});
  auto rb = wb.rank_builder(0);
  rb.compute_beside({}, Stream::TpComm, "side", kernel_us(50));
  rb.compute({}, "x", kernel_us(5));
  rb.host_synchronize();
  rb.compute({}, "k", kernel_us(2));
  const auto wl = wb.finish();
  EXPECT_EQ(wl.ranks[0].ops[2].host_waits, 2);
  const auto out = simulate_with_launch(wl, 10);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[2]), 70.0);
}

// Waits are passed in program order: the second wait's op (a 10 us kernel) ends long before the first's (200 us),
// and the host still resumes only after the first.
TEST(HostWait, WaitsArePassedInProgramOrder) {
  WorkloadBuilder wb(1, {0});
  auto rb = wb.rank_builder(0);
  const auto slow = rb.compute_beside({}, Stream::TpComm, "slow", kernel_us(200));
  const auto fast = rb.compute_beside({}, Stream::DpComm, "fast", kernel_us(10));
  rb.host_wait({slow});
  rb.compute({}, "a", kernel_us(1));
  rb.host_wait({fast});
  rb.compute({}, "b", kernel_us(1));
  const auto out = simulate_with_launch(wb.finish(), 10);
  // slow 10..210; a launched at 220; b's wait (fast ended at 30) is passed at once: launched at 230.
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[2]), 220.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[3]), 230.0);
}
