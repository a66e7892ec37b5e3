// PacketNetwork's host links (set_host_link: NVLink, PCIe): FIFOs whose departures are worked out when a packet
// reaches them, one event per packet and hop. They must time packets exactly as the fabric's ports do when nothing
// pauses, keep the order packets reach them in, hold packets while down, and pause the fabric link into a NIC whose
// host side backs up. Crossed as a delay (HostLinkModel::Delay), a run of them takes one event per packet and no
// queue.
//
// Numbers: MTU payload 4096 B + 62 B of headers = 4158 B per full packet; at 10 GB/s it serializes in 415,800 ps.
#include <gtest/gtest.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "network/packet/packet_network.hpp"
#include "network_test_support.hpp"

namespace trainsim {
namespace {

using testing::kGBps;
using testing::kUs;

constexpr SimTime kPacketPs = 415'800;  // 4158 B at 10 GB/s

PacketConfig no_cc() {
  PacketConfig c;
  c.congestion_control = CongestionControl::None;
  c.ecn.enabled = false;
  return c;
}

// Runs to idle; the finish time of each of the first `flows` flow ids.
std::vector<SimTime> finish_at(PacketNetwork& net, std::size_t flows) {
  std::vector<SimTime> at(flows, -1);
  std::vector<FlowId> finished;
  for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) {
    net.advance(t, finished);
    for (FlowId f : finished)
      if (static_cast<std::size_t>(f) < flows) at[static_cast<std::size_t>(f)] = t;
  }
  return at;
}

// Three links of 1 us, 10, `middle_GBps` and 10 GB/s, twice: as host links, and as fabric links that nothing
// pauses (no PFC, a buffer that never fills), the fabric behaving as a chain of plain FIFOs.
struct Twins {
  PacketNetwork host, fabric;
  explicit Twins(double middle_GBps)
      : host({10 * kGBps, middle_GBps * kGBps, 10 * kGBps}, std::vector<SimTime>(3, kUs), 0, no_cc()),
        fabric({10 * kGBps, middle_GBps * kGBps, 10 * kGBps}, std::vector<SimTime>(3, kUs), 0, unpaused()) {
    for (LinkId l = 0; l < 3; ++l) host.set_host_link(l);
  }
  static PacketConfig unpaused() {
    PacketConfig c = no_cc();
    c.pfc.enabled = false;
    c.port_buffer_bytes = std::int64_t{1} << 40;
    return c;
  }
};

// Three hops at 10, 5 and 10 GB/s: 1 MB (244 full packets and one of 576 B) takes the slow hop's pace. As host links
// and as fabric links that nothing pauses, the flow finishes at the same picosecond: the slow hop sends the full
// packets in 244 x 831,600 ps after the first one's 415,800 ps on hop 0; on hop 2 the last full packet takes 415,800
// and the small one, which left hop 1 only 127,600 later, follows it with its 63,800; plus 3 x 1 us.
TEST(PacketHostLinks, AChainOfHostLinksTimesPacketsAsFabricPortsDo) {
  Twins twins(5);
  PacketNetwork& host = twins.host;
  PacketNetwork& fabric = twins.fabric;
  host.start(0, std::vector<LinkId>{0, 1, 2}, 1'000'000);
  fabric.start(0, std::vector<LinkId>{0, 1, 2}, 1'000'000);
  const SimTime on_host = finish_at(host, 1)[0];
  EXPECT_EQ(on_host, finish_at(fabric, 1)[0]);
  EXPECT_EQ(on_host, kPacketPs + 244 * 2 * kPacketPs + kPacketPs + 63'800 + 3 * kUs);
  // The statistics count every packet on every hop, and the slow hop's queue, as the fabric's ports do (a queue
  // within one packet: a host link counts what is left of the packet on the wire too).
  const auto stats = host.packet_link_statistics();
  const auto twin = fabric.packet_link_statistics();
  for (std::size_t l = 0; l < 3; ++l) {
    EXPECT_EQ(stats[l].packets_sent, 245);
    EXPECT_EQ(stats[l].transmit_time, twin[l].transmit_time);
    EXPECT_NEAR(static_cast<double>(stats[l].max_queue_bytes), static_cast<double>(twin[l].max_queue_bytes), 4158.0);
  }
  EXPECT_EQ(stats[2].max_queue_bytes, 4158);  // never waits: its own packet
  EXPECT_EQ(stats[1].transmit_time, 2 * (244 * kPacketPs + 63'800));
  EXPECT_GT(stats[1].max_queue_bytes, 100'000);  // hop 0 delivers twice as fast as hop 1 drains
  EXPECT_EQ(host.link_statistics()[2].bytes_carried, 1e6);
}

// Two flows from two host ingresses (links 0 and 1) merge on host link 2, which drains at half their sum: served in
// the order their packets reach it, each gets half, and both finish within a packet time of each other and of the
// same network on fabric links. Flow 1 starts 50 us later: until then flow 0 has link 2 alone.
TEST(PacketHostLinks, FlowsMergingOnAHostLinkShareItInArrivalOrder) {
  Twins twins(10);
  PacketNetwork& host = twins.host;
  PacketNetwork& fabric = twins.fabric;
  for (PacketNetwork* net : {&host, &fabric}) {
    net->start(0, std::vector<LinkId>{0, 2}, 4'000'000);
    net->start(50 * kUs, std::vector<LinkId>{1, 2}, 4'000'000);
  }
  const auto on_host = finish_at(host, 2);
  const auto on_fabric = finish_at(fabric, 2);
  for (std::size_t f = 0; f < 2; ++f)
    EXPECT_NEAR(static_cast<double>(on_host[f]), static_cast<double>(on_fabric[f]), static_cast<double>(kPacketPs));
  // Link 2 never idles from the first packet's arrival on: each flow is 976 full packets and one of 2,304 B (2,366 B
  // on the wire, 236,600 ps), all sent by the last finish, plus link 2's latency.
  EXPECT_EQ(std::max(on_host[0], on_host[1]), kPacketPs + 1 * kUs + 2 * (976 * kPacketPs + 236'600) + 1 * kUs);
  EXPECT_LT(on_host[0], on_host[1]);
}

// HostLinkModel::Delay: a run of host links is a serialization and latency per link, with no queue. The 1 MB flow of
// the chain above leaves hop 0 at its 10 GB/s and is not held to the 5 GB/s of hop 1; each packet crosses hops 1 and 2
// in a full packet's time each (the last, short one too), one event for the two. The last packet leaves hop 0 after
// 244 full packets and its own 63,800 ps.
TEST(PacketHostLinks, ADelayRunCrossesHostLinksWithoutQueueing) {
  PacketConfig delay = no_cc();
  delay.host_links = HostLinkModel::Delay;
  PacketNetwork net({10 * kGBps, 5 * kGBps, 10 * kGBps}, std::vector<SimTime>(3, kUs), 0, delay);
  for (LinkId l = 0; l < 3; ++l) net.set_host_link(l);
  net.start(0, std::vector<LinkId>{0, 1, 2}, 1'000'000);
  EXPECT_EQ(finish_at(net, 1)[0], 244 * kPacketPs + 63'800 + kUs + 2 * kPacketPs + kUs + kPacketPs + kUs);
  const auto stats = net.packet_link_statistics();
  EXPECT_EQ(stats[1].packets_sent, 245);
  EXPECT_EQ(stats[1].transmit_time, 245 * 2 * kPacketPs);
  EXPECT_EQ(stats[1].max_queue_bytes, 4158);  // nothing ever waits
  EXPECT_EQ(net.counters().retransmitted_packets, 0);
  EXPECT_EQ(net.counters().nacks, 0);  // in order at the receiver, the short last packet included
  // Events: the FIFO model has one per packet and host hop (2 x 245 here) where the run has one per packet.
  Twins fifo(5);
  fifo.host.start(0, std::vector<LinkId>{0, 1, 2}, 1'000'000);
  finish_at(fifo.host, 1);
  EXPECT_EQ(fifo.host.counters().events - net.counters().events, 245);
}

// Two flows merging on host link 2 (10 GB/s, half their sum) queue on it as FIFOs; crossed as a delay they do not
// (no contention inside a host), and each finishes as it would alone.
TEST(PacketHostLinks, FlowsMergingOnADelayRunDoNotQueue) {
  PacketConfig delay = no_cc();
  delay.host_links = HostLinkModel::Delay;
  PacketNetwork net({10 * kGBps, 10 * kGBps, 10 * kGBps}, std::vector<SimTime>(3, kUs), 0, delay);
  for (LinkId l = 0; l < 3; ++l) net.set_host_link(l);
  net.start(0, std::vector<LinkId>{0, 2}, 4'000'000);
  net.start(0, std::vector<LinkId>{1, 2}, 4'000'000);
  const auto at = finish_at(net, 2);
  // 976 full packets and one of 2,366 B on the wire at 10 GB/s, then the last one's full-packet crossing of link 2.
  const SimTime alone = 976 * kPacketPs + 236'600 + kUs + kPacketPs + kUs;
  EXPECT_EQ(at[0], alone);
  EXPECT_EQ(at[1], alone);
  Twins fifo(10);
  fifo.host.start(0, std::vector<LinkId>{0, 2}, 4'000'000);
  fifo.host.start(0, std::vector<LinkId>{1, 2}, 4'000'000);
  const auto queued = finish_at(fifo.host, 2);
  EXPECT_GT(std::max(queued[0], queued[1]), alone + 900 * kPacketPs);  // shared, link 2 takes twice as long
}

// A host link that goes down holds the packets that reach it; when it comes back they go on in order and the flow
// delivers every byte once. As FIFOs, and as a delay run that ends at the down link (hop 2 of 0-1-2).
TEST(PacketHostLinks, ADownHostLinkHoldsPacketsUntilItReturns) {
  for (const HostLinkModel model : {HostLinkModel::Fifo, HostLinkModel::Delay}) {
    SCOPED_TRACE(model == HostLinkModel::Fifo ? "fifo" : "delay");
    PacketConfig config = no_cc();
    config.host_links = model;
    PacketNetwork net({10 * kGBps, 10 * kGBps, 10 * kGBps}, {1 * kUs, 1 * kUs, 1 * kUs}, 0, config);
    for (LinkId l = 0; l < 3; ++l) net.set_host_link(l);
    const FlowId f = net.start(0, std::vector<LinkId>{0, 1, 2}, 1'000'000);
    std::vector<FlowId> finished;
    net.advance(20 * kUs, finished);
    net.set_capacity(2, 0, 20 * kUs);
    net.advance(500 * kUs, finished);
    EXPECT_TRUE(finished.empty());
    EXPECT_TRUE(net.is_active(f));
    EXPECT_GT(net.packet_link_statistics()[2].max_queue_bytes, 100'000);  // hop 1 kept sending into the down link
    net.set_capacity(2, 10 * kGBps, 500 * kUs);
    const auto at = finish_at(net, 1);
    EXPECT_GT(at[0], 500 * kUs);
    // What was left after 20 us goes at the line rate once the link is back: well before the 103 us it took alone.
    EXPECT_LT(at[0], 500 * kUs + 103 * kUs);
    EXPECT_EQ(net.counters().packets_delivered, 245);
    EXPECT_EQ(net.counters().retransmitted_packets, 0);
    EXPECT_EQ(net.packet_link_statistics()[2].packets_sent, 245);
  }
}

// A NIC whose host side is slower than its port: fabric link 0 (20 GB/s) delivers into host link 1 (10 GB/s). With
// PFC the host link's backlog pauses link 0 (XOFF 256 KB), nothing is lost, the backlog stays near XOFF (plus what
// was on link 0's wire), and the flow finishes at the host link's pace.
TEST(PacketHostLinks, ABackedUpHostSidePausesTheFabricLinkIntoIt) {
  PacketNetwork net({20 * kGBps, 10 * kGBps}, {1 * kUs, 1 * kUs}, 0, no_cc());
  net.set_host_link(1);
  net.record_port_history(4158, 0);
  net.start(0, std::vector<LinkId>{0, 1}, 8'000'000);
  const SimTime at = finish_at(net, 1)[0];
  const auto stats = net.packet_link_statistics();
  EXPECT_GT(stats[0].pause_events, 0);
  EXPECT_GT(stats[0].paused_time, 0);
  EXPECT_EQ(net.counters().drops, 0);
  EXPECT_LT(stats[1].max_queue_bytes, 256 * 1024 + 2 * 20'000 + 2 * 4158);  // XOFF + link 0's bandwidth-delay
  // 8 MB at 10 GB/s is 800 us (plus headers); pausing never starves the host link.
  EXPECT_GT(at, 800 * kUs);
  EXPECT_LT(at, 830 * kUs);
  const auto& pauses = net.pause_intervals(0);
  ASSERT_FALSE(pauses.empty());
  EXPECT_EQ(pauses.front().cause, 1);   // the host link behind the NIC
  EXPECT_NE(pauses.back().to, kNever);  // resumed before the end
}

// Random traffic on two nodes of two GPUs each: NVLink through a switch (20 GB/s), PCIe to each GPU's NIC (16 GB/s
// out, 6 GB/s in: slower than the 10 GB/s fabric, so NICs back up and pause it), one leaf. Flows inside a node, across
// nodes, and across after an NVLink hop (as a ring channel goes); one GPU's PCIe link fails for a while. Every flow
// completes with every packet delivered once, every host link sent exactly the packets routed over it, nothing is
// dropped, the receivers' host sides paused the fabric, and a second run gives the same records.
std::vector<FlowRecord> random_host_run(std::uint64_t seed) {
  // 0..3 GPU g -> NVSwitch, 4..7 NVSwitch -> GPU g, 8..11 GPU -> NIC, 12..15 NIC -> GPU, 16..19 NIC -> leaf,
  // 20..23 leaf -> NIC; node of GPU g: g / 2.
  std::vector<double> cap(24, 10 * kGBps);
  for (int l = 0; l < 8; ++l) cap[static_cast<std::size_t>(l)] = 20 * kGBps;
  for (int l = 8; l < 12; ++l) cap[static_cast<std::size_t>(l)] = 16 * kGBps;
  for (int l = 12; l < 16; ++l) cap[static_cast<std::size_t>(l)] = 6 * kGBps;
  PacketConfig config;
  config.seed = seed;
  PacketNetwork net(cap, std::vector<SimTime>(24, kUs / 2), 0, config);
  for (LinkId l = 0; l < 16; ++l) net.set_host_link(l);
  for (LinkId l = 16; l < 20; ++l) net.set_nic_port(l);
  testing::Lcg next(seed);
  std::vector<std::int64_t> routed(24, 0);
  std::int64_t packets = 0;
  std::vector<FlowId> finished;
  SimTime t = 0;
  for (int i = 0; i < 40; ++i) {
    t += next() % (10 * kUs);
    if (i == 10) net.set_capacity(9, 0, t);
    if (i == 25) net.set_capacity(9, 16 * kGBps, t);
    net.advance(t, finished);
    const int g = static_cast<int>(next() % 4), mate = g ^ 1, far = static_cast<int>((g / 2 == 0 ? 2 : 0) + next() % 2);
    std::vector<LinkId> path;
    switch (next() % 3) {
      case 0: path = {g, 4 + mate}; break;
      case 1: path = {8 + g, 16 + g, 20 + far, 12 + far}; break;
      default: path = {g, 4 + mate, 8 + mate, 16 + mate, 20 + far, 12 + far}; break;
    }
    const std::int64_t bytes = 1 + next() % 800'000;
    const std::int64_t n = (bytes + 4095) / 4096;
    packets += n;
    for (LinkId l : path) routed[static_cast<std::size_t>(l)] += n;
    net.start(t, path, bytes);
  }
  finish_at(net, 0);
  EXPECT_EQ(net.active_flows(), 0u);
  EXPECT_EQ(net.completed_flows().size(), 40u);
  EXPECT_EQ(net.counters().packets_delivered, packets);
  EXPECT_EQ(net.counters().drops, 0);
  const auto stats = net.packet_link_statistics();
  for (std::size_t l = 0; l < 16; ++l) EXPECT_EQ(stats[l].packets_sent, routed[l]) << "host link " << l;
  std::int64_t fabric_pauses = 0;
  for (std::size_t l = 20; l < 24; ++l) fabric_pauses += stats[l].pause_events;
  EXPECT_GT(fabric_pauses, 0);
  return net.completed_flows();
}

TEST(PacketHostLinks, RandomTrafficThroughHostsCompletesDeterministically) {
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const auto first = random_host_run(seed);
    const auto second = random_host_run(seed);
    ASSERT_EQ(first.size(), second.size());
    for (std::size_t i = 0; i < first.size(); ++i) {
      EXPECT_EQ(first[i].serial, second[i].serial) << "seed " << seed;
      EXPECT_EQ(first[i].finish, second[i].finish) << "seed " << seed;
    }
  }
}

}  // namespace
}  // namespace trainsim
