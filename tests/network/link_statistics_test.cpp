// Per-link statistics: bytes carried = sum of the bytes of the flows that crossed the link; busy
// time = time with at least one flow; peak concurrent flows; utilisation = bytes / ∫capacity dt.
#include <gtest/gtest.h>

#include "network/flow/flow_network.hpp"
#include "network_test_support.hpp"

namespace trainsim {
namespace {

using testing::kGB;
using testing::kGBps;
using testing::kMs;
using testing::run_to_idle;
using testing::start_flow;

// A (1 GB, link 0) and B (3 GB, links 0 and 1) on 10 GB/s links: A ends at 200 ms, B at 400 ms
// (FlowNetworkTiming.WhenOneFlowEndsTheOtherSpeedsUp). Link 0 carried 4 GB at full capacity the
// whole 400 ms; link 1 carried 3 GB in 400 ms of 10 GB/s, utilisation 0.75; link 2 nothing.
TEST(LinkStatistics, BytesBusyTimePeakAndUtilisation) {
  FlowNetwork net({10 * kGBps, 10 * kGBps, 10 * kGBps}, {0, 0, 0});
  start_flow(net, 0, {0}, kGB);
  start_flow(net, 0, {0, 1}, 3 * kGB);
  run_to_idle(net);
  const std::vector<LinkStats> s = net.link_statistics();
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].bytes_carried, 4.0 * kGB);
  EXPECT_EQ(s[1].bytes_carried, 3.0 * kGB);
  EXPECT_EQ(s[2].bytes_carried, 0.0);
  EXPECT_EQ(s[0].busy_time, 400 * kMs);
  EXPECT_EQ(s[1].busy_time, 400 * kMs);
  EXPECT_EQ(s[2].busy_time, 0);
  EXPECT_EQ(s[0].peak_flows, 2);
  EXPECT_EQ(s[1].peak_flows, 1);
  EXPECT_EQ(s[2].peak_flows, 0);
  EXPECT_DOUBLE_EQ(s[0].utilisation, 1.0);
  EXPECT_DOUBLE_EQ(s[1].utilisation, 0.75);
  EXPECT_EQ(s[2].utilisation, 0.0);
}

// Mid-flight, in-flight flows count what they have sent so far: at 100 ms both flows have sent
// 0.5 GB, so link 0 has carried 1 GB and has been busy 100 ms.
TEST(LinkStatistics, InFlightProgressCounts) {
  FlowNetwork net({10 * kGBps}, {0});
  start_flow(net, 0, {0}, kGB);
  start_flow(net, 0, {0}, 3 * kGB);
  std::vector<FlowId> finished;
  net.advance(100 * kMs, finished);
  const LinkStats s = net.link_statistics()[0];
  EXPECT_DOUBLE_EQ(s.bytes_carried, 1.0 * kGB);
  EXPECT_EQ(s.busy_time, 100 * kMs);
  EXPECT_DOUBLE_EQ(s.utilisation, 1.0);
}

// Idle gaps are not busy time: flows at [0, 100 ms) and [300, 400 ms) make 200 ms busy out of
// 400 ms elapsed, 2 GB of 4 GB possible.
TEST(LinkStatistics, IdleGapsAreNotBusy) {
  FlowNetwork net({10 * kGBps}, {0});
  start_flow(net, 0, {0}, kGB);
  run_to_idle(net);
  start_flow(net, 300 * kMs, {0}, kGB);
  run_to_idle(net);
  const LinkStats s = net.link_statistics()[0];
  EXPECT_EQ(net.now(), 400 * kMs);
  EXPECT_EQ(s.busy_time, 200 * kMs);
  EXPECT_EQ(s.bytes_carried, 2.0 * kGB);
  EXPECT_DOUBLE_EQ(s.utilisation, 0.5);
}

// Utilisation divides by the capacity actually offered: a 2 GB flow on 10 GB/s, halved to 5 GB/s
// at 100 ms, ends at 300 ms; capacity offered = 10 × 0.1 + 5 × 0.2 = 2 GB, all used.
TEST(LinkStatistics, UtilisationFollowsCapacityChanges) {
  FlowNetwork net({10 * kGBps}, {0});
  start_flow(net, 0, {0}, 2 * kGB);
  net.set_capacity(0, 5 * kGBps, 100 * kMs);
  run_to_idle(net);
  const LinkStats s = net.link_statistics()[0];
  EXPECT_EQ(net.now(), 300 * kMs);
  EXPECT_DOUBLE_EQ(s.utilisation, 1.0);
}

// A stalled flow keeps its link busy (it is there, waiting) but carries nothing.
TEST(LinkStatistics, StalledFlowIsBusyButCarriesNothing) {
  FlowNetwork net({0}, {0});
  start_flow(net, 0, {0}, kGB);
  std::vector<FlowId> finished;
  net.advance(50 * kMs, finished);
  const LinkStats s = net.link_statistics()[0];
  EXPECT_EQ(s.busy_time, 50 * kMs);
  EXPECT_EQ(s.bytes_carried, 0.0);
  EXPECT_EQ(s.utilisation, 0.0);
}

}  // namespace
}  // namespace trainsim
