// PacketNetwork (network/packet/packet_network.hpp): packet timing by hand (serialization of every
// packet with its header, store and forward per hop, link latencies), sharing a bottleneck, 8:1
// incast under PFC, lossy go-back-N and DCQCN, link failures, determinism and bad input.
//
// Numbers used throughout: MTU payload 4096 B + 62 B of headers = 4158 B per full packet on the
// wire; at 10 GB/s a full packet serializes in 415.8 ns = 415,800 ps.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "network/flow/flow_network.hpp"
#include "network/packet/dcqcn.hpp"
#include "network/packet/ecn_marking.hpp"
#include "network/packet/packet_network.hpp"
#include "network/packet/timely.hpp"
#include "network_test_support.hpp"
#include "support/error_of.hpp"

namespace trainsim {
namespace {

using test::error_of;
using ::testing::HasSubstr;
using testing::kGBps;
using testing::kUs;

constexpr SimTime kFullPacketPs = 415'800;  // 4158 B at 10 GB/s

FlowId start_flow(PacketNetwork& net, SimTime now, std::vector<LinkId> path, std::int64_t bytes,
                  double rate_cap = kUnlimitedRate) {
  return net.start(now, path, bytes, rate_cap);
}

// Advances from bound to bound until nothing can finish; returns (flow, finish time). Checks on
// the way that next_completion() never passed a completion: each flow is reported by the advance
// that reached exactly its finish time.
std::vector<std::pair<FlowId, SimTime>> run_to_idle(PacketNetwork& net) {
  std::vector<std::pair<FlowId, SimTime>> done;
  std::vector<FlowId> finished;
  for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) {
    EXPECT_GE(t, net.now());
    const std::size_t records = net.completed_flows().size();
    net.advance(t, finished);
    EXPECT_EQ(net.completed_flows().size() - records, finished.size());
    for (std::size_t i = records; i < net.completed_flows().size(); ++i) {
      EXPECT_EQ(net.completed_flows()[i].finish, t)
          << "flow " << net.completed_flows()[i].id << " finished before the bound";
    }
    for (FlowId f : finished) done.emplace_back(f, t);
  }
  return done;
}

PacketConfig no_congestion_control() {
  PacketConfig c;
  c.congestion_control = CongestionControl::None;
  c.ecn.enabled = false;
  return c;
}

// 1,000,000 B = 244 full packets + one of 1,000,000 - 244 x 4096 = 576 B (638 B on the wire).
// Serialization at 10 GB/s: 244 x 415,800 + 63,800 = 101,519,000 ps; plus 1 us of latency:
// 102,519,000 ps. The rate limiter runs at the line rate, so the port never idles.
TEST(PacketNetworkTiming, OneFlowOnOneLinkIsSerializationPlusLatency) {
  PacketNetwork net({10 * kGBps}, {1 * kUs});
  const FlowId f = start_flow(net, 0, {0}, 1'000'000);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].first, f);
  const SimTime expected = 244 * kFullPacketPs + 63'800 + 1 * kUs;
  EXPECT_NEAR(static_cast<double>(done[0].second), static_cast<double>(expected), static_cast<double>(kFullPacketPs));
  EXPECT_EQ(done[0].second, expected);  // and in fact to the picosecond
  EXPECT_EQ(net.active_flows(), 0u);
  const auto packets = net.packet_link_statistics();
  EXPECT_EQ(packets[0].packets_sent, 245);
  EXPECT_EQ(packets[0].wire_bytes_sent, 1'000'000 + 245 * 62);
  EXPECT_EQ(packets[0].transmit_time, 244 * kFullPacketPs + 63'800);
  const auto links = net.link_statistics();
  EXPECT_EQ(links[0].bytes_carried, 1e6);
  EXPECT_EQ(links[0].peak_flows, 1);
  ASSERT_EQ(net.completed_flows().size(), 1u);
  EXPECT_EQ(net.completed_flows()[0].finish, expected);
}

// Three 10 GB/s hops of 1 us: store and forward per packet pipelines. Hop 0 sends everything in
// 101,519,000 ps; each further hop adds one full packet's serialization (415,800 ps: the last,
// small packet queues behind the one before it, which left hop k one packet time after hop k-1)
// and the small packet's own 63,800 ps once: 244 x 415,800 = 101,455,200 (the full packets on hop 0)
// + 2 x 415,800 + 63,800 + 3 x 1 us = 105,350,600 ps, vs ~3 x 101.5 us without pipelining.
TEST(PacketNetworkTiming, MultiHopFlowPipelinesPackets) {
  PacketNetwork net({10 * kGBps, 10 * kGBps, 10 * kGBps}, {1 * kUs, 1 * kUs, 1 * kUs});
  start_flow(net, 0, {0, 1, 2}, 1'000'000);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  const SimTime expected = 244 * kFullPacketPs + 2 * kFullPacketPs + 63'800 + 3 * kUs;
  EXPECT_NEAR(static_cast<double>(done[0].second), static_cast<double>(expected), static_cast<double>(kFullPacketPs));
  EXPECT_EQ(done[0].second, expected);
  // Equal speeds: no packet ever waits behind another at a switch.
  for (const auto& s : net.packet_link_statistics()) EXPECT_LE(s.max_queue_bytes, 4158);
}

// The same over 300 hops (a coupled ring channel on 128 GPUs crosses ~300 links, FlowBackend): each hop past the
// first adds one full packet's serialization and its latency, as above; no hop index wraps.
TEST(PacketNetworkTiming, PathsLongerThan255HopsPipelineToo) {
  constexpr int kHops = 300;
  PacketNetwork net(std::vector<double>(kHops, 10 * kGBps), std::vector<SimTime>(kHops, 1 * kUs));
  std::vector<LinkId> path;
  for (int h = 0; h < kHops; ++h) path.push_back(h);
  start_flow(net, 0, path, 1'000'000);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].second, 244 * kFullPacketPs + (kHops - 1) * kFullPacketPs + 63'800 + kHops * kUs);
  EXPECT_EQ(net.link_statistics()[kHops - 1].bytes_carried, 1e6);
}

// A flow started later (the runner's usual pattern) begins then: same timing shifted by 5 us.
TEST(PacketNetworkTiming, FlowStartedLaterIsShifted) {
  PacketNetwork net({10 * kGBps}, {1 * kUs});
  std::vector<FlowId> finished;
  net.advance(5 * kUs, finished);
  start_flow(net, 5 * kUs, {0}, 1'000'000);
  EXPECT_EQ(net.start_time(0), 5 * kUs);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].second, 5 * kUs + 244 * kFullPacketPs + 63'800 + 1 * kUs);
}

