#pragma once
// The packet-level network (docs/packet-network.md): RoCE over the flow network's links, packet by
// packet. It is a TransferNetwork (network/transfer_network.hpp) with FlowNetwork's API
// (network/flow/flow_network.hpp), so FlowBackend drives either (the flow-DAG runner of tests and benchmarks is
// typed on FlowNetwork); what differs is how a flow's bytes move:
//
//  - A flow is cut into MTU packets (payload + header bytes on the wire). Its source NIC (the
//    transmitter of the path's first link) sends them through a per-flow (per-QP) rate limiter,
//    round robin with the other flows that start there and with packets forwarded through it.
//  - Every link has an output port at its transmitting end: a FIFO; a packet serializes at the
//    link capacity, then propagates for the link latency (store and forward, per packet).
//  - ECN: RED marking when a packet joins a switch FIFO (ecn_marking.hpp).
//  - PFC (lossless, default): bytes queued at a node that came over one upstream link above XOFF
//    pause that link's transmitter (after the link latency), at XON it resumes; pauses spread hop
//    by hop. Lossy mode instead drops at a full FIFO and recovers by go-back-N (NACK, watchdog).
//  - With switch buffers (PacketConfig::switch_buffer, set_switch_ends), a switch's ports share one buffer with
//    dynamic thresholds (switch_buffer.hpp) in place of the fixed XOFF/XON and FIFO limits: an ingress pauses at
//    alpha x the free buffer, keeps headroom for what is on its wire, and drops only past that headroom.
//  - Congestion control, one of (PacketConfig::congestion_control):
//    DCQCN (dcqcn.hpp): receivers send a CNP per ECN-marked packet (at most one per interval),
//    which reaches the sender after the path's latency (not queued); the sender cuts its rate.
//    TIMELY (timely.hpp): receivers acknowledge each completed segment (16 KB), the acknowledgement reaches the
//    sender after the path's latency; the RTT of the segment's last packet (less its serialization) sets the rate.
//  - A flow finishes when its last packet is delivered in order at the destination.
//
// The event loop is a queue of 24-byte POD events (event_queue.hpp). Per packet and Ethernet hop there are
// two: the port's departure (TxDone: the next packet starts then, no event per queued packet) and
// the arrival at the far end (kFarEnd: packets reach a link's far end in the order they left, so each link keeps
// those on its wire in a ring and only the first is in the heap). A flow whose rate limiter allows its next packet
// before its port is free needs no event of its own.
//
// Host links (NVLink, PCIe: set_host_link) never pause, mark or drop: each is a FIFO whose departures are worked
// out when a packet reaches it (it starts at the later of its arrival and the link's free_at), so a packet costs one
// event per host hop (kFarEnd, its arrival at the far end) instead of two. A coupled ring channel's path is mostly
// host links. (Working out a whole run of host links at once would save more, but it reserves the later links before
// packets that reach them sooner; on a loaded NVLink mesh the idle gaps that left cut a ring's throughput tenfold.)
// A link where flows start (source_port_) keeps its port's turns between its QPs and forwarded packets. A NIC whose
// host side backs up still pauses the fabric: its ingress pauses while the host link's backlog is above XOFF and
// resumes at XON (kHostXon).
//
// next_completion(): a packet network cannot know when the next flow finishes without simulating
// up to it, and a caller may start flows before then. So it returns a lower bound: the earliest
// time a flow could finish (its unsent bytes at its first link's full capacity, then its last
// packet through every hop without queueing), and never earlier than the next event. advance(t)
// simulates to t and reports what finished, which may be nothing; callers loop (as
// run_flow_dag does). kNever means no flow can finish without a capacity change.
#include <cstdint>
#include <deque>
#include <span>
#include <utility>
#include <vector>

#include "core/time.hpp"
#include "network/link_usage.hpp"
#include "network/network_types.hpp"
#include "network/transfer_network.hpp"
#include "network/packet/dcqcn.hpp"
#include "network/packet/event_queue.hpp"
#include "network/packet/packet_config.hpp"
#include "network/packet/packet_stats.hpp"
#include "network/packet/ring_queue.hpp"
#include "network/packet/switch_buffer.hpp"
#include "network/packet/timely.hpp"

