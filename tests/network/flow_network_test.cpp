// FlowNetwork over time: completion times by hand (time = bytes / rate, rates re-solved when a
// flow ends or a capacity changes), faults, and the event-loop contract.
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

// 1 GB at 10 GB/s: 100 ms, to the picosecond.
TEST(FlowNetworkTiming, OneFlowTakesBytesOverCapacity) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId f = start_flow(net, 0, {0}, kGB);
  EXPECT_EQ(net.next_completion(), 100 * kMs);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first, f);
  EXPECT_EQ(done[0].second, 100 * kMs);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.now(), 100 * kMs);
}

// A coflow of weight 3 on a link (three equal transfers moving at one pace) beside a plain flow: the
// link's 12 GB/s go 3 GB/s to each of the four, as four separate flows would share it; the coflow
// carries 3 GB/s x 3 = 9 GB/s there. Its 1 GB (each part's bytes) takes 1/3 s; the plain 2 GB flow then
// has the link alone. The statistics count the coflow's bytes on the link three times.
TEST(FlowNetworkTiming, CoflowSharesLikeItsParts) {
  FlowNetwork net({12 * kGBps, 100 * kGBps}, {0, 0});
  const std::vector<LinkId> path{0, 1};
  const FlowId co = net.start(0, path, std::vector<float>{3.0F, 0.5F}, kGB);
  const FlowId plain = start_flow(net, 0, {0}, 2 * kGB);
  EXPECT_DOUBLE_EQ(net.rate(co), 3 * kGBps);
  EXPECT_DOUBLE_EQ(net.rate(plain), 3 * kGBps);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0].first, co);
  EXPECT_NEAR(static_cast<double>(done[0].second), 1000.0 / 3 * kMs, 1);  // each completion rounds up a picosecond
  // The plain flow moved 1 GB beside it, then its last 1 GB at 12 GB/s: 1/3 s + 1/12 s.
  EXPECT_NEAR(static_cast<double>(done[1].second), (1000.0 / 3 + 1000.0 / 12) * kMs, 2);
  const auto stats = net.link_statistics();
  EXPECT_NEAR(stats[0].bytes_carried, 3.0 * kGB + 2.0 * kGB, 1);
  EXPECT_NEAR(stats[1].bytes_carried, 0.5 * kGB, 1);
}

// A coflow alone on idle links takes the smallest capacity over its weight at once (no solve), and a
// plain flow that arrives later takes what the coflow leaves of the link they share.
TEST(FlowNetworkTiming, CoflowOnIdleLinksIsPlacedWithoutASolve) {
  FlowNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  const FlowId co = net.start(0, std::vector<LinkId>{0, 1}, std::vector<float>{2.0F, 0.5F}, kGB);
  EXPECT_DOUBLE_EQ(net.rate(co), 5 * kGBps);  // link 0: 10 / 2
  const FlowId plain = start_flow(net, 0, {1}, kGB);
  EXPECT_DOUBLE_EQ(net.rate(plain), 7.5 * kGBps);  // link 1: 10 - 0.5 x 5
  EXPECT_DOUBLE_EQ(net.rate(co), 5 * kGBps);
  EXPECT_EQ(net.solve_counters().solves, 0);
  EXPECT_EQ(net.solve_counters().placed_directly, 2);
}

// Two 1 GB flows on a 10 GB/s link: 5 GB/s each, both done at 200 ms in one advance().
TEST(FlowNetworkTiming, TwoFlowsSharingOneLinkFinishTogether) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId a = start_flow(net, 0, {0}, kGB);
  const FlowId b = start_flow(net, 0, {0}, kGB);
  std::vector<FlowId> finished;
  net.advance(net.next_completion(), finished);
  EXPECT_EQ(net.now(), 200 * kMs);
  EXPECT_EQ(finished, (std::vector<FlowId>{a, b}));
}

// A (1 GB) and B (3 GB) share 10 GB/s: 5 each until A is done at 200 ms, when B has 2 GB left and
// gets all 10 GB/s: B ends at 200 + 200 = 400 ms.
TEST(FlowNetworkTiming, WhenOneFlowEndsTheOtherSpeedsUp) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId a = start_flow(net, 0, {0}, kGB);
  const FlowId b = start_flow(net, 0, {0}, 3 * kGB);
  std::vector<FlowId> finished;
  net.advance(net.next_completion(), finished);
  EXPECT_EQ(finished, std::vector<FlowId>{a});
  EXPECT_EQ(net.now(), 200 * kMs);
  EXPECT_EQ(net.rate(b), 10 * kGBps);
  EXPECT_EQ(net.remaining_bytes(b), 2.0 * kGB);
  EXPECT_EQ(net.next_completion(), 400 * kMs);
}