// Two 10 MB flows from two NICs into one 10 GB/s switch egress. Each is 2441 full packets + one
// of 1664 B: 10,000,000 + 2442 x 62 = 10,151,404 B on the wire; both together 20,302,808 B keep
// the bottleneck busy for 2,030,280.8 ns. Total ~ 2 x bytes / capacity + 2 us of latency.
//
// Without DCQCN, PFC alone holds the senders back and the FIFO never empties: the bottleneck is
// busy to the end. With DCQCN at the paper's defaults the flows stay fair, but the queue above
// Kmin keeps marking while it drains, the rates are cut three times (10 -> 5 -> 2.5 -> 1.25 GB/s
// each in the first 160 us) and recover only by R_AI = 40 Mb/s steps after fast recovery: the
// link idles and the transfer takes ~1.8x as long. That is DCQCN's known slow recovery at high
// line rates with 40G-era parameters, not a modelling artefact; the test pins it loosely.
class SharedBottleneck : public ::testing::TestWithParam<bool> {};

TEST_P(SharedBottleneck, FlowsFinishTogether) {
  const bool dcqcn = GetParam();
  PacketConfig config;
  config.congestion_control = dcqcn ? CongestionControl::Dcqcn : CongestionControl::None;
  config.ecn.enabled = dcqcn;
  PacketNetwork net({10 * kGBps, 10 * kGBps, 10 * kGBps}, {1 * kUs, 1 * kUs, 1 * kUs}, 0, config);
  const FlowId a = start_flow(net, 0, {0, 2}, 10'000'000);
  start_flow(net, 0, {1, 2}, 10'000'000);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 2u);
  SimTime fa = 0, fb = 0;
  for (const auto& [f, t] : done) (f == a ? fa : fb) = t;
  ASSERT_TRUE(fa > 0 && fb > 0);
  const double ideal = 20'302'808.0 / 10e9 * 1e12 + 2.0 * kUs;
  const double last = static_cast<double>(std::max(fa, fb));
  EXPECT_LE(std::abs(static_cast<double>(fa - fb)), 0.03 * last) << "fa " << fa << " fb " << fb;
  EXPECT_GE(last, ideal - static_cast<double>(kFullPacketPs));
  const auto packets = net.packet_link_statistics();
  EXPECT_EQ(packets[2].packets_sent, 2 * 2442);
  EXPECT_EQ(packets[2].drops, 0);
  if (!dcqcn) {
    EXPECT_LE(last, ideal * 1.01) << "the bottleneck idled";
    EXPECT_GT(packets[0].pause_events + packets[1].pause_events, 0);
  } else {
    EXPECT_LE(last, ideal * 2.5);
    for (const FlowRecord& r : net.completed_flows()) EXPECT_LE(r.min_rate_Bps, 0.5 * 10 * kGBps);
  }
}

INSTANTIATE_TEST_SUITE_P(WithAndWithoutDcqcn, SharedBottleneck, ::testing::Bool());