namespace trainsim {

class PacketNetwork final : public TransferNetwork {
 public:
  // One entry per link in both vectors (bytes/s >= 0, latency >= 0); statistics start at `start`.
  // `config` is validated (trainsim::Error names a bad field).
  PacketNetwork(std::vector<double> capacity_Bps, std::vector<SimTime> latency, SimTime start = 0,
                PacketConfig config = {});

  std::size_t num_links() const { return capacity_.size(); }
  SimTime now() const { return now_; }
  double capacity(LinkId link) const;
  SimTime latency(LinkId link) const;
  SimTime path_latency(std::span<const LinkId> path) const;
  // Packets cross each link's latency inside the network: the caller adds nothing.
  SimTime delay_before_start(std::span<const LinkId>) const override { return 0; }
  const PacketConfig& config() const { return config_; }

  // As FlowNetwork::start: `bytes` (>= 0; 0 sends one header-only packet) over `path` (no link
  // twice, at most 65,535 links) from `now`, at most at `rate_cap_Bps` (also DCQCN's line rate).
  FlowId start(SimTime now, std::span<const LinkId> path, std::int64_t bytes,
               double rate_cap_Bps = kUnlimitedRate) override;
  // The same flow over several routes between the same two ends (each as `path` above; at most 255, route 0 counts
  // as the flow's path for its NIC, latency and statistics): its packets take them as PacketConfig::multipath says,
  // and the receiver places them in whatever order they arrive. Lossless (PFC) only: a lossy receiver's go-back-N
  // would take reordering for loss.
  FlowId start(SimTime now, const std::vector<std::vector<LinkId>>& routes, std::int64_t bytes,
               double rate_cap_Bps = kUnlimitedRate);
  static constexpr std::size_t kMaxRoutes = 255;
  // From `now` on `link` serializes at `capacity_Bps`; 0 = down: the packet on the wire freezes
  // mid-serialization and resumes where it was when the link comes back; queues wait.
  void set_capacity(LinkId link, double capacity_Bps, SimTime now) override;

  // A lower bound on the next completion (see above); kNever when none can happen.
  SimTime next_completion() override;
  // Simulates every event up to and including `t`; `finished` is overwritten with the flows that
  // finished since the last advance(), in order of (finish time, id).
  void advance(SimTime t, std::vector<FlowId>& finished) override;

  // `link` is inside a host or a scale-up domain (PCIe, NVLink): lossless whatever the RoCE settings, it never
  // drops or marks ECN, and what it delivers waits in GPU or host memory, so it is never paused. The flows'
  // DCQCN line rate is their NIC port's (set_nic_port), not a faster host link's before it.
  void set_host_link(LinkId link);
  // `link` is a NIC's own port onto the fabric: its queue is the NIC's send queue, fed by the host as the port
  // drains (no drops, no ECN marks: marking is the switches'); PFC pauses it; its capacity is the DCQCN line
  // rate of the flows that leave through it.
  void set_nic_port(LinkId link);
  // `link` leaves switch `from_switch` and enters switch `to_switch` (any ids >= 0, -1: not a switch). With
  // PacketConfig::switch_buffer set, the ports of one switch share its buffer; call before seal_links().
  void set_switch_ends(LinkId link, std::int32_t from_switch, std::int32_t to_switch);
  // Every link is described (set_host_link, set_nic_port, set_switch_ends): builds the switch buffers, throwing
  // NoSharedPoolError for a switch whose ports' headroom fills its buffer. The first start() seals them otherwise.
  void seal_links();