// Caps 10 and 4 (FlowNetwork rates test): A (1.2 GB over both links) at 4 GB/s ends at 300 ms;
// B (1.2 GB) at 6 GB/s ends at 200 ms, and A stays at 4 (held by the narrow link).
TEST(FlowNetworkTiming, FlowHeldElsewhereKeepsItsRateWhenTheOtherEnds) {
  FlowNetwork net({10 * kGBps, 4 * kGBps}, {0, 0});
  const FlowId a = start_flow(net, 0, {0, 1}, 1'200'000'000);
  const FlowId b = start_flow(net, 0, {0}, 1'200'000'000);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], std::make_pair(b, 200 * kMs));
  EXPECT_EQ(done[1], std::make_pair(a, 300 * kMs));
}

// A 2 GB flow on 10 GB/s; at 100 ms the link drops to 5 GB/s with 1 GB left: 200 ms more.
TEST(FlowNetworkTiming, CapacityChangeMidFlight) {
  FlowNetwork net({10 * kGBps}, {0});
  start_flow(net, 0, {0}, 2 * kGB);
  EXPECT_EQ(net.next_completion(), 200 * kMs);
  net.set_capacity(0, 5 * kGBps, 100 * kMs);
  EXPECT_EQ(net.capacity(0), 5 * kGBps);
  EXPECT_EQ(net.next_completion(), 300 * kMs);
}

// A (2 GB over links 0 and 1) and B (4 GB over link 0) share link 0 at 5 GB/s each. At 200 ms
// (1 GB sent each) link 1 goes down: A stalls, B gets 10 GB/s and would end at 500 ms. At 400 ms
// link 1 is back: B has 1 GB left, A 1 GB; 5 GB/s each, both end at 600 ms.
TEST(FlowNetworkFaults, LinkDownStallsAndRecoveryResumes) {
  FlowNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  const FlowId a = start_flow(net, 0, {0, 1}, 2 * kGB);
  const FlowId b = start_flow(net, 0, {0}, 4 * kGB);
  net.set_capacity(1, 0, 200 * kMs);
  std::vector<FlowId> stalled;
  net.stalled_flows(stalled);
  EXPECT_EQ(stalled, std::vector<FlowId>{a});
  EXPECT_EQ(net.rate(a), 0);
  EXPECT_EQ(net.rate(b), 10 * kGBps);
  EXPECT_EQ(net.remaining_bytes(a), 1.0 * kGB);
  EXPECT_EQ(net.next_completion(), 500 * kMs);

  net.set_capacity(1, 10 * kGBps, 400 * kMs);
  net.stalled_flows(stalled);
  EXPECT_TRUE(stalled.empty());
  EXPECT_EQ(net.remaining_bytes(b), 1.0 * kGB);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 2u);
  EXPECT_EQ(done[0], std::make_pair(a, 600 * kMs));
  EXPECT_EQ(done[1], std::make_pair(b, 600 * kMs));
}

// With every flow stalled nothing can complete; the flow keeps its bytes.
TEST(FlowNetworkFaults, AllFlowsStalledMeansNoCompletion) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId f = start_flow(net, 0, {0}, kGB);
  net.set_capacity(0, 0, 0);
  EXPECT_EQ(net.next_completion(), kNever);
  std::vector<FlowId> finished;
  net.advance(1000 * kMs, finished);
  EXPECT_TRUE(finished.empty());
  EXPECT_TRUE(net.is_active(f));
  EXPECT_EQ(net.remaining_bytes(f), 1.0 * kGB);
}

// Starting a flow later than the last completion moves time there first; the flow finished on
// the way is reported by the next advance(), before the flows that finish in it.
TEST(FlowNetworkTiming, StartingLaterReportsFlowsFinishedOnTheWay) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId a = start_flow(net, 0, {0}, kGB);  // ends at 100 ms
  const FlowId b = start_flow(net, 250 * kMs, {0}, kGB);
  EXPECT_EQ(net.now(), 250 * kMs);
  EXPECT_NE(a, b);  // a's slot is not reused before a is reported
  EXPECT_EQ(net.start_time(b), 250 * kMs);
  std::vector<FlowId> finished;
  net.advance(net.next_completion(), finished);
  EXPECT_EQ(net.now(), 350 * kMs);
  EXPECT_EQ(finished, (std::vector<FlowId>{a, b}));
}

