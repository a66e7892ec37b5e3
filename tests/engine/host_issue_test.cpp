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