  // Keep each fabric port's history (for the trace's counter tracks, --queues-csv, --pauses-csv): its egress queue,
  // a sample when the queue has moved by `min_step_bytes` since the last one and `min_gap` has passed, and whenever
  // it empties; and every interval PFC held its transmitter. At most kMaxQueueSamples of each per port. Call before
  // the first start(); off by default.
  void record_port_history(std::int64_t min_step_bytes, SimTime min_gap);
  static constexpr std::size_t kMaxQueueSamples = 100'000;
  // The samples of `link`'s port, in time order (empty unless recording, or for host links).
  const std::vector<QueueSample>& queue_samples(LinkId link) const;
  // The intervals PFC paused `link`'s transmitter, in time order; one still paused ends at kNever (empty unless
  // recording).
  const std::vector<PauseInterval>& pause_intervals(LinkId link) const;

  // Keep every change of each flow's sending rate (RateSample): at its start, at each cut or raise of its congestion
  // control, and 0 when it finishes; in time order, at most kMaxRateSamples in all (rate_samples_truncated() says
  // when more were left out). Flows on host links alone (set_host_link) are left out. Call before the first start();
  // off by default.
  void record_rates();
  static constexpr std::size_t kMaxRateSamples = 2'000'000;
  const std::vector<RateSample>& rate_samples() const { return rate_samples_; }
  bool rate_samples_truncated() const { return rate_samples_truncated_; }

  std::size_t active_flows() const { return active_; }
  bool is_active(FlowId flow) const;
  double rate(FlowId flow);                   // current sending rate, bytes/s (0 while stalled)
  double remaining_bytes(FlowId flow) const;  // payload not yet delivered in order
  SimTime start_time(FlowId flow) const;
  void stalled_flows(std::vector<FlowId>& out);  // active flows crossing a link that is down

  // One entry per link, at now(): bytes_carried counts the payload of every packet that finished
  // serializing on the link (retransmissions included); busy_time and peak_flows count flows on
  // the link as FlowNetwork does.
  std::vector<LinkStats> link_statistics() const override;
  std::vector<PacketLinkStats> packet_link_statistics() const;  // paused_time up to now()
  const PacketCounters& counters() const { return counters_; }
  // Each switch's shared buffer and its peak, in order of switch id (empty without switch buffers).
  std::vector<SwitchBufferStats> switch_buffer_statistics() const;
  // Every completed flow, in completion order.
  const std::vector<FlowRecord>& completed_flows() const { return completed_; }

 private:
  enum class QpState : std::uint8_t { kIdle, kReady, kWaiting };

  struct Flow {
    std::vector<LinkId> path;
    std::uint64_t serial = 0;
    std::int64_t bytes = 0;
    std::int32_t packets = 0;       // >= 1
    std::int32_t last_payload = 0;  // payload of the last packet
    SimTime started = 0, reverse_latency = 0;
    double rate_cap = kUnlimitedRate;
    bool active = false, done = false, reported = false, retransmitted = false;
    // Sender (QP).
    QpState qp = QpState::kIdle;
    std::int32_t next_seq = 0;
    SimTime next_allowed = 0;  // rate limiter: earliest start of the next packet
    std::int32_t pacing_gen = 0, timer_gen = 0, watchdog_gen = 0;
    std::int32_t watchdog_mark = 0;  // receiver progress when the watchdog was armed
    bool watchdog_armed = false;     // lossless: armed at the flow's first drop (a full headroom)
    bool watchdog_parked = false;    // a link on the path was down when it fired
    std::int32_t goback_seq = -1;
    SimTime goback_time = 0;
    DcqcnState cc;
    TimelyState timely;
    // TIMELY: when the last packet of each segment still unacknowledged began to leave the sender, in segment order.
    std::deque<std::pair<std::int32_t, SimTime>> segments_sent;
    // The last packet's progress, for the completion bound: -1 = not yet past its first link,
    // else the hop it crossed and when it reaches that link's far end.
    std::int32_t last_hop = -1;
    SimTime last_at = 0;
    // tail[k]: the last packet's time through hops k..end without queueing (its serialization and each link's
    // latency), tail[path length] = 0; kept up to date with the links' capacities. A coupled ring channel's path
    // crosses hundreds of links: summing them at every bound took most of a large ring's run.
    std::vector<SimTime> tail;
    std::int32_t last_copies = 0;  // copies of the last packet in the network
    // Receiver.
    std::int32_t expected = 0;  // next in-order packet
    std::int32_t nacked_for = -1;
    bool cnp_sent = false;
    SimTime last_cnp = 0;
    std::int64_t delivered_bytes = 0;
    double noted_rate = -1;  // the rate last recorded (record_rates)
    // A flow started with several routes: route r is routes[route_begin[r] .. route_begin[r + 1]) (route 0 is also
    // `path`); `extra_links` are the links of routes other than 0, once each; the receiver marks in `received` the
    // packets it has, in whatever order they came. All empty with one route.
    std::vector<LinkId> routes, extra_links;
    std::vector<std::uint32_t> route_begin;
    std::vector<std::uint64_t> received;
    std::uint16_t route_count = 1;
    std::uint8_t next_route = 0;
    std::int32_t in_flight = 0;  // packets in queues or on the wire: the slot is reused only at 0
    FlowRecord record;
  };