// Against the flow model, PFC only: A (10 MB, links 0 -> 3) and B (5 MB, 1 -> 3) share link 3,
// C (8 MB, 2 -> 4) is alone. Max-min: A and B get 5 GB/s each, B ends at 1 ms, A at 1.5 ms, C
// at 0.8 ms. Packets add 62/4096 = 1.5% of headers, one packet per extra hop and 2 us of latency
// (the flow model leaves latency to its caller: added here): within 2% of the flow model.
TEST(PacketNetworkVsFlowModel, SharedAndAloneFlowsAgreeWithinHeaders) {
  const std::vector<double> cap(5, 10 * kGBps);
  const std::vector<SimTime> lat(5, 1 * kUs);
  FlowNetwork fluid(cap, lat);
  PacketNetwork packets(cap, lat, 0, no_congestion_control());
  const std::vector<std::vector<LinkId>> paths{{0, 3}, {1, 3}, {2, 4}};
  const std::int64_t bytes[] = {10'000'000, 5'000'000, 8'000'000};
  for (std::size_t i = 0; i < 3; ++i) {
    fluid.start(0, paths[i], bytes[i]);
    packets.start(0, paths[i], bytes[i]);
  }
  std::vector<SimTime> fluid_end(3), packet_end(3);
  std::vector<FlowId> finished;
  for (SimTime t = fluid.next_completion(); t != kNever; t = fluid.next_completion()) {
    fluid.advance(t, finished);
    for (FlowId f : finished)
      fluid_end[static_cast<std::size_t>(f)] = t + fluid.path_latency(paths[static_cast<std::size_t>(f)]);
  }
  for (const auto& [f, t] : run_to_idle(packets)) packet_end[static_cast<std::size_t>(f)] = t;
  EXPECT_EQ(fluid_end[1], 1'000'000'000 + 2 * kUs);
  EXPECT_EQ(fluid_end[0], 1'500'000'000 + 2 * kUs);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_GE(packet_end[i], fluid_end[i]) << "flow " << i;
    EXPECT_LE(static_cast<double>(packet_end[i]), 1.02 * static_cast<double>(fluid_end[i])) << "flow " << i;
  }
}

// 8:1 incast: links 0..7 are NIC -> switch, link 8 switch -> receiver, all 10 GB/s, 1 us.
struct Incast {
  static constexpr int kSenders = 8;
  static constexpr std::int64_t kBytes = 2'000'000;  // 489 packets each (488 full + 1152 B)
  PacketNetwork net;
  std::vector<FlowId> flows;
  explicit Incast(PacketConfig config)
      : net(std::vector<double>(kSenders + 1, 10 * kGBps), std::vector<SimTime>(kSenders + 1, 1 * kUs), 0, config) {
    for (int s = 0; s < kSenders; ++s) flows.push_back(start_flow(net, 0, {s, kSenders}, kBytes));
  }
  // 8 x (2,000,000 + 489 x 62) = 16,242,576 wire bytes through one 10 GB/s port: 1,624,257.6 ns.
  static constexpr double kBottleneckPs = 16'242'576.0 / 10e9 * 1e12;
};

// Lossless: 8 senders at line rate overfill the egress; each ingress's share passes XOFF (256 KiB)
// after ~256 KiB / (10 x 7/8 GB/s) ~ 30 us, so every sender link is paused; nothing is dropped,
// and the bottleneck stays busy: total within 2% of its serialization.
TEST(PacketNetworkIncast, PfcPausesSendersAndDropsNothing) {
  Incast in(no_congestion_control());
  const auto done = run_to_idle(in.net);
  ASSERT_EQ(done.size(), 8u);
  const auto packets = in.net.packet_link_statistics();
  for (int s = 0; s < Incast::kSenders; ++s) {
    EXPECT_GT(packets[static_cast<std::size_t>(s)].pause_events, 0) << "sender link " << s;
    EXPECT_GT(packets[static_cast<std::size_t>(s)].paused_time, 0) << "sender link " << s;
  }
  EXPECT_EQ(in.net.counters().drops, 0);
  EXPECT_EQ(in.net.counters().retransmitted_packets, 0);
  EXPECT_EQ(packets[8].packets_sent, 8 * 489);
  // PFC holds each ingress near XOFF: the egress queue stays around 8 x 256 KiB plus what is in
  // flight during a PAUSE's latency, never unbounded.
  EXPECT_GT(packets[8].max_queue_bytes, 8 * 240 * 1024);
  EXPECT_LT(packets[8].max_queue_bytes, 8 * (256 * 1024 + 4 * 4158 + 10'000));
  EXPECT_LE(static_cast<double>(done.back().second), 1.02 * Incast::kBottleneckPs + 2.0 * kUs);
}

// Recording the ports' history lists every pause: as many intervals as PAUSEs took effect, in order, apart, summing
// to the paused time; without recording there are none.
TEST(PacketNetworkIncast, RecordedPausesAreThePortsPausedTime) {
  PacketNetwork net(std::vector<double>(Incast::kSenders + 1, 10 * kGBps),
                    std::vector<SimTime>(Incast::kSenders + 1, 1 * kUs), 0, no_congestion_control());
  net.record_port_history(4 * 4096, 1 * kUs);
  for (LinkId s = 0; s < Incast::kSenders; ++s) start_flow(net, 0, {s, Incast::kSenders}, Incast::kBytes);
  run_to_idle(net);
  const auto stats = net.packet_link_statistics();
  for (LinkId s = 0; s < Incast::kSenders; ++s) {
    const auto& pauses = net.pause_intervals(s);
    ASSERT_EQ(static_cast<std::int64_t>(pauses.size()), stats[static_cast<std::size_t>(s)].pause_events);
    SimTime total = 0;
    for (std::size_t i = 0; i < pauses.size(); ++i) {
      EXPECT_LT(pauses[i].from, pauses[i].to);
      if (i > 0) { EXPECT_GE(pauses[i].from, pauses[i - 1].to); }
      total += pauses[i].to - pauses[i].from;
    }
    EXPECT_EQ(total, stats[static_cast<std::size_t>(s)].paused_time) << "sender link " << s;
  }
  Incast unrecorded(no_congestion_control());
  run_to_idle(unrecorded.net);
  EXPECT_TRUE(unrecorded.net.pause_intervals(0).empty());
}

// A congestion tree of two levels: senders 0..3 into switch A, A -> B (link 4), senders 5..8 into B, B -> the
// receiver (link 9). B's egress 9 backs up and pauses its ingresses, A -> B among them; A's egress 4 then backs up
// and pauses A's senders. Each recorded pause names where the paused link's bytes waited: 4 for A's senders, 9 for
// A -> B and B's own senders.
TEST(PacketNetworkIncast, EachPauseNamesThePortItsLinksBytesWaitedFor) {
  PacketNetwork net(std::vector<double>(10, 10 * kGBps), std::vector<SimTime>(10, 1 * kUs), 0, no_congestion_control());
  net.record_port_history(4 * 4096, 1 * kUs);
  for (LinkId s = 0; s < 4; ++s) start_flow(net, 0, {s, 4, 9}, Incast::kBytes);
  for (LinkId s = 5; s < 9; ++s) start_flow(net, 0, {s, 9}, Incast::kBytes);
  run_to_idle(net);
  const auto causes = [&](LinkId l) {
    std::set<LinkId> out;
    for (const PauseInterval& p : net.pause_intervals(l)) out.insert(p.cause);
    return out;
  };
  for (LinkId s = 0; s < 4; ++s) {
    EXPECT_FALSE(net.pause_intervals(s).empty()) << "sender link " << s;
    EXPECT_EQ(causes(s), std::set<LinkId>{4}) << "sender link " << s;
  }
  ASSERT_FALSE(net.pause_intervals(4).empty());
  EXPECT_EQ(causes(4), std::set<LinkId>{9});
  for (LinkId s = 5; s < 9; ++s) EXPECT_EQ(causes(s), std::set<LinkId>{9}) << "sender link " << s;
}

// Lossy: a 256 KiB egress buffer overflows (8 packets arrive per one that leaves), packets are
// dropped, receivers NACK, senders go back N, and every flow still completes.
TEST(PacketNetworkIncast, LossyModeDropsRetransmitsAndCompletes) {
  PacketConfig config = no_congestion_control();
  config.pfc.enabled = false;
  config.port_buffer_bytes = 256 * 1024;
  Incast in(config);
  const auto done = run_to_idle(in.net);
  ASSERT_EQ(done.size(), 8u);
  const auto packets = in.net.packet_link_statistics();
  EXPECT_GT(packets[8].drops, 0);
  EXPECT_EQ(in.net.counters().drops, packets[8].drops);
  EXPECT_GT(in.net.counters().nacks, 0);
  EXPECT_GT(in.net.counters().retransmitted_packets, 0);
  for (const auto& s : packets) EXPECT_EQ(s.pause_events, 0);
  EXPECT_LE(packets[8].max_queue_bytes, 256 * 1024);
  // Every byte was delivered: the bottleneck carried at least all packets once.
  EXPECT_GE(packets[8].packets_sent, 8 * 489);
  for (const FlowRecord& r : in.net.completed_flows()) EXPECT_EQ(r.bytes, Incast::kBytes);
}

// DCQCN: the egress queue passes Kmin (100 KB) within a few us, packets get ECN marks, receivers
// send CNPs and every sender cuts its rate below the 10 GB/s line rate.
TEST(PacketNetworkIncast, DcqcnMarksAndCutsRates) {
  Incast in(PacketConfig{});
  const auto done = run_to_idle(in.net);
  ASSERT_EQ(done.size(), 8u);
  const auto packets = in.net.packet_link_statistics();
  EXPECT_GT(packets[8].ecn_marks, 0);
  EXPECT_GT(in.net.counters().cnps, 0);
  EXPECT_GT(in.net.counters().rate_cuts, 0);
  EXPECT_EQ(in.net.counters().drops, 0);
  ASSERT_EQ(in.net.completed_flows().size(), 8u);
  for (const FlowRecord& r : in.net.completed_flows()) {
    EXPECT_GT(r.cnps, 0) << "flow " << r.id;
    EXPECT_LT(r.min_rate_Bps, 0.9 * 10 * kGBps) << "flow " << r.id;
  }
}

// Recording rates lists each flow's DCQCN rate over time: the line rate at its start, each cut and raise, 0 when it
// finishes; the lowest is the flow's recorded minimum, there is a cut for no more than each CNP, and every sample
// names the flow's NIC port. Without recording there are none.
TEST(PacketNetworkIncast, RecordedRatesFollowEachFlowsCutsAndRaises) {
  PacketNetwork net(std::vector<double>(Incast::kSenders + 1, 10 * kGBps),
                    std::vector<SimTime>(Incast::kSenders + 1, 1 * kUs), 0, PacketConfig{});
  net.record_rates();
  for (LinkId s = 0; s < Incast::kSenders; ++s) start_flow(net, 0, {s, Incast::kSenders}, Incast::kBytes);
  run_to_idle(net);
  const auto& samples = net.rate_samples();
  EXPECT_FALSE(net.rate_samples_truncated());
  for (std::size_t i = 1; i < samples.size(); ++i) EXPECT_LE(samples[i - 1].at, samples[i].at);
  ASSERT_EQ(net.completed_flows().size(), 8u);
  for (const FlowRecord& r : net.completed_flows()) {
    SCOPED_TRACE("flow " + std::to_string(r.serial));
    std::vector<RateSample> mine;
    for (const RateSample& x : samples)
      if (x.flow == r.serial) mine.push_back(x);
    ASSERT_GE(mine.size(), 3u);
    EXPECT_EQ(mine.front().at, r.start);
    EXPECT_DOUBLE_EQ(mine.front().rate_Bps, 10 * kGBps);
    EXPECT_EQ(mine.back().at, r.finish);
    EXPECT_EQ(mine.back().rate_Bps, 0);
    double lowest = mine.front().rate_Bps;
    std::int64_t cuts = 0, raises = 0;
    for (std::size_t i = 0; i + 1 < mine.size(); ++i) {
      EXPECT_EQ(mine[i].nic, static_cast<LinkId>(r.serial));             // flow s leaves through link s
      EXPECT_NE(mine[i].rate_Bps, i > 0 ? mine[i - 1].rate_Bps : -1.0);  // a sample is a change
      lowest = std::min(lowest, mine[i].rate_Bps);
      if (i > 0) (mine[i].rate_Bps < mine[i - 1].rate_Bps ? cuts : raises) += 1;
    }
    EXPECT_DOUBLE_EQ(lowest, r.min_rate_Bps);
    EXPECT_GT(cuts, 0);
    EXPECT_LE(cuts, r.cnps);
    EXPECT_GT(raises, 0);
  }
  Incast unrecorded(PacketConfig{});
  run_to_idle(unrecorded.net);
  EXPECT_TRUE(unrecorded.net.rate_samples().empty());
}

// Two leaves joined by two spines: link 0 NIC -> leaf A, 1 A -> spine 1, 2 A -> spine 2, 3 spine 1 -> leaf B,
// 4 spine 2 -> leaf B, 5 B -> receiver NIC, 6 a second sender -> A. NICs at 10 GB/s, the spine links at `spine`.
struct TwoSpines {
  static constexpr std::int64_t kBytes = 4'096'000;  // 1,000 full packets: 4,158,000 B on the wire
  PacketNetwork net;
  TwoSpines(PacketConfig config, double spine_GBps, SimTime spine2_latency = 1 * kUs)
      : net({10 * kGBps, spine_GBps * kGBps, spine_GBps * kGBps, spine_GBps * kGBps, spine_GBps * kGBps, 10 * kGBps,
             10 * kGBps},
            {1 * kUs, 1 * kUs, spine2_latency, 1 * kUs, spine2_latency, 1 * kUs, 1 * kUs}, 0, config) {}
  static std::vector<std::vector<LinkId>> both() { return {{0, 1, 3, 5}, {0, 2, 4, 5}}; }
};

// Spraying one flow over two spines of half the NIC's speed: each carries half its packets, and the flow runs at the
// NIC's 10 GB/s where either spine alone holds it to 5 (4,158,000 B: 415.8 us against 831.6 us, plus latencies and a
// packet's store and forward per hop).
TEST(PacketNetworkMultipath, SprayingOverTwoSpinesDoublesWhatOneCarries) {
  TwoSpines one(no_congestion_control(), 5);
  const auto alone = run_to_idle(one.net);
  start_flow(one.net, one.net.now(), {0, 1, 3, 5}, TwoSpines::kBytes);
  const auto single = run_to_idle(one.net);
  ASSERT_TRUE(alone.empty());
  ASSERT_EQ(single.size(), 1u);
  TwoSpines two(no_congestion_control(), 5);
  two.net.start(0, TwoSpines::both(), TwoSpines::kBytes);
  const auto sprayed = run_to_idle(two.net);
  ASSERT_EQ(sprayed.size(), 1u);
  const double one_path_us = static_cast<double>(single[0].second) / 1e6;
  const double sprayed_us = static_cast<double>(sprayed[0].second) / 1e6;
  EXPECT_NEAR(one_path_us, 831.6 + 4 + 3 * 0.8316, 2.0);
  EXPECT_NEAR(sprayed_us, 415.8 + 4 + 0.4158 + 2 * 0.8316, 2.0);
  const auto stats = two.net.packet_link_statistics();
  EXPECT_EQ(stats[1].packets_sent, 500);
  EXPECT_EQ(stats[2].packets_sent, 500);
  EXPECT_EQ(stats[5].packets_sent, 1000);
  EXPECT_EQ(two.net.counters().packets_delivered, 1000);
  EXPECT_EQ(two.net.completed_flows().front().bytes, TwoSpines::kBytes);
}

// A spine 20 us longer than the other: sprayed packets arrive out of order, the receiver places them as they come,
// nothing is resent, and the flow ends when the last of the slow spine's packets arrives.
TEST(PacketNetworkMultipath, PacketsArrivingOutOfOrderArePlacedAsTheyCome) {
  TwoSpines net(no_congestion_control(), 10, 21 * kUs);
  net.net.start(0, TwoSpines::both(), TwoSpines::kBytes);
  const auto done = run_to_idle(net.net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(net.net.counters().packets_delivered, 1000);
  EXPECT_EQ(net.net.counters().retransmitted_packets, 0);
  EXPECT_EQ(net.net.counters().nacks, 0);
  // The NIC sends at 10 GB/s, each spine carries every other packet: the last one (on spine 2) leaves the NIC at
  // 415.8 us and takes the slow way.
  EXPECT_NEAR(static_cast<double>(done[0].second) / 1e6, 415.8 + 1 + 21 + 21 + 1 + 3 * 0.4158, 2.0);
}

// Adaptive routing steers around a spine that another flow keeps busy (a flow from the second sender into spine 1):
// the flow finishes sooner than sprayed evenly over both, and so does the other flow.
TEST(PacketNetworkMultipath, AdaptiveRoutingAvoidsTheBusySpine) {
  const auto run = [](Multipath how) {
    PacketConfig config = no_congestion_control();
    config.multipath = how;
    TwoSpines t(config, 10);
    const FlowId busy = start_flow(t.net, 0, {6, 1}, TwoSpines::kBytes);
    t.net.start(0, TwoSpines::both(), TwoSpines::kBytes);
    std::pair<SimTime, SimTime> finish{0, 0};
    for (const auto& [id, at] : run_to_idle(t.net)) (id == busy ? finish.first : finish.second) = at;
    const auto stats = t.net.packet_link_statistics();
    EXPECT_EQ(stats[1].packets_sent + stats[2].packets_sent, 2000);
    return std::tuple{finish.first, finish.second, stats[2].packets_sent};
  };
  const auto [busy_sprayed, spread_sprayed, spine2_sprayed] = run(Multipath::Spray);
  const auto [busy_adaptive, spread_adaptive, spine2_adaptive] = run(Multipath::Adaptive);
  EXPECT_EQ(spine2_sprayed, 500);
  EXPECT_GT(spine2_adaptive, 700);
  EXPECT_LT(spread_adaptive, spread_sprayed);
  EXPECT_LE(busy_adaptive, busy_sprayed);
}

TEST(PacketNetworkMultipath, BadRoutesAreRefused) {
  TwoSpines t(PacketConfig{}, 10);
  EXPECT_THAT(error_of([&] { t.net.start(0, std::vector<std::vector<LinkId>>{}, 1000); }), HasSubstr("routes"));
  EXPECT_THAT(error_of([&] {
                t.net.start(0, {{0, 1, 3, 5}, {6, 2, 4, 5}}, 1000);
              }),
              HasSubstr("share its first and last link"));
  EXPECT_THAT(error_of([&] {
                t.net.start(0, std::vector<std::vector<LinkId>>(256, {0, 1, 3, 5}), 1000);
              }),
              HasSubstr("255"));
  PacketConfig lossy = PacketConfig{};
  lossy.pfc.enabled = false;
  TwoSpines l(lossy, 10);
  EXPECT_THAT(error_of([&] { l.net.start(0, TwoSpines::both(), 1000); }), HasSubstr("PFC"));
  EXPECT_EQ(t.net.active_flows(), 0u);
  EXPECT_EQ(l.net.active_flows(), 0u);
  // One route is a flow like any other, lossy or not.
  l.net.start(0, std::vector<std::vector<LinkId>>{{0, 1, 3, 5}}, 1000);
  EXPECT_EQ(run_to_idle(l.net).size(), 1u);
}

// Determinism: the same inputs give the same finish times, counters and per-link statistics.
TEST(PacketNetworkIncast, IdenticalRunsGiveIdenticalResults) {
  const auto run = [] {
    Incast in(PacketConfig{});
    auto done = run_to_idle(in.net);
    return std::make_tuple(done, in.net.counters().events, in.net.counters().cnps, in.net.counters().pause_events,
                           in.net.packet_link_statistics()[8].ecn_marks,
                           in.net.packet_link_statistics()[8].max_queue_bytes);
  };
  EXPECT_EQ(run(), run());
}

// A link that goes down stalls the flow mid-packet; restored, it resumes where it was. 1 MB on one
// link as in the first test (102,519,000 ps), down from 50 us to 150 us: done 100 us later.
TEST(PacketNetworkFaults, LinkDownStallsAndRestoringResumes) {
  PacketNetwork net({10 * kGBps}, {1 * kUs});
  const FlowId f = start_flow(net, 0, {0}, 1'000'000);
  std::vector<FlowId> finished;
  net.advance(50 * kUs, finished);
  net.set_capacity(0, 0, 50 * kUs);
  EXPECT_EQ(net.next_completion(), kNever);
  std::vector<FlowId> stalled;
  net.stalled_flows(stalled);
  EXPECT_EQ(stalled, std::vector<FlowId>{f});
  EXPECT_EQ(net.rate(f), 0);
  net.advance(60 * kUs, finished);  // the packets already on the wire land within 1 us
  const double remaining = net.remaining_bytes(f);
  EXPECT_GT(remaining, 0);
  net.advance(150 * kUs, finished);
  EXPECT_TRUE(finished.empty());
  EXPECT_EQ(net.remaining_bytes(f), remaining);  // nothing moved while down
  net.set_capacity(0, 10 * kGBps, 150 * kUs);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  const SimTime expected = 244 * kFullPacketPs + 63'800 + 1 * kUs + 100 * kUs;
  EXPECT_NEAR(static_cast<double>(done[0].second), static_cast<double>(expected), 2.0);  // ps of rounding
}

// PFC spreads hop by hop: NIC -> switch A -> switch B -> receiver with B's egress (link 2) down.
// B's queue fills from link 1 and pauses it; A's queue then fills from link 0 and pauses the NIC.
TEST(PacketNetworkFaults, PausesSpreadUpstreamBehindADownLink) {
  PacketNetwork net({10 * kGBps, 10 * kGBps, 10 * kGBps}, {1 * kUs, 1 * kUs, 1 * kUs}, 0, no_congestion_control());
  net.set_capacity(2, 0, 0);
  start_flow(net, 0, {0, 1, 2}, 2'000'000);
  EXPECT_EQ(net.next_completion(), kNever);
  std::vector<FlowId> finished;
  net.advance(500 * kUs, finished);
  auto packets = net.packet_link_statistics();
  EXPECT_EQ(packets[1].pause_events, 1);
  EXPECT_EQ(packets[0].pause_events, 1);
  EXPECT_GT(packets[0].paused_time, 0);
  // What is held: XOFF and the in-flight slack at each of the two queues, not the whole 2 MB.
  EXPECT_LT(packets[2].max_queue_bytes, 256 * 1024 + 10 * 4158);
  EXPECT_LT(packets[1].max_queue_bytes, 256 * 1024 + 10 * 4158);
  net.set_capacity(2, 10 * kGBps, 500 * kUs);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  packets = net.packet_link_statistics();
  EXPECT_EQ(packets[2].packets_sent, 489);
  EXPECT_GT(packets[0].paused_time, 100 * kUs);
}

// Lossy mode with the second link down: its 20 KB queue takes 4 of the flow's 25 full packets
// (4 x 4158 B; a fifth would not fit) and the other 21 are dropped, the last among them, so no
// later packet reveals the hole to the receiver and only the watchdog can recover.
// The sender's watchdog parks while the link is down (resending could not get through), so
// next_completion() reaches kNever (the runner's deadlock report) instead of advancing forever.
// Once the link is back the queue drains, the watchdog goes back to the first dropped packet and
// the flow completes.
TEST(PacketNetworkFaults, LossyFlowBehindADownLinkWaitsAndRecovers) {
  PacketConfig config = no_congestion_control();
  config.pfc.enabled = false;
  config.port_buffer_bytes = 20'000;
  PacketNetwork net({10 * kGBps, 10 * kGBps}, {1 * kUs, 1 * kUs}, 0, config);
  net.set_capacity(1, 0, 0);
  const FlowId f = start_flow(net, 0, {0, 1}, 102'400);  // 25 x 4096
  std::vector<FlowId> finished;
  int steps = 0;
  for (SimTime t = net.next_completion(); t != kNever && steps < 1000; t = net.next_completion(), ++steps) {
    net.advance(t, finished);
  }
  EXPECT_EQ(net.next_completion(), kNever);
  EXPECT_LT(steps, 1000);
  std::vector<FlowId> stalled;
  net.stalled_flows(stalled);
  EXPECT_EQ(stalled, std::vector<FlowId>{f});
  net.advance(2000 * kUs, finished);
  EXPECT_EQ(net.counters().timeouts, 0);  // parked
  EXPECT_EQ(net.counters().drops, 21);
  net.set_capacity(1, 10 * kGBps, 2000 * kUs);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_GT(net.counters().timeouts, 0);
  EXPECT_GT(done[0].second, 2000 * kUs + config.retransmit.timeout);
  EXPECT_EQ(net.counters().drops, 21);
  EXPECT_EQ(net.counters().packets_delivered, 25);
}

// The id of a reported flow is reused, and its old events do not touch the new flow.
TEST(PacketNetworkApi, IdsAreReusedAfterReport) {
  PacketNetwork net({10 * kGBps}, {1 * kUs});
  const FlowId a = start_flow(net, 0, {0}, 10'000);
  run_to_idle(net);
  EXPECT_FALSE(net.is_active(a));
  const FlowId b = start_flow(net, net.now(), {0}, 10'000);
  EXPECT_EQ(a, b);
  EXPECT_TRUE(net.is_active(b));
  EXPECT_EQ(run_to_idle(net).size(), 1u);
  EXPECT_EQ(net.completed_flows().size(), 2u);
}

// A zero-byte flow (the DAG runner allows them) is one header-only packet: 62 B at 10 GB/s
// (6,200 ps) + 1 us.
TEST(PacketNetworkApi, ZeroByteFlowIsOneHeaderPacket) {
  PacketNetwork net({10 * kGBps}, {1 * kUs});
  start_flow(net, 0, {0}, 0);
  const auto done = run_to_idle(net);
  ASSERT_EQ(done.size(), 1u);
  EXPECT_EQ(done[0].second, 6'200 + 1 * kUs);
}

// Random traffic on a small two-tier fabric (4 NICs up/down, 2 spines), flows starting while
// others run and a spine link failing and coming back, in lossless and lossy mode with DCQCN:
// every flow completes with all its bytes delivered, the bound never passes a completion
// (run_to_idle checks), and a second identical run gives the same records.
std::vector<FlowRecord> random_run(bool lossless, std::uint64_t seed) {
  // Links: 0..3 NIC -> leaf, 4..7 leaf -> NIC, 8..9 leaf -> spine s, 10..11 spine s -> leaf.
  std::vector<double> cap(12, 10 * kGBps);
  cap[8] = cap[9] = cap[10] = cap[11] = 5 * kGBps;  // oversubscribed core
  PacketConfig config;
  config.pfc.enabled = lossless;
  config.port_buffer_bytes = 200'000;
  config.seed = seed;
  PacketNetwork net(cap, std::vector<SimTime>(12, 1 * kUs), 0, config);
  testing::Lcg next(seed);
  std::vector<FlowId> finished;
  std::int64_t packets = 0;
  SimTime t = 0;
  for (int i = 0; i < 24; ++i) {
    t += next() % (20 * kUs);
    if (i == 8) net.set_capacity(8, 0, t);
    if (i == 16) net.set_capacity(8, 5 * kGBps, t);
    net.advance(t, finished);
    const int src = static_cast<int>(next() % 4);
    const int dst = (src + 1 + static_cast<int>(next() % 3)) % 4;
    const int spine = static_cast<int>(next() % 2);
    const std::int64_t bytes = 1 + next() % 600'000;
    packets += (bytes + 4095) / 4096;
    start_flow(net, t, {src, 8 + spine, 10 + spine, 4 + dst}, bytes);
  }
  run_to_idle(net);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.completed_flows().size(), 24u);
  EXPECT_EQ(net.counters().packets_delivered, packets);
  // Congestion was real in every seed: the 5 GB/s core pauses (lossless) or drops (lossy).
  if (lossless) {
    EXPECT_EQ(net.counters().drops, 0);
    EXPECT_GT(net.counters().pause_events, 0);
  } else {
    EXPECT_GT(net.counters().drops, 0);
    EXPECT_GT(net.counters().retransmitted_packets, 0);
  }
  return net.completed_flows();
}

bool same_records(const std::vector<FlowRecord>& a, const std::vector<FlowRecord>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].id != b[i].id || a[i].serial != b[i].serial || a[i].finish != b[i].finish || a[i].cnps != b[i].cnps ||
        a[i].retransmitted_packets != b[i].retransmitted_packets || a[i].min_rate_Bps != b[i].min_rate_Bps)
      return false;
  }
  return true;
}

TEST(PacketNetworkRandom, LosslessTrafficCompletesDeterministically) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto first = random_run(true, seed);
    EXPECT_TRUE(same_records(first, random_run(true, seed))) << "seed " << seed;
  }
}

TEST(PacketNetworkRandom, LossyTrafficCompletesDeterministically) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto first = random_run(false, seed);
    EXPECT_TRUE(same_records(first, random_run(false, seed))) << "seed " << seed;
  }
}

