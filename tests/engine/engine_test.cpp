// The engine's semantics, checked on small hand-built workloads with fixed kernel and collective
// times so every expected time is simple arithmetic.
#include <gtest/gtest.h>

#include "collective/flows/flow_dag.hpp"
#include "core/error.hpp"
#include "engine/engine.hpp"
#include "fixed_models.hpp"
#include "workload/program_builder.hpp"

using namespace trainsim;

namespace {

using test::cluster;
using test::FixedCollectives;
using test::FixedCompute;
using test::kernel_us;
using test::simulate_fixed;
using test::us;

}  // namespace

// compute 10, synchronous collective 5, compute 10 on both ranks: strictly serial -> 25 us.
TEST(Engine, SynchronousCollectiveSerializesWithCompute) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::TP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    rb.compute({}, "a", kernel_us(10));
    rb.sync_collective({}, Stream::TpComm, "ar", CollKind::AllReduce, g, 5);
    rb.compute({}, "b", kernel_us(10));
  }
  EXPECT_DOUBLE_EQ(us(simulate_fixed(wb.finish()).makespan), 25.0);
}

// A group of one rank costs nothing (NCCL returns at once): compute 10 + 10 = 20 us.
TEST(Engine, SingleRankGroupIsFree) {
  WorkloadBuilder wb(1, {0});
  auto rb = wb.rank_builder(0);
  const auto g = wb.group(GroupKind::TP, {0});
  rb.compute({}, "a", kernel_us(10));
  rb.sync_collective({}, Stream::TpComm, "ar", CollKind::AllReduce, g, 5);
  rb.compute({}, "b", kernel_us(10));
  EXPECT_DOUBLE_EQ(us(simulate_fixed(wb.finish()).makespan), 20.0);
}

// Two ranks: A(10) then async AR(8) launched after A, B(10) overlaps it, C waits for the AR:
// C starts at max(20, 10 + 8) = 20 and ends at 30. With AR = 15, C starts at 25 and ends at 35.
TEST(Engine, AsyncCollectiveOverlapsComputeUntilWaited) {
  for (auto [ar, expected] : {std::pair{8, 30.0}, std::pair{15, 35.0}}) {
    WorkloadBuilder wb(2, {0, 1});
    const auto g = wb.group(GroupKind::TP, {0, 1});
    for (std::size_t r = 0; r < 2; ++r) {
      auto rb = wb.rank_builder(r);
      rb.compute({}, "A", kernel_us(10));
      const auto h = rb.collective({}, Stream::TpComm, "ar", CollKind::AllReduce, g, ar);
      rb.compute({}, "B", kernel_us(10));
      rb.wait(h);
      rb.compute({}, "C", kernel_us(10));
    }
    EXPECT_DOUBLE_EQ(us(simulate_fixed(wb.finish()).makespan), expected) << "ar=" << ar;
  }
}

// A collective starts when the last member arrives: rank 0 reaches it at 10, rank 1 at 30, so it
// runs 30..35 on both and rank 0's next kernel ends at 45.
TEST(Engine, CollectiveStartsWhenLastMemberArrives) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  auto r0 = wb.rank_builder(0);
  r0.compute({}, "short", kernel_us(10));
  r0.sync_collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 5);
  r0.compute({}, "after", kernel_us(10));
  auto r1 = wb.rank_builder(1);
  r1.compute({}, "long", kernel_us(30));
  r1.sync_collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 5);
  const Workload wl = wb.finish();
  const auto out = simulate_fixed(wl);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].start[1]), 30.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[1].start[1]), 30.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].end[2]), 45.0);
  EXPECT_DOUBLE_EQ(us(out.makespan), 45.0);
}

// Collectives on one stream run FIFO even when independent of compute: 3 back-to-back async
// collectives of 4 us each finish at 4, 8, 12.
TEST(Engine, CollectivesOnOneStreamRunInIssueOrder) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    for (int i = 0; i < 3; ++i) rb.collective({}, Stream::DpComm, "rs", CollKind::ReduceScatter, g, 4);
  }
  const auto out = simulate_fixed(wb.finish());
  EXPECT_DOUBLE_EQ(us(out.timelines[0].end[0]), 4.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].end[1]), 8.0);
  EXPECT_DOUBLE_EQ(us(out.timelines[0].end[2]), 12.0);
}