  struct Port {
    RingQueue<QueuedPacket> fifo;  // forwarded packets
    std::int64_t fifo_bytes = 0;
    RingQueue<FlowId> ready;  // flows starting here whose rate limiter allows a packet
    bool busy = false, paused = false, serve_local_next = true;
    QueuedPacket in_tx{};
    double tx_remaining = 0;  // bytes of in_tx left at tx_update
    SimTime tx_update = 0, tx_end = 0;
    std::int32_t tx_gen = 0;
    SimTime full_packet_ps = 0;  // serialization of a full packet at the current capacity
    // The packets that left this port and have yet to reach the link's far end, in order (the first has a kFarEnd
    // event). A host link: when its transmitter is next free (packets reserve it as they reach it:
    // cross_host_link); its `fifo` holds only packets that reached it while it was down.
    RingQueue<OnWire> wire;
    SimTime free_at = 0;
    // A fabric link into a NIC: a kHostXon check of the host link behind it is pending (check_host_backlog).
    bool xon_pending = false;
    // PFC, this link as an ingress: bytes queued downstream that came over it.
    std::int64_t ingress_bytes = 0;
    // Recording the port history: the bytes that came over this link queued at each egress of the switch it enters,
    // and which of those egresses held the most when this link's last PAUSE left (PauseInterval::cause).
    std::vector<std::pair<LinkId, std::int64_t>> held_at;
    LinkId pause_cause = -1;
    bool pause_sent = false;
    SimTime paused_since = 0;
    std::int64_t payload_bytes_sent = 0;
    PacketLinkStats stats;
  };

  void check_link(LinkId link, const char* what) const;
  FlowId begin_flow(SimTime now, std::span<const LinkId> path, std::int64_t bytes, double rate_cap_Bps);
  void launch(FlowId id);
  std::span<const LinkId> route_of(const Flow& f, std::uint8_t route) const {
    if (f.route_count <= 1) return f.path;
    return std::span<const LinkId>(f.routes).subspan(f.route_begin[route],
                                                     f.route_begin[route + 1u] - f.route_begin[route]);
  }
  std::uint8_t adaptive_route(const Flow& f, std::uint8_t route, std::uint16_t hop) const;
  void deliver_reordered(FlowId flow, std::int32_t seq);
  const Flow& checked_flow(FlowId flow, const char* what) const;
  std::int32_t payload_of(const Flow& f, std::int32_t seq) const {
    return seq + 1 < f.packets ? config_.mtu_payload_bytes : f.last_payload;
  }
  std::int32_t wire_of(const Flow& f, std::int32_t seq) const { return payload_of(f, seq) + config_.header_bytes; }
  SimTime serialization(const Port& port, LinkId link, std::int32_t wire) const;
  double pacing_rate(const Flow& f) const;