// DCQCN's reaction point by hand, line rate 10 GB/s, g = 1/256, F = 5, R_AI = 5 MB/s.
TEST(Dcqcn, CutsThenRecoversByTheSteps) {
  DcqcnConfig c;
  DcqcnState s;
  s.reset(10 * kGBps, 1.0, 0);
  // First CNP at 0: Rt = 10, Rc = 10 (1 - 1/2) = 5 GB/s; alpha = (255/256) 1 + 1/256 = 1.
  dcqcn_on_cnp(s, c, 0);
  EXPECT_DOUBLE_EQ(s.rc, 5 * kGBps);
  EXPECT_DOUBLE_EQ(s.rt, 10 * kGBps);
  EXPECT_DOUBLE_EQ(s.alpha, 1.0);
  // 110 us later without a CNP: two alpha periods of 55 us, alpha = (255/256)^2.
  EXPECT_DOUBLE_EQ(dcqcn_alpha(s, c, 110 * kUs), (255.0 / 256) * (255.0 / 256));
  // Fast recovery: timer steps 1..4 halve the gap to Rt: 7.5, 8.75, 9.375, 9.6875 GB/s.
  const double expected[] = {7.5, 8.75, 9.375, 9.6875};
  for (double e : expected) {
    EXPECT_TRUE(dcqcn_on_timer(s, c));
    EXPECT_DOUBLE_EQ(s.rc, e * kGBps);
  }
  // Step 5 (timer count 5 = F, byte count 0): additive, Rt = min(10 + 0.005, line) = 10.
  EXPECT_TRUE(dcqcn_on_timer(s, c));
  EXPECT_DOUBLE_EQ(s.rt, 10 * kGBps);
  EXPECT_DOUBLE_EQ(s.rc, (10 + 9.6875) / 2 * kGBps);
  // Enough steps bring it back to the line rate, where the timer stops.
  int steps = 0;
  while (dcqcn_on_timer(s, c)) ++steps;
  EXPECT_LT(steps, 40);
  EXPECT_EQ(s.rc, 10 * kGBps);
  EXPECT_FALSE(s.recovering);
}

