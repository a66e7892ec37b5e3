// run_flow_dag: dependencies, latency before transmission, sharing between concurrent
// transfers, faults during a run, background traffic, and determinism.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "network/flow/flow_dag_runner.hpp"
#include "network_test_support.hpp"

namespace trainsim {
namespace {

using testing::kGB;
using testing::kGBps;
using testing::kMs;

using testing::kUs;

std::uint32_t add(TransferDag& dag, std::vector<LinkId> path, std::int64_t bytes, SimTime latency,
                  std::vector<std::uint32_t> deps = {}) {
  return dag.add(path, bytes, latency, deps);
}

// T0 waits 5 µs then sends 1 GB at 10 GB/s (100 ms); T1 depends on T0, waits 1 µs, sends 1 GB.
TEST(FlowDagRunner, ChainWaitsLatencyThenTransmits) {
  FlowNetwork net({10 * kGBps}, {0});
  TransferDag dag;
  const auto t0 = add(dag, {0}, kGB, 5 * kUs);
  const auto t1 = add(dag, {0}, kGB, 1 * kUs, {t0});
  const DagSchedule s = run_flow_dag(net, dag);
  EXPECT_EQ(s.ready[t0], 0);
  EXPECT_EQ(s.start[t0], 5 * kUs);
  EXPECT_EQ(s.finish[t0], 5 * kUs + 100 * kMs);
  EXPECT_EQ(s.ready[t1], s.finish[t0]);
  EXPECT_EQ(s.start[t1], s.finish[t0] + 1 * kUs);
  EXPECT_EQ(s.finish[t1], 6 * kUs + 200 * kMs);
  EXPECT_EQ(s.makespan, 6 * kUs + 200 * kMs);
}

// Diamond: T1 and T2 both wait for T0 and then share the link (5 GB/s each, 200 ms for 1 GB);
// T3 waits for both.
TEST(FlowDagRunner, JoinWaitsForEveryDependency) {
  FlowNetwork net({10 * kGBps}, {0});
  TransferDag dag;
  const auto t0 = add(dag, {0}, kGB, 0);
  const auto t1 = add(dag, {0}, kGB, 0, {t0});
  const auto t2 = add(dag, {0}, 2 * kGB, 0, {t0});
  const auto t3 = add(dag, {0}, kGB, 0, {t1, t2});
  const DagSchedule s = run_flow_dag(net, dag);
  EXPECT_EQ(s.finish[t0], 100 * kMs);
  EXPECT_EQ(s.finish[t1], 300 * kMs);  // 1 GB at 5 GB/s
  EXPECT_EQ(s.finish[t2], 400 * kMs);  // 1 GB at 5, then 1 GB alone at 10
  EXPECT_EQ(s.ready[t3], 400 * kMs);
  EXPECT_EQ(s.finish[t3], 500 * kMs);
}

// Latency orders who transmits first: A (no latency) runs alone for 50 ms (0.5 GB), then shares
// with B: A's last 0.5 GB at 5 GB/s ends at 150 ms, when B has 0.5 GB left, alone: 200 ms.
TEST(FlowDagRunner, LatencyDelaysTheStartOfTransmission) {
  FlowNetwork net({10 * kGBps}, {0});
  TransferDag dag;
  const auto a = add(dag, {0}, kGB, 0);
  const auto b = add(dag, {0}, kGB, 50 * kMs);
  const DagSchedule s = run_flow_dag(net, dag);
  EXPECT_EQ(s.start[b], 50 * kMs);
  EXPECT_EQ(s.finish[a], 150 * kMs);
  EXPECT_EQ(s.finish[b], 200 * kMs);
}

// A link that goes down during the run and comes back: 1 GB at 10 GB/s, down from 50 to 150 ms,
// ends at 200 ms instead of 100.
TEST(FlowDagRunner, CapacityChangesApplyDuringTheRun) {
  FlowNetwork net({10 * kGBps}, {0});
  TransferDag dag;
  const auto t = add(dag, {0}, kGB, 0);
  const std::vector<CapacityChange> faults{{150 * kMs, 0, 10 * kGBps}, {50 * kMs, 0, 0}};  // any order
  const DagSchedule s = run_flow_dag(net, dag, faults);
  EXPECT_EQ(s.finish[t], 200 * kMs);
}

// A link that never comes back is a deadlock, reported with the stuck transfer.
TEST(FlowDagRunner, LinkThatStaysDownIsADeadlock) {
  FlowNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  TransferDag dag;
  add(dag, {0}, kGB, 0);
  const auto stuck = add(dag, {1}, kGB, 0);
  add(dag, {0}, kGB, 0, {stuck});
  const std::vector<CapacityChange> faults{{10 * kMs, 1, 0}};
  try {
    run_flow_dag(net, dag, faults);
    FAIL() << "expected DeadlockError";
  } catch (const DeadlockError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("2 of 3 transfers can never finish"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("first: transfer 1"));
  }
}

// A flow already in the network competes with the DAG but is not waited for.
TEST(FlowDagRunner, FlowsAlreadyInTheNetworkAreBackgroundTraffic) {
  FlowNetwork net({10 * kGBps}, {0});
  const std::vector<LinkId> path{0};
  net.start(0, path, 10 * kGB);
  TransferDag dag;
  const auto t = add(dag, {0}, kGB, 0);
  const DagSchedule s = run_flow_dag(net, dag);
  EXPECT_EQ(s.finish[t], 200 * kMs);  // 5 GB/s while sharing
  EXPECT_EQ(net.active_flows(), 1u);
}

// Zero-byte transfers (pure synchronisation) finish as soon as they start.
TEST(FlowDagRunner, ZeroByteTransferIsPureLatency) {
  FlowNetwork net({10 * kGBps}, {0});
  TransferDag dag;
  const auto sync = add(dag, {0}, 0, 3 * kUs);
  const auto data = add(dag, {0}, kGB, 0, {sync});
  const DagSchedule s = run_flow_dag(net, dag);
  EXPECT_EQ(s.finish[sync], 3 * kUs);
  EXPECT_EQ(s.finish[data], 3 * kUs + 100 * kMs);
}

// The run starts at the network's clock; makespan is measured from there.
TEST(FlowDagRunner, MakespanIsMeasuredFromTheNetworkClock) {
  FlowNetwork net({10 * kGBps}, {0}, 7 * kMs);
  TransferDag dag;
  add(dag, {0}, kGB, 0);
  const DagSchedule s = run_flow_dag(net, dag);
  EXPECT_EQ(s.start[0], 7 * kMs);
  EXPECT_EQ(s.makespan, 100 * kMs);
}

// A ring over 8 nodes on a two-level fabric: NIC up-links 0..7, down-links 8..15, one shared
// spine link 16. Same input twice -> bit-identical schedules and statistics.
TEST(FlowDagRunner, IdenticalInputsGiveIdenticalOutputs) {
  const auto run = [] {
    std::vector<double> cap(17, 12.5 * kGBps);
    cap[16] = 40 * kGBps;
    FlowNetwork net(cap, std::vector<SimTime>(17, 500'000));
    TransferDag dag;
    std::vector<std::uint32_t> prev(8, UINT32_MAX);
    for (int step = 0; step < 6; ++step) {
      std::vector<std::uint32_t> now(8);
      for (int r = 0; r < 8; ++r) {
        const LinkId up = r, down = 8 + (r + 1) % 8;
        const std::vector<LinkId> path =
            (r % 3 == 0) ? std::vector<LinkId>{up, 16, down} : std::vector<LinkId>{up, down};
        std::vector<std::uint32_t> deps;
        if (prev[static_cast<std::size_t>((r + 7) % 8)] != UINT32_MAX)
          deps.push_back(prev[static_cast<std::size_t>((r + 7) % 8)]);
        now[static_cast<std::size_t>(r)] =
            dag.add(path, 100'000'000 + 7'777'777 * r + 1'234'567 * step, net.path_latency(path), deps);
      }
      prev = now;
    }
    DagSchedule s = run_flow_dag(net, dag);
    return std::make_pair(s, net.link_statistics());
  };
  const auto [a, sa] = run();
  const auto [b, sb] = run();
  EXPECT_EQ(a.ready, b.ready);
  EXPECT_EQ(a.start, b.start);
  EXPECT_EQ(a.finish, b.finish);
  EXPECT_EQ(a.makespan, b.makespan);
  ASSERT_EQ(sa.size(), sb.size());
  for (std::size_t l = 0; l < sa.size(); ++l) {
    EXPECT_EQ(sa[l].bytes_carried, sb[l].bytes_carried);
    EXPECT_EQ(sa[l].busy_time, sb[l].busy_time);
    EXPECT_EQ(sa[l].utilisation, sb[l].utilisation);
  }
  EXPECT_GT(a.makespan, 0);
}

}  // namespace
}  // namespace trainsim