  void run_until(SimTime t);
  void process(const PacketEvent& e);
  void try_transmit(LinkId link);
  QueuedPacket take_from_qp(FlowId flow, LinkId link, SimTime port_free_at);
  void on_tx_done(LinkId link);
  bool virtual_host(LinkId link) const {
    return host_link_[static_cast<std::size_t>(link)] == 1 && !source_port_[static_cast<std::size_t>(link)];
  }
  void cross_host_link(FlowId flow, QueuedPacket pkt, SimTime at);
  void cross_host_links_without_queueing(Flow& f, QueuedPacket pkt, SimTime at);
  void on_far_end(LinkId link);
  void check_host_backlog(LinkId ingress, LinkId host_link);
  std::int64_t host_backlog_bytes(LinkId host_link) const;
  void on_arrive(FlowId flow, std::int32_t seq, std::uint16_t hop, std::uint8_t ecn, std::uint8_t route);
  void deliver(FlowId flow, std::int32_t seq, std::uint8_t ecn);
  bool backpressured(LinkId link) const;
  LinkId nic_link(std::span<const LinkId> path) const;
  void release_ingress(LinkId ingress, std::int32_t wire);
  void note_held(LinkId in, LinkId out, std::int32_t wire);
  SwitchBuffer* egress_buffer(LinkId out);
  std::int32_t buffer_slot(LinkId in, LinkId out) const;
  void send_pause(LinkId ingress, bool on, LinkId cause = -1);
  void on_pause(LinkId link, bool on);
  void on_cnp(FlowId flow);
  void on_ack(FlowId flow, std::int32_t segment);
  void repace(FlowId flow, double before);
  std::int32_t packets_per_segment() const;
  void on_rate_timer(FlowId flow);
  void go_back(FlowId flow, std::int32_t seq);
  void on_watchdog(FlowId flow);
  void wake_qp(FlowId flow);
  void packet_gone(FlowId flow, std::int32_t seq);
  void arm_watchdog(FlowId flow);
  void complete(FlowId flow);
  SimTime completion_bound(const Flow& f) const;
  void compute_tail(Flow& f) const;
  void refresh_port_timing(LinkId link);

  PacketConfig config_;
  std::vector<double> capacity_;
  std::vector<SimTime> latency_;
  std::vector<LinkUsage> usage_;
  std::vector<Port> ports_;
  std::vector<char> source_port_;  // by link: some flow started there (its QPs take turns with forwarded packets)
  std::vector<char> host_link_;    // by link: 1 set_host_link, 2 set_nic_port (both credit-based)
  std::vector<std::vector<QueueSample>> queue_samples_;      // by link, when recording
  std::vector<std::vector<PauseInterval>> pause_intervals_;  // by link, when recording
  // Switch buffers: by link, the switch it leaves / enters (ids as given; -1: none) and, once sealed, the index in
  // buffers_ of the switch whose Ethernet egress it is and its lossless ingress slot in the buffer of the switch it
  // enters (-1: none).
  std::vector<std::int32_t> from_switch_, to_switch_, egress_buffer_, ingress_slot_;
  std::vector<SwitchBuffer> buffers_;
  std::vector<std::int32_t> buffer_switch_;  // by buffer: its switch id
  bool sealed_ = false;
  std::int64_t sample_step_ = 0;
  SimTime sample_gap_ = 0;
  void note_queue(LinkId link);
  void note_rate(FlowId flow);
  bool record_rates_ = false, rate_samples_truncated_ = false;
  std::vector<RateSample> rate_samples_;
  std::vector<Flow> flows_;
  std::vector<FlowId> free_slots_;
  std::vector<std::uint32_t> path_seen_;
  std::uint32_t path_epoch_ = 0;
  std::uint64_t next_serial_ = 0;
  std::size_t active_ = 0;
  PacketEventQueue events_;
  std::vector<std::pair<SimTime, FlowId>> unreported_;  // finished, not yet handed out
  std::vector<FlowRecord> completed_;
  SimTime bound_ = 0;  // cached lower bound on the next completion
  bool bound_valid_ = false;
  std::int64_t skip_bound_ = 0, skip_period_ = 0;  // next_completion: calls left that answer the next event
  PacketCounters counters_;
  SimTime now_;
};

}  // namespace trainsim