TEST(Dcqcn, SecondCutUsesTheDecayedAlphaAndByteCounterSteps) {
  DcqcnConfig c;
  DcqcnState s;
  s.reset(10 * kGBps, 1.0, 0);
  dcqcn_on_cnp(s, c, 0);
  // 550 us later: alpha = (255/256)^10 = 0.96167; Rc = 5 (1 - 0.96167/2) = 2.5958 GB/s.
  dcqcn_on_cnp(s, c, 550 * kUs);
  const double a = std::pow(255.0 / 256, 10);
  EXPECT_DOUBLE_EQ(s.rc, 5 * kGBps * (1 - a / 2));
  EXPECT_DOUBLE_EQ(s.alpha, (255.0 / 256) * a + 1.0 / 256);
  // 25 MB sent: two byte-counter steps of 10 MB (fast recovery), 5 MB carried over.
  const double rc = s.rc;
  dcqcn_on_sent(s, c, 25'000'000);
  EXPECT_EQ(s.byte_steps, 2);
  EXPECT_EQ(s.bytes_since_step, 5'000'000);
  EXPECT_DOUBLE_EQ(s.rc, ((5 * kGBps + rc) / 2 + 5 * kGBps) / 2);
  // The cut never goes below the floor (100 Mb/s).
  for (int i = 0; i < 100; ++i) dcqcn_on_cnp(s, c, 600 * kUs);
  EXPECT_DOUBLE_EQ(s.rc, c.min_rate_Bps);
}