// advance() past several completions processes them in order, re-solving in between: A (1 GB)
// and B (2 GB) share 10 GB/s; A ends at 200 ms, B then runs alone and ends at 300 ms.
TEST(FlowNetworkTiming, AdvancePastSeveralCompletionsKeepsThemInOrder) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId a = start_flow(net, 0, {0}, kGB);
  const FlowId b = start_flow(net, 0, {0}, 2 * kGB);
  std::vector<FlowId> finished;
  net.advance(1000 * kMs, finished);
  EXPECT_EQ(finished, (std::vector<FlowId>{a, b}));
  EXPECT_EQ(net.now(), 1000 * kMs);
  const std::vector<LinkStats> stats = net.link_statistics();
  EXPECT_EQ(stats[0].busy_time, 300 * kMs);  // B was done at 300, not later
}

// A zero-byte flow is done the instant it starts, even on a down link.
TEST(FlowNetworkTiming, ZeroByteFlowFinishesAtOnce) {
  FlowNetwork net({0}, {0});
  const FlowId f = start_flow(net, 70 * kMs, {0}, 0);
  EXPECT_EQ(net.next_completion(), 70 * kMs);
  std::vector<FlowId> finished;
  net.advance(70 * kMs, finished);
  EXPECT_EQ(finished, std::vector<FlowId>{f});
}

// Flows on disjoint links do not disturb each other: B on link 1 leaves A's completion alone.
TEST(FlowNetworkTiming, DisjointComponentsAreIndependent) {
  FlowNetwork net({10 * kGBps, 1 * kGBps}, {0, 0});
  start_flow(net, 0, {0}, kGB);
  EXPECT_EQ(net.next_completion(), 100 * kMs);
  const FlowId b = start_flow(net, 50 * kMs, {1}, kGB);
  EXPECT_EQ(net.next_completion(), 100 * kMs);
  EXPECT_EQ(net.rate(b), 1 * kGBps);
}

// Completion is the first whole picosecond at which all bytes are sent: 1 byte at 3 B/s is
// 333,333,333,333.33 ps -> 333,333,333,334; three flows on 10 GB/s (1/3 each) finish together.
TEST(FlowNetworkTiming, CompletionRoundsUpToThePicosecond) {
  FlowNetwork slow({3}, {0});
  start_flow(slow, 0, {0}, 1);
  EXPECT_EQ(slow.next_completion(), 333'333'333'334);

  FlowNetwork net({10 * kGBps}, {0});
  for (int i = 0; i < 3; ++i) start_flow(net, 0, {0}, kGB);
  std::vector<FlowId> finished;
  net.advance(net.next_completion(), finished);
  EXPECT_EQ(finished.size(), 3u);
  EXPECT_EQ(net.now(), 300 * kMs);  // 3 GB / 10 GB/s; float noise snapped, not rounded up
}

// path_latency sums the links' latencies (the caller waits it before the flow transmits).
TEST(FlowNetworkTiming, PathLatencyIsTheSumOfLinkLatencies) {
  FlowNetwork net({1, 1, 1}, {1'000'000, 250'000, 2'000});
  const std::vector<LinkId> path{0, 2, 1};
  EXPECT_EQ(net.path_latency(path), 1'252'000);
  EXPECT_EQ(net.latency(1), 250'000);
}

// Finished flows' ids are reused by later starts (slots are pooled), and a reused id is a fresh
// flow with its own bytes and start time.
TEST(FlowNetworkTiming, FinishedSlotsAreReused) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId a = start_flow(net, 0, {0}, kGB);
  run_to_idle(net);
  EXPECT_FALSE(net.is_active(a));
  const FlowId b = start_flow(net, net.now(), {0}, 2 * kGB);
  EXPECT_EQ(b, a);
  EXPECT_EQ(net.start_time(b), 100 * kMs);
  EXPECT_EQ(net.next_completion(), 300 * kMs);
}

}  // namespace
}  // namespace trainsim