// Rank 0 calls X then Y, rank 1 calls Y then X: each waits for the other forever. The engine must
// stop with an error naming the ranks, the ops and the groups.
TEST(Engine, MismatchedCollectiveOrderIsReportedAsDeadlock) {
  WorkloadBuilder wb(2, {0, 1});
  const auto x = wb.group(GroupKind::TP, {0, 1});
  const auto y = wb.group(GroupKind::DP, {0, 1});
  auto r0 = wb.rank_builder(0);
  r0.sync_collective({}, Stream::TpComm, "first_x", CollKind::AllReduce, x, 1);
  r0.compute({}, "k", kernel_us(1));
  r0.sync_collective({}, Stream::DpComm, "then_y", CollKind::AllReduce, y, 1);
  auto r1 = wb.rank_builder(1);
  r1.sync_collective({}, Stream::DpComm, "first_y", CollKind::AllReduce, y, 1);
  r1.compute({}, "k", kernel_us(1));
  r1.sync_collective({}, Stream::TpComm, "then_x", CollKind::AllReduce, x, 1);
  const Workload wl = wb.finish();
  try {
    simulate_fixed(wl);
    FAIL() << "expected a deadlock";
  } catch (const DeadlockError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("rank 0"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rank 1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("first_x"), std::string::npos) << msg;
    EXPECT_NE(msg.find("first_y"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tp group [0,1]"), std::string::npos) << msg;
    EXPECT_NE(msg.find("waiting for 1 more member"), std::string::npos) << msg;
  }
}

// Members disagreeing on the size of the same call is a workload bug, reported with both sizes.
TEST(Engine, MismatchedCollectiveSizeIsAnError) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::TP, {0, 1});
  wb.rank_builder(0).sync_collective({}, Stream::TpComm, "ar", CollKind::AllReduce, g, 100);
  wb.rank_builder(1).sync_collective({}, Stream::TpComm, "ar", CollKind::AllReduce, g, 200);
  const Workload wl = wb.finish();
  try {
    simulate_fixed(wl);
    FAIL() << "expected an error";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("100"), std::string::npos) << msg;
    EXPECT_NE(msg.find("200"), std::string::npos) << msg;
  }
}

// A group with members that are not simulated (represented by a simulated peer) rendezvous only
// among the simulated ones: rank 0 alone in a 4-rank group does not wait.
TEST(Engine, RepresentedMembersDoNotBlock) {
  WorkloadBuilder wb(4, {0});
  const auto g = wb.group(GroupKind::DP, {0, 1, 2, 3});
  auto rb = wb.rank_builder(0);
  rb.compute({}, "a", kernel_us(3));
  rb.sync_collective({}, Stream::DpComm, "ar", CollKind::AllReduce, g, 7);
  EXPECT_DOUBLE_EQ(us(simulate_fixed(wb.finish()).makespan), 10.0);
}

// Same workload twice: identical timelines, event counts and makespan.
TEST(Engine, Deterministic) {
  auto build = [] {
    WorkloadBuilder wb(3, {0, 1, 2});
    const auto g = wb.group(GroupKind::DP, {0, 1, 2});
    for (std::size_t r = 0; r < 3; ++r) {
      auto rb = wb.rank_builder(r);
      for (int i = 0; i < 50; ++i) {
        rb.compute({}, "k", kernel_us(1.0 + static_cast<double>((r * 7 + static_cast<std::size_t>(i)) % 5)));
        const auto h = rb.collective({}, Stream::DpComm, "c", CollKind::AllReduce, g, 2 + i % 3);
        if (i % 4 == 0) rb.wait(h);
      }
    }
    return wb.finish();
  };
  const Workload a = build(), b = build();
  const auto oa = simulate_fixed(a), ob = simulate_fixed(b);
  EXPECT_EQ(oa.makespan, ob.makespan);
  EXPECT_EQ(oa.events, ob.events);
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(oa.timelines[r].start, ob.timelines[r].start);
    EXPECT_EQ(oa.timelines[r].end, ob.timelines[r].end);
  }
}

// A plan made once (plan_engine) serves several runs of one workload: the same timelines as a run that makes its
// own, with other collective times and host launch costs as given; a plan of another workload or launch cost is
// an internal error, not a wrong answer.
TEST(Engine, APlanMadeOnceServesEveryRunOfItsWorkload) {
  WorkloadBuilder wb(2, {0, 1});
  const auto g = wb.group(GroupKind::DP, {0, 1});
  for (std::size_t r = 0; r < 2; ++r) {
    auto rb = wb.rank_builder(r);
    for (int i = 0; i < 20; ++i) {
      rb.compute({}, "k", kernel_us(1.0 + static_cast<double>((r + static_cast<std::size_t>(i)) % 3)));
      const auto h = rb.collective({}, Stream::DpComm, "c", CollKind::AllReduce, g, 1 + i % 4);
      if (i % 3 == 0) rb.wait(h);
    }
  }
  const Workload wl = wb.finish();
  const FixedCompute compute;
  EngineOptions eo;
  eo.host_launch = from_microseconds(0.5);
  const EnginePlan plan = plan_engine(wl, compute, eo.host_launch);
  for (const int channels : {0, 4}) {
    SCOPED_TRACE(channels);
    const FixedCollectives collectives(channels);
    const SimulationOutput own = simulate(wl, compute, collectives, cluster(2), eo);
    EngineOptions shared = eo;
    shared.plan = &plan;
    const SimulationOutput given = simulate(wl, compute, collectives, cluster(2), shared);
    EXPECT_EQ(given.makespan, own.makespan);
    EXPECT_EQ(given.events, own.events);
    for (std::size_t r = 0; r < 2; ++r) {
      EXPECT_EQ(given.timelines[r].start, own.timelines[r].start);
      EXPECT_EQ(given.timelines[r].end, own.timelines[r].end);
    }
  }
  EngineOptions other_launch = eo;
  other_launch.plan = &plan;
  other_launch.host_launch = from_microseconds(1);
  EXPECT_THROW(simulate(wl, compute, FixedCollectives(), cluster(2), other_launch), InternalError);
  WorkloadBuilder smaller(2, {0, 1});
  smaller.rank_builder(0).compute({}, "k", kernel_us(1));
  EngineOptions other_workload = eo;
  other_workload.plan = &plan;
  EXPECT_THROW(simulate(smaller.finish(), compute, FixedCollectives(), cluster(2), other_workload), InternalError);
}