// RED marking: 0 up to Kmin, Pmax (q - Kmin) / (Kmax - Kmin) between, 1 above Kmax; the draw is
// a pure function of its inputs and, over many packets, marks the expected fraction.
TEST(EcnMarking, ProbabilityAndDeterministicDraws) {
  const EcnConfig c;  // 100 KB, 400 KB, 0.2
  EXPECT_EQ(ecn_mark_probability(c, 100'000), 0);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(c, 250'000), 0.1);
  EXPECT_DOUBLE_EQ(ecn_mark_probability(c, 400'000), 0.2);
  EXPECT_EQ(ecn_mark_probability(c, 400'001), 1);
  EXPECT_EQ(ecn_uniform(1, 2, 3, 4), ecn_uniform(1, 2, 3, 4));
  EXPECT_NE(ecn_uniform(1, 2, 3, 4), ecn_uniform(2, 2, 3, 4));
  int marked = 0;
  for (std::uint64_t seq = 0; seq < 100'000; ++seq) marked += ecn_should_mark(c, 250'000, 7, 1, seq, 1) ? 1 : 0;
  EXPECT_NEAR(marked, 10'000, 400);  // 0.1 of 100,000; binomial sd ~95
}

// Bad calls are rejected like FlowNetwork's (InternalError: only trainsim's code calls it) and
// leave the network unchanged; bad configuration is the user's input, a trainsim::Error.
TEST(PacketNetworkErrors, BadFlowsAreRejectedWithoutSideEffects) {
  PacketNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {0}, -1); }), HasSubstr("flow bytes -1 is negative"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {}, 1000); }), HasSubstr("empty path"));
  EXPECT_THAT(error_of<InternalError>([&] {
                start_flow(net, 0, {0, 2}, 1000);
              }),
              HasSubstr("start: unknown link id 2 (the network has links 0..1)"));
  EXPECT_THAT(error_of<InternalError>([&] {
                start_flow(net, 0, {1, 0, 1}, 1000);
              }),
              HasSubstr("path crosses link 1 twice"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 0, {0}, 1000, 0); }), HasSubstr("rate cap 0 B/s"));
  EXPECT_THAT(error_of<InternalError>([&] { net.set_capacity(3, 1, 0); }),
              HasSubstr("set_capacity: unknown link id 3"));
  EXPECT_THAT(error_of<InternalError>([&] { net.rate(0); }), HasSubstr("rate: flow 0 is not active"));
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.next_completion(), kNever);
  std::vector<FlowId> finished;
  net.advance(1000, finished);
  EXPECT_THAT(error_of<InternalError>([&] { net.advance(999, finished); }), HasSubstr("advance to 999 ps is before"));
  EXPECT_THAT(error_of<InternalError>([&] { start_flow(net, 5, {0}, 1000); }), HasSubstr("start at 5 ps is before"));
  EXPECT_THAT(error_of<InternalError>([] {
                PacketNetwork({1, 2}, {0});
              }),
              HasSubstr("2 link capacities but 1 link latencies"));
  // The network still works after the rejections.
  const FlowId f = start_flow(net, 1000, {0, 1}, 1000);
  EXPECT_EQ(net.rate(f), 10 * kGBps);
}

