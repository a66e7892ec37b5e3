// Shared switch buffers with dynamic thresholds (network/packet/switch_buffer.hpp): the accounting by hand, then
// the packet network with a switch's ports sharing one buffer: PFC pauses at alpha x the free buffer, headroom
// absorbs what is on the wire, a headroom too small drops and recovers, and lossy queues stop at alpha x the free
// buffer.
//
// Packets of 4096 B payload + 62 B headers = 4158 B on the wire; links of 10 GB/s and 1 us.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "network/packet/packet_network.hpp"
#include "network/packet/switch_buffer.hpp"
#include "network_test_support.hpp"

namespace trainsim {
namespace {

using testing::kGBps;
using testing::kUs;

constexpr std::int32_t kWire = 4158;

// Buffer 100,000 B, alpha 1/2, two lossless ingresses keeping 10,000 B of headroom each: a pool of 80,000 B and a
// threshold T = (80,000 - pool in use) / 2. Packets of 4,000 B on ingress 0: the k-th joins the pool while
// 4,000 k <= (80,000 - 4,000 (k - 1)) / 2, i.e. k <= 7; the 7th leaves T = (80,000 - 28,000) / 2 = 26,000 below
// the ingress's 28,000, so it pauses. The 8th and 9th go to the headroom (8,000 of 10,000), the 10th is dropped.
TEST(SwitchBuffer, PoolThenHeadroomThenDropByHand) {
  SwitchBuffer b(100'000, 0.5, 3'072);
  const int in0 = b.add_ingress(10'000);
  const int in1 = b.add_ingress(10'000);
  EXPECT_EQ(b.pool_bytes(), 80'000);
  EXPECT_EQ(b.threshold(), 40'000);
  for (int k = 1; k <= 7; ++k) {
    EXPECT_FALSE(b.should_pause(in0)) << "before packet " << k;
    EXPECT_EQ(b.admit(in0, 4'000), SwitchBuffer::Admission::Pool) << "packet " << k;
  }
  EXPECT_EQ(b.threshold(), 26'000);
  EXPECT_TRUE(b.should_pause(in0));
  EXPECT_FALSE(b.should_pause(in1));  // ingress 1 holds nothing
  EXPECT_EQ(b.admit(in0, 4'000), SwitchBuffer::Admission::Headroom);
  EXPECT_EQ(b.admit(in0, 4'000), SwitchBuffer::Admission::Headroom);
  EXPECT_EQ(b.admit(in0, 4'000), SwitchBuffer::Admission::Drop);
  EXPECT_EQ(b.headroom_bytes_used(in0), 8'000);
  EXPECT_EQ(b.used_bytes(), 36'000);
  EXPECT_EQ(b.peak_bytes(), 36'000);
  // Ingress 1 sees the same shrunken threshold: its k-th packet joins while 4,000 k <= (52,000 - 4,000 (k - 1)) / 2,
  // so 4 join.
  for (int k = 1; k <= 4; ++k) EXPECT_EQ(b.admit(in1, 4'000), SwitchBuffer::Admission::Pool) << "packet " << k;
  EXPECT_EQ(b.threshold(), (80'000 - 44'000) / 2);  // 18,000: now below ingress 0's 28,000 and ingress 1's 16,000
  EXPECT_FALSE(b.should_pause(in1));
  // Leaving empties the headroom first; ingress 0 resumes once its pool bytes are 3,072 below the threshold.
  for (int k = 0; k < 4; ++k) b.release(in1, 4'000);
  b.release(in0, 4'000);
  EXPECT_EQ(b.headroom_bytes_used(in0), 4'000);
  EXPECT_FALSE(b.should_resume(in0));
  b.release(in0, 4'000);
  EXPECT_EQ(b.headroom_bytes_used(in0), 0);
  EXPECT_EQ(b.pool_bytes_used(in0), 28'000);
  EXPECT_FALSE(b.should_resume(in0));  // 28,000 + 3,072 > T 26,000
  b.release(in0, 4'000);
  EXPECT_EQ(b.threshold(), 28'000);
  EXPECT_TRUE(b.should_resume(in0));  // 24,000 + 3,072 <= 28,000
  EXPECT_EQ(b.used_bytes(), 24'000);
  EXPECT_EQ(b.peak_bytes(), 52'000);  // 36,000 + ingress 1's 16,000
}

// Lossy: a queue may hold alpha x the free buffer (Choudhury and Hahne); the buffer's size bounds everything.
TEST(SwitchBuffer, LossyQueuesStopAtAlphaTimesTheFreeBuffer) {
  SwitchBuffer b(100'000, 1.0, 0);
  EXPECT_TRUE(b.admits_egress(0, 4'000));
  b.take(60'000);
  EXPECT_TRUE(b.admits_egress(36'000, 4'000));   // 40,000 <= 1 x 40,000
  EXPECT_FALSE(b.admits_egress(36'001, 4'000));  // one byte more
  b.give_back(60'000);
  EXPECT_EQ(b.used_bytes(), 0);
  EXPECT_EQ(b.peak_bytes(), 60'000);
  SwitchBuffer big_alpha(10'000, 64, 0);
  big_alpha.take(8'000);
  EXPECT_FALSE(big_alpha.admits_egress(0, 4'000));  // alpha allows it, the buffer has only 2,000 left
}

// 2 x 10 GB/s x 1 us + 2 packets of 4,158 B.
TEST(SwitchBuffer, HeadroomIsTwiceTheBandwidthDelayProductAndTwoPackets) {
  EXPECT_EQ(pfc_headroom_bytes(10 * kGBps, 1 * kUs, kWire), 20'000 + 2 * kWire);
  EXPECT_EQ(pfc_headroom_bytes(50 * kGBps, 2 * kUs, kWire), 200'000 + 2 * kWire);
}

// 8:1 incast through one switch: links 0..7 NIC -> switch 5, link 8 switch 5 -> receiver; 2 MB per sender.
struct SharedIncast {
  static constexpr int kSenders = 8;
  static constexpr std::int64_t kBytes = 2'000'000;
  PacketNetwork net;
  explicit SharedIncast(PacketConfig config)
      : net(std::vector<double>(kSenders + 1, 10 * kGBps), std::vector<SimTime>(kSenders + 1, 1 * kUs), 0, config) {
    for (LinkId l = 0; l < kSenders; ++l) net.set_switch_ends(l, -1, 5);
    net.set_switch_ends(kSenders, 5, -1);
    for (LinkId s = 0; s < kSenders; ++s) net.start(0, std::vector<LinkId>{s, kSenders}, kBytes);
  }
  // Runs until every flow is done; returns the last finish time.
  SimTime run() {
    std::vector<FlowId> finished;
    SimTime last = 0;
    for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) {
      net.advance(t, finished);
      if (!finished.empty()) last = t;
    }
    return last;
  }
  static constexpr double kBottleneckPs = 8.0 * (kBytes + 489 * 62) / (10 * kGBps) * 1e12;
};

PacketConfig shared_buffer(std::int64_t size, double alpha) {
  PacketConfig c;
  c.congestion_control = CongestionControl::None;
  c.ecn.enabled = false;
  c.switch_buffer.size_bytes = size;
  c.switch_buffer.alpha = alpha;
  return c;
}

// Lossless, 4 MB, alpha 1/8: 8 ingresses of 28,316 B headroom leave a pool P = 3,773,472 B. Each congested
// ingress settles where its bytes meet the threshold, x = alpha (P - 8 x): x = alpha P / (1 + 8 alpha) = P / 16
// = 235,842 B, so the egress queue holds about 8 x = 1.89 MB (plus what the headroom caught). Nothing is dropped,
// every sender is paused, the bottleneck never idles. A buffer twice as big lets the queue grow twice as deep.
TEST(SharedSwitchBuffer, PfcPausesAtTheDynamicThresholdAndDropsNothing) {
  const auto run = [](std::int64_t size) {
    SharedIncast in(shared_buffer(size, 0.125));
    const SimTime last = in.run();
    EXPECT_EQ(in.net.counters().drops, 0);
    EXPECT_EQ(in.net.counters().headroom_drops, 0);
    EXPECT_EQ(in.net.completed_flows().size(), 8u);
    const auto ports = in.net.packet_link_statistics();
    for (int s = 0; s < SharedIncast::kSenders; ++s) EXPECT_GT(ports[static_cast<std::size_t>(s)].pause_events, 0);
    EXPECT_LE(static_cast<double>(last), 1.02 * SharedIncast::kBottleneckPs + 2.0 * kUs);
    const auto buffers = in.net.switch_buffer_statistics();
    EXPECT_EQ(buffers.size(), 1u);
    EXPECT_EQ(buffers.at(0).switch_id, 5);
    EXPECT_LE(buffers.at(0).peak_bytes, size);
    EXPECT_EQ(buffers.at(0).peak_bytes, ports[8].max_queue_bytes);  // one switch, one queue
    return ports[8].max_queue_bytes;
  };
  const std::int64_t pool = 4'000'000 - 8 * (20'000 + 2 * kWire);
  const std::int64_t q4 = run(4'000'000);
  EXPECT_GT(q4, pool / 2 - 8 * kWire);                 // every ingress reached its share
  EXPECT_LT(q4, pool / 2 + 8 * (20'000 + 2 * kWire));  // and at most its headroom beyond it
  const std::int64_t q8 = run(8'000'000);
  EXPECT_NEAR(static_cast<double>(q8) / static_cast<double>(q4), 2.0, 0.1);
}

// A headroom smaller than what is on the wire when the PAUSE leaves: packets past it are dropped even though PFC
// is on (as a switch configured so would), counted as headroom drops, and go-back-N still delivers every byte.
TEST(SharedSwitchBuffer, ATooSmallHeadroomDropsAndTheFlowsRecover) {
  PacketConfig c = shared_buffer(1'000'000, 0.125);
  c.switch_buffer.headroom_bytes = kWire;  // one packet: the rest of the wire's 20 KB is lost at each pause
  SharedIncast in(c);
  in.run();
  EXPECT_GT(in.net.counters().headroom_drops, 0);
  EXPECT_EQ(in.net.counters().drops, in.net.counters().headroom_drops);
  EXPECT_GT(in.net.counters().retransmitted_packets, 0);
  ASSERT_EQ(in.net.completed_flows().size(), 8u);
  for (const FlowRecord& r : in.net.completed_flows()) EXPECT_EQ(r.bytes, SharedIncast::kBytes);
}

// Lossy, alpha 1, 1 MB: one congested queue stops at q = alpha (B - q), i.e. half the buffer (plus a packet).
TEST(SharedSwitchBuffer, LossyQueueStopsAtItsShareOfTheBuffer) {
  PacketConfig c = shared_buffer(1'000'000, 1.0);
  c.pfc.enabled = false;
  SharedIncast in(c);
  in.run();
  const auto ports = in.net.packet_link_statistics();
  EXPECT_GT(ports[8].drops, 0);
  EXPECT_LE(ports[8].max_queue_bytes, 500'000 + kWire);
  EXPECT_GT(ports[8].max_queue_bytes, 500'000 - kWire);
  for (const auto& p : ports) EXPECT_EQ(p.pause_events, 0);
  ASSERT_EQ(in.net.completed_flows().size(), 8u);
  for (const FlowRecord& r : in.net.completed_flows()) EXPECT_EQ(r.bytes, SharedIncast::kBytes);
}

// Two incasts on two egress ports of one switch share its buffer: each settles lower than alone (the free buffer
// is what both queues draw on), which per-port buffers cannot show.
TEST(SharedSwitchBuffer, TwoCongestedPortsShareTheBuffer) {
  const auto queue_of_port_a = [](bool second_incast) {
    // Links 0..3 senders -> switch 1 -> link 4 (port A); links 5..8 senders -> switch 1 -> link 9 (port B).
    PacketNetwork net(std::vector<double>(10, 10 * kGBps), std::vector<SimTime>(10, 1 * kUs), 0,
                      shared_buffer(2'000'000, 0.125));
    for (LinkId l : {0, 1, 2, 3, 5, 6, 7, 8}) net.set_switch_ends(l, -1, 1);
    net.set_switch_ends(4, 1, -1);
    net.set_switch_ends(9, 1, -1);
    for (LinkId s = 0; s < 4; ++s) net.start(0, std::vector<LinkId>{s, 4}, 2'000'000);
    if (second_incast)
      for (LinkId s = 5; s < 9; ++s) net.start(0, std::vector<LinkId>{s, 9}, 2'000'000);
    std::vector<FlowId> finished;
    for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) net.advance(t, finished);
    EXPECT_EQ(net.counters().drops, 0);
    return net.packet_link_statistics()[4].max_queue_bytes;
  };
  const std::int64_t alone = queue_of_port_a(false);
  const std::int64_t shared = queue_of_port_a(true);
  // Alone, 4 ingresses settle at alpha P / (1 + 4 alpha) each, a queue of P / 3; beside a second incast at
  // alpha P / (1 + 8 alpha), a queue of P / 4 (each plus what its headroom caught).
  EXPECT_LT(static_cast<double>(shared), 0.85 * static_cast<double>(alone));
  EXPECT_GT(static_cast<double>(shared), 0.6 * static_cast<double>(alone));
}

TEST(SharedSwitchBuffer, ABufferTheHeadroomFillsIsRefusedNamingTheField) {
  PacketConfig c = shared_buffer(8 * 28'316, 0.125);  // exactly the 8 ingresses' headroom: no pool
  try {
    SharedIncast in(c);
    FAIL() << "accepted";
  } catch (const NoSharedPoolError& e) {
    EXPECT_NE(std::string(e.what()).find("switch_buffer.size_bytes"), std::string::npos) << e.what();
    EXPECT_EQ(e.switch_id(), 5);
    EXPECT_EQ(e.headroom_bytes(), 8 * 28'316);
  }
  // seal_links() refuses it before any flow, and so does the first start() when nobody sealed them.
  PacketNetwork sealed(std::vector<double>(9, 10 * kGBps), std::vector<SimTime>(9, 1 * kUs), 0, c);
  for (LinkId l = 0; l < 8; ++l) sealed.set_switch_ends(l, -1, 5);
  EXPECT_THROW(sealed.seal_links(), NoSharedPoolError);
  PacketConfig bad_alpha = shared_buffer(1'000'000, 0);
  EXPECT_THROW(PacketNetwork({10 * kGBps}, {1 * kUs}, 0, bad_alpha), Error);
}

}  // namespace
}  // namespace trainsim