TEST(PacketNetworkErrors, BadConfigurationNamesTheField) {
  PacketConfig c;
  c.mtu_payload_bytes = 0;
  EXPECT_THAT(error_of([&] { PacketNetwork({1}, {0}, 0, c); }), HasSubstr("mtu_payload_bytes"));
  c = PacketConfig{};
  c.ecn.kmax_bytes = c.ecn.kmin_bytes;
  EXPECT_THAT(error_of([&] { PacketNetwork({1}, {0}, 0, c); }), HasSubstr("kmin < kmax"));
  c = PacketConfig{};
  c.pfc.xon_bytes = c.pfc.xoff_bytes + 1;
  EXPECT_THAT(error_of([&] { PacketNetwork({1}, {0}, 0, c); }), HasSubstr("xon < xoff"));
  c = PacketConfig{};
  c.dcqcn.g = 0;
  EXPECT_THAT(error_of([&] { PacketNetwork({1}, {0}, 0, c); }), HasSubstr("dcqcn.g"));
}

// TIMELY's sender by hand (Mittal et al., Algorithm 1): line rate 10 GB/s, delta 1 MB/s, beta 0.8, alpha 0.875,
// T_low 50 us, T_high 500 us, min RTT 20 us.
TEST(Timely, EachRegimeOfTheAlgorithm) {
  TimelyConfig c;
  c.additive_increase_Bps = 1e6;
  TimelyState s;
  s.reset(10 * kGBps);
  s.rate = 5 * kGBps;
  // Below T_low: additive increase, whatever the gradient.
  EXPECT_FALSE(timely_on_rtt(s, c, 30 * kUs));
  EXPECT_DOUBLE_EQ(s.rate, 5 * kGBps + 1e6);
  // Between the thresholds and rising by 20 us: rtt_diff = 0.875 x 20 us, gradient 0.875; rate x (1 - 0.8 x 0.875).
  const double before = s.rate;
  EXPECT_TRUE(timely_on_rtt(s, c, 50 * kUs));
  EXPECT_DOUBLE_EQ(s.rtt_diff, 0.875 * 20 * kUs);
  EXPECT_NEAR(s.rate, before * (1 - 0.8 * 0.875), 1e-3);
  // Falling: the gradient turns negative; the fifth such completion in a row steps by 5 delta (HAI).
  s.rate = 5 * kGBps;
  s.rtt_diff = 0;
  SimTime rtt = 400 * kUs;
  s.prev_rtt = rtt;
  for (int i = 1; i <= 5; ++i) {
    rtt -= 10 * kUs;
    const double r = s.rate;
    EXPECT_FALSE(timely_on_rtt(s, c, rtt));
    EXPECT_DOUBLE_EQ(s.rate, r + (i >= 5 ? 5 : 1) * 1e6) << "completion " << i;
  }
  // Above T_high: rate x (1 - beta (1 - T_high / rtt)) = x (1 - 0.8 x 0.5) at 1 ms.
  s.rate = 5 * kGBps;
  EXPECT_TRUE(timely_on_rtt(s, c, 1000 * kUs));
  EXPECT_NEAR(s.rate, 5 * kGBps * 0.6, 1e-3);
  // Never above the line rate, never below the floor.
  for (int i = 0; i < 100; ++i) timely_on_rtt(s, c, 100 * kUs + i * 100 * kUs);
  EXPECT_GE(s.rate, c.min_rate_Bps);
  s.rate = 10 * kGBps;
  timely_on_rtt(s, c, 1 * kUs);
  EXPECT_DOUBLE_EQ(s.rate, 10 * kGBps);
}

// An 8-to-1 incast on one 10 GB/s port: TIMELY's senders see the queue in their RTTs and slow down, so PFC pauses
// far less than without congestion control (16 pauses against 1,313 when written). With the paper's parameters
// the senders overshoot downwards and climb back by 0.1% of the line rate per segment, so the port idles part of
// the time: 1.8x its serialization time then, pinned loosely (as DCQCN's slow recovery is above); PFC alone keeps
// it busy. The same run twice gives the same records.
TEST(Timely, IncastQueuesShrinkAndThePortStaysBusy) {
  const auto incast = [](CongestionControl cc) {
    PacketConfig config;
    config.congestion_control = cc;
    config.ecn.enabled = false;
    config.timely.additive_increase_Bps = 10e6;
    std::vector<double> cap(9, 10 * kGBps);
    PacketNetwork net(cap, std::vector<SimTime>(9, 1 * kUs), 0, config);
    for (LinkId s = 0; s < 8; ++s) start_flow(net, 0, {s, 8}, 8'000'000);
    const auto done = run_to_idle(net);
    EXPECT_EQ(done.size(), 8u);
    SimTime last = 0;
    for (const auto& [f, t] : done) last = std::max(last, t);
    std::int64_t pauses = 0;
    for (const auto& l : net.packet_link_statistics()) pauses += l.pause_events;
    return std::tuple{last, pauses, net.counters().rate_cuts, net.completed_flows()};
  };
  const auto [none_end, none_pauses, none_cuts, none_records] = incast(CongestionControl::None);
  const auto [end, pauses, cuts, records] = incast(CongestionControl::Timely);
  EXPECT_EQ(none_cuts, 0);
  EXPECT_GT(cuts, 0);
  EXPECT_LT(pauses, none_pauses / 2) << "TIMELY " << pauses << " pauses, none " << none_pauses;
  const double serialization = 64e6 * 4158.0 / 4096 / (10 * kGBps) * 1e12;
  EXPECT_LE(static_cast<double>(end), 2.5 * serialization);
  EXPECT_LE(static_cast<double>(none_end), 1.02 * serialization);
  EXPECT_GE(static_cast<double>(end), serialization);
  for (const FlowRecord& r : records) EXPECT_LT(r.min_rate_Bps, 10 * kGBps);
  const std::vector<FlowRecord> again = std::get<3>(incast(CongestionControl::Timely));
  ASSERT_EQ(again.size(), records.size());
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(again[i].finish, records[i].finish);
    EXPECT_EQ(again[i].min_rate_Bps, records[i].min_rate_Bps);
  }
}

}  // namespace
}  // namespace trainsim
