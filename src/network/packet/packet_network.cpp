#include "network/packet/packet_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/check.hpp"
#include "core/error.hpp"
#include "network/link_checks.hpp"
#include "network/packet/ecn_marking.hpp"
#include "network/transmit_time.hpp"

namespace trainsim {

namespace {

SimTime saturating_add(SimTime a, SimTime b) { return (a == kNever || b == kNever || a > kNever - b) ? kNever : a + b; }

}  // namespace

PacketNetwork::PacketNetwork(std::vector<double> capacity_Bps, std::vector<SimTime> latency, SimTime start,
                             PacketConfig config)
    : config_(config),
      capacity_(std::move(capacity_Bps)),
      latency_(std::move(latency)),
      ports_(capacity_.size()),
      source_port_(capacity_.size(), 0),
      host_link_(capacity_.size(), 0),
      from_switch_(capacity_.size(), -1),
      to_switch_(capacity_.size(), -1),
      path_seen_(capacity_.size(), 0),
      now_(start) {
  config_.validate();
  link_checks::check_arrays(capacity_, latency_, "packet network");
  usage_.reserve(capacity_.size());
  for (std::size_t l = 0; l < capacity_.size(); ++l) {
    usage_.emplace_back(capacity_[l], start);
    refresh_port_timing(static_cast<LinkId>(l));
  }
}

// --- Queries -------------------------------------------------------------------------------------

void PacketNetwork::check_link(LinkId link, const char* what) const {
  link_checks::check_id(link, capacity_.size(), "packet network", what);
}

const PacketNetwork::Flow& PacketNetwork::checked_flow(FlowId flow, const char* what) const {
  TRAINSIM_CHECK(is_active(flow), fmt::format("packet network: {}: flow {} is not active", what, flow));
  return flows_[static_cast<std::size_t>(flow)];
}

double PacketNetwork::capacity(LinkId link) const {
  check_link(link, "capacity");
  return capacity_[static_cast<std::size_t>(link)];
}

SimTime PacketNetwork::latency(LinkId link) const {
  check_link(link, "latency");
  return latency_[static_cast<std::size_t>(link)];
}

SimTime PacketNetwork::path_latency(std::span<const LinkId> path) const {
  return link_checks::path_latency(path, latency_, "packet network");
}

bool PacketNetwork::is_active(FlowId flow) const {
  if (flow < 0 || static_cast<std::size_t>(flow) >= flows_.size()) return false;
  const Flow& f = flows_[static_cast<std::size_t>(flow)];
  return f.active && !f.done;
}

double PacketNetwork::pacing_rate(const Flow& f) const {
  // line_rate 0: the first link was down at the start and there is no cap; DCQCN learns its line
  // rate at the first CNP, until then the port alone limits the flow.
  switch (config_.congestion_control) {
    case CongestionControl::None: break;
    case CongestionControl::Dcqcn:
      if (f.cc.line_rate > 0) return std::min(f.cc.rc, f.rate_cap);
      break;
    case CongestionControl::Timely:
      if (f.timely.line_rate > 0) return std::min(f.timely.rate, f.rate_cap);
      break;
  }
  return f.rate_cap;
}

double PacketNetwork::rate(FlowId flow) {
  const Flow& f = checked_flow(flow, "rate");
  for (LinkId l : f.path) {
    if (capacity_[static_cast<std::size_t>(l)] <= 0) return 0;
  }
  return std::min(pacing_rate(f), capacity_[static_cast<std::size_t>(f.path.front())]);
}

double PacketNetwork::remaining_bytes(FlowId flow) const {
  const Flow& f = checked_flow(flow, "remaining_bytes");
  return static_cast<double>(f.bytes - f.delivered_bytes);
}

SimTime PacketNetwork::start_time(FlowId flow) const { return checked_flow(flow, "start_time").started; }

void PacketNetwork::stalled_flows(std::vector<FlowId>& out) {
  out.clear();
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    if (!is_active(static_cast<FlowId>(i))) continue;
    for (LinkId l : flows_[i].path) {
      if (capacity_[static_cast<std::size_t>(l)] <= 0) {
        out.push_back(static_cast<FlowId>(i));
        break;
      }
    }
  }
}

std::vector<LinkStats> PacketNetwork::link_statistics() const {
  std::vector<LinkStats> stats;
  stats.reserve(capacity_.size());
  for (std::size_t l = 0; l < capacity_.size(); ++l) {
    stats.push_back(usage_[l].at(now_, static_cast<double>(ports_[l].payload_bytes_sent)));
  }
  return stats;
}

std::vector<PacketLinkStats> PacketNetwork::packet_link_statistics() const {
  std::vector<PacketLinkStats> stats;
  stats.reserve(ports_.size());
  for (const Port& p : ports_) {
    stats.push_back(p.stats);
    if (p.paused) stats.back().paused_time += now_ - p.paused_since;
  }
  return stats;
}

// --- Changes from the caller ---------------------------------------------------------------------

void PacketNetwork::set_host_link(LinkId link) {
  TRAINSIM_CHECK(link >= 0 && static_cast<std::size_t>(link) < host_link_.size(),
                 fmt::format("packet network: set_host_link on unknown link {}", link));
  host_link_[static_cast<std::size_t>(link)] = 1;
}

void PacketNetwork::record_port_history(std::int64_t min_step_bytes, SimTime min_gap) {
  TRAINSIM_CHECK(min_step_bytes > 0 && min_gap >= 0, "packet network: record_port_history needs a positive step");
  queue_samples_.assign(capacity_.size(), {});
  pause_intervals_.assign(capacity_.size(), {});
  sample_step_ = min_step_bytes;
  sample_gap_ = min_gap;
}

void PacketNetwork::record_rates() { record_rates_ = true; }

// The flow's sending rate changed (or it started or finished): one more sample, unless the rate is the one last noted.
// A flow that stays on host and scale-up links (NVLink, PCIe) has no NIC port and no congestion control: not listed.
void PacketNetwork::note_rate(FlowId id) {
  if (!record_rates_) return;
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const LinkId nic = nic_link(f.path);
  if (host_link_[static_cast<std::size_t>(nic)] == 1) return;
  const double rate = f.done ? 0.0 : std::min(pacing_rate(f), capacity_[static_cast<std::size_t>(nic)]);
  if (rate == f.noted_rate) return;
  f.noted_rate = rate;
  if (rate_samples_.size() >= kMaxRateSamples) {
    rate_samples_truncated_ = true;
    return;
  }
  rate_samples_.push_back({f.serial, nic, now_, rate});
}

const std::vector<QueueSample>& PacketNetwork::queue_samples(LinkId link) const {
  static const std::vector<QueueSample> none;
  if (queue_samples_.empty()) return none;
  check_link(link, "queue_samples");
  return queue_samples_[static_cast<std::size_t>(link)];
}

const std::vector<PauseInterval>& PacketNetwork::pause_intervals(LinkId link) const {
  static const std::vector<PauseInterval> none;
  if (pause_intervals_.empty()) return none;
  check_link(link, "pause_intervals");
  return pause_intervals_[static_cast<std::size_t>(link)];
}

void PacketNetwork::note_queue(LinkId link) {
  if (queue_samples_.empty() || host_link_[static_cast<std::size_t>(link)] == 1) return;
  auto& v = queue_samples_[static_cast<std::size_t>(link)];
  const std::int64_t bytes = ports_[static_cast<std::size_t>(link)].fifo_bytes;
  if (v.empty()) {
    if (bytes > 0) v.push_back({now_, bytes});
    return;
  }
  const QueueSample& last = v.back();
  const bool emptied = bytes == 0 && last.bytes != 0;
  if (!emptied && (std::abs(bytes - last.bytes) < sample_step_ || now_ - last.at < sample_gap_)) return;
  if (last.at == now_) {
    v.back().bytes = bytes;
  } else if (v.size() < kMaxQueueSamples) {
    v.push_back({now_, bytes});
  }
}

void PacketNetwork::set_nic_port(LinkId link) {
  TRAINSIM_CHECK(link >= 0 && static_cast<std::size_t>(link) < host_link_.size(),
                 fmt::format("packet network: set_nic_port on unknown link {}", link));
  host_link_[static_cast<std::size_t>(link)] = 2;
}

// Packets that came over `link` count against its transmitter's pause threshold: with PFC, on the fabric's links
// (a NIC's port included: PFC pauses NICs). A host link never is: what it delivers waits in GPU or host memory,
// which a collective's buffers size, so it cannot hold its sender back. (Holding it back would chain the send and
// receive sides of a node through the NVSwitch's shared queues into a cyclic buffer dependency, a deadlock
// that real scale-up fabrics avoid with separate virtual channels.)
void PacketNetwork::set_switch_ends(LinkId link, std::int32_t from_switch, std::int32_t to_switch) {
  check_link(link, "set_switch_ends");
  TRAINSIM_CHECK(
      from_switch >= -1 && to_switch >= -1,
      fmt::format("packet network: set_switch_ends: link {} switch ids {} {}", link, from_switch, to_switch));
  TRAINSIM_CHECK(!sealed_, "packet network: set_switch_ends after seal_links() or the first start()");
  from_switch_[static_cast<std::size_t>(link)] = from_switch;
  to_switch_[static_cast<std::size_t>(link)] = to_switch;
}

// One buffer per switch that an Ethernet link leaves or enters; each switch's Ethernet egress ports draw on it, and
// each Ethernet link into it (a NIC's port included) is a lossless ingress keeping its headroom.
void PacketNetwork::seal_links() {
  if (sealed_) return;
  sealed_ = true;
  egress_buffer_.assign(capacity_.size(), -1);
  ingress_slot_.assign(capacity_.size(), -1);
  const SwitchBufferConfig& sb = config_.switch_buffer;
  if (sb.size_bytes <= 0) return;
  const auto ethernet = [&](std::size_t l) { return host_link_[l] != 1; };
  std::vector<std::int32_t> ids;
  for (std::size_t l = 0; l < capacity_.size(); ++l)
    if (ethernet(l))
      for (std::int32_t id : {from_switch_[l], to_switch_[l]})
        if (id >= 0) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  buffers_.assign(ids.size(), SwitchBuffer(sb.size_bytes, sb.alpha, sb.resume_offset_bytes));
  const auto index_of = [&](std::int32_t id) {
    return static_cast<std::int32_t>(std::lower_bound(ids.begin(), ids.end(), id) - ids.begin());
  };
  const std::int32_t full_packet = config_.mtu_payload_bytes + config_.header_bytes;
  for (std::size_t l = 0; l < capacity_.size(); ++l) {
    if (!ethernet(l)) continue;
    if (from_switch_[l] >= 0 && host_link_[l] == 0) egress_buffer_[l] = index_of(from_switch_[l]);
    if (to_switch_[l] >= 0 && config_.pfc.enabled) {
      const std::int64_t headroom =
          sb.headroom_bytes >= 0 ? sb.headroom_bytes : pfc_headroom_bytes(capacity_[l], latency_[l], full_packet);
      ingress_slot_[l] = buffers_[static_cast<std::size_t>(index_of(to_switch_[l]))].add_ingress(headroom);
    }
  }
  for (std::size_t b = 0; b < buffers_.size(); ++b)
    if (buffers_[b].pool_bytes() < full_packet)
      throw NoSharedPoolError(ids[b], sb.size_bytes, sb.size_bytes - buffers_[b].pool_bytes());
  buffer_switch_ = std::move(ids);
}

std::vector<SwitchBufferStats> PacketNetwork::switch_buffer_statistics() const {
  std::vector<SwitchBufferStats> out;
  out.reserve(buffers_.size());
  for (std::size_t b = 0; b < buffers_.size(); ++b) out.push_back({buffer_switch_[b], buffers_[b].peak_bytes()});
  return out;
}

// The shared buffer a packet joining `out`'s queue takes room in: a switch's Ethernet egress; else nullptr.
SwitchBuffer* PacketNetwork::egress_buffer(LinkId out) {
  const std::int32_t b = egress_buffer_[static_cast<std::size_t>(out)];
  return b < 0 ? nullptr : &buffers_[static_cast<std::size_t>(b)];
}

// The lossless ingress slot a packet from `in` queued at `out` is accounted to in their switch's shared buffer,
// or -1 (no switch buffers, lossy, or not a switch between them: the per-port thresholds apply).
std::int32_t PacketNetwork::buffer_slot(LinkId in, LinkId out) const {
  return egress_buffer_[static_cast<std::size_t>(out)] < 0 ? -1 : ingress_slot_[static_cast<std::size_t>(in)];
}

// Recording the port history: `wire` more (or, negative, fewer) bytes that came over `in` wait at egress `out`.
void PacketNetwork::note_held(LinkId in, LinkId out, std::int32_t wire) {
  if (pause_intervals_.empty()) return;
  auto& held = ports_[static_cast<std::size_t>(in)].held_at;
  for (auto& [link, bytes] : held)
    if (link == out) {
      bytes += wire;
      return;
    }
  held.emplace_back(out, wire);
}

void PacketNetwork::send_pause(LinkId ingress_link, bool on, LinkId cause) {
  Port& p = ports_[static_cast<std::size_t>(ingress_link)];
  p.pause_sent = on;
  if (on && cause >= 0) {
    p.pause_cause = cause;
  } else if (on && !pause_intervals_.empty()) {
    // The congestion tree's next edge: where this link's bytes wait most (the first such egress on a tie).
    p.pause_cause = -1;
    std::int64_t most = 0;
    for (const auto& [link, bytes] : p.held_at)
      if (bytes > most) {
        most = bytes;
        p.pause_cause = link;
      }
  }
  events_.push(now_ + latency_[static_cast<std::size_t>(ingress_link)], PacketEventKind::kPause, ingress_link,
               on ? 1 : 0);
}

bool PacketNetwork::backpressured(LinkId link) const {
  return config_.pfc.enabled && host_link_[static_cast<std::size_t>(link)] != 1;
}

// The link whose capacity is the flow's line rate: its NIC's port, else its first Ethernet link, else (all host
// links) its first link.
LinkId PacketNetwork::nic_link(std::span<const LinkId> path) const {
  for (LinkId l : path)
    if (host_link_[static_cast<std::size_t>(l)] == 2) return l;
  for (LinkId l : path)
    if (host_link_[static_cast<std::size_t>(l)] == 0) return l;
  return path.front();
}

FlowId PacketNetwork::start(SimTime now, std::span<const LinkId> path, std::int64_t bytes, double rate_cap_Bps) {
  const FlowId id = begin_flow(now, path, bytes, rate_cap_Bps);
  launch(id);
  return id;
}

FlowId PacketNetwork::start(SimTime now, const std::vector<std::vector<LinkId>>& routes, std::int64_t bytes,
                            double rate_cap_Bps) {
  // Everything is checked before anything changes, so a rejected flow leaves the network as it was.
  if (routes.empty() || routes.size() > kMaxRoutes)
    throw Error(fmt::format("packet network: start: {} routes; 1 to {} are supported", routes.size(), kMaxRoutes));
  if (routes.size() == 1) return start(now, routes.front(), bytes, rate_cap_Bps);
  if (!config_.pfc.enabled)
    throw Error(
        "packet network: start: a flow over several routes needs PFC (lossless): a lossy receiver's "
        "go-back-N takes reordering for loss");
  for (const auto& r : routes) {
    link_checks::check_start(r, bytes, rate_cap_Bps, now, now_, path_seen_, path_epoch_, "packet network");
    if (r.front() != routes.front().front() || r.back() != routes.front().back())
      throw Error("packet network: start: the routes of a flow must share its first and last link");
  }
  const FlowId id = begin_flow(now, routes.front(), bytes, rate_cap_Bps);
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.route_count = static_cast<std::uint16_t>(routes.size());
  f.route_begin.assign(1, 0);
  for (const auto& r : routes) {
    f.routes.insert(f.routes.end(), r.begin(), r.end());
    f.route_begin.push_back(static_cast<std::uint32_t>(f.routes.size()));
  }
  ++path_epoch_;
  for (LinkId l : routes.front()) path_seen_[static_cast<std::size_t>(l)] = path_epoch_;
  for (std::size_t r = 1; r < routes.size(); ++r)
    for (LinkId l : routes[r])
      if (path_seen_[static_cast<std::size_t>(l)] != path_epoch_) {
        path_seen_[static_cast<std::size_t>(l)] = path_epoch_;
        f.extra_links.push_back(l);
        usage_[static_cast<std::size_t>(l)].flow_added(now_);
      }
  f.received.assign((static_cast<std::size_t>(f.packets) + 63) / 64, 0);
  // Flows spray from different routes first, as a switch's per-packet hash would start them: flows started together
  // do not all put their first packets on one route.
  f.next_route = static_cast<std::uint8_t>(f.serial % f.route_count);
  launch(id);
  return id;
}

FlowId PacketNetwork::begin_flow(SimTime now, std::span<const LinkId> path, std::int64_t bytes, double rate_cap_Bps) {
  // Everything is checked before anything changes, so a rejected flow leaves the network as it was.
  link_checks::check_start(path, bytes, rate_cap_Bps, now, now_, path_seen_, path_epoch_, "packet network");
  TRAINSIM_CHECK(path.size() <= 65535,
                 fmt::format("packet network: start: path of {} links; at most 65535 are supported", path.size()));
  const std::int64_t packets64 =
      std::max<std::int64_t>(1, (bytes + config_.mtu_payload_bytes - 1) / config_.mtu_payload_bytes);
  TRAINSIM_CHECK(packets64 < INT32_MAX,
                 fmt::format("packet network: start: {} bytes is more than {} packets", bytes, INT32_MAX - 1));
  run_until(now);
  seal_links();

  FlowId id;
  if (!free_slots_.empty()) {
    id = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (flows_.size() >= static_cast<std::size_t>(INT32_MAX)) throw Error("packet network: too many active flows");
    id = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
  }
  Flow& f = flows_[static_cast<std::size_t>(id)];
  std::vector<LinkId> path_storage = std::move(f.path);  // keeps the slot's allocations
  std::vector<SimTime> tail_storage = std::move(f.tail);
  f = Flow{};
  f.path = std::move(path_storage);
  f.tail = std::move(tail_storage);
  f.path.assign(path.begin(), path.end());
  source_port_[static_cast<std::size_t>(path.front())] = 1;
  f.serial = next_serial_++;
  f.bytes = bytes;
  f.packets = static_cast<std::int32_t>(packets64);
  f.last_payload = static_cast<std::int32_t>(bytes - (packets64 - 1) * config_.mtu_payload_bytes);
  compute_tail(f);
  f.started = now_;
  f.reverse_latency = path_latency(path);
  f.rate_cap = rate_cap_Bps;
  f.active = true;
  const double first_capacity = capacity_[static_cast<std::size_t>(nic_link(path))];
  double line_rate = std::min(rate_cap_Bps, first_capacity > 0 ? first_capacity : kUnlimitedRate);
  if (std::isinf(line_rate)) line_rate = 0;  // learnt at the first CNP (pacing_rate)
  f.cc.reset(line_rate, config_.dcqcn.initial_alpha, now_);
  f.timely.reset(line_rate);
  f.segments_sent.clear();
  f.record.id = id;
  f.record.serial = f.serial;
  f.record.bytes = bytes;
  f.record.start = now_;
  f.record.min_rate_Bps = line_rate;
  for (LinkId link : path) usage_[static_cast<std::size_t>(link)].flow_added(now_);
  ++active_;
  bound_valid_ = false;
  note_rate(id);
  if (!config_.pfc.enabled) arm_watchdog(id);
  return id;
}

// The flow's first packet may go.
void PacketNetwork::launch(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.qp = QpState::kReady;
  ports_[static_cast<std::size_t>(f.path.front())].ready.push(id);
  try_transmit(f.path.front());
}

void PacketNetwork::set_capacity(LinkId link, double capacity_Bps, SimTime now) {
  check_link(link, "set_capacity");
  TRAINSIM_CHECK(std::isfinite(capacity_Bps) && capacity_Bps >= 0,
                 fmt::format("packet network: set_capacity: link {} capacity {} B/s; expected a finite number >= 0",
                             link, capacity_Bps));
  TRAINSIM_CHECK(now >= now_,
                 fmt::format("packet network: set_capacity at {} ps is before the current time {} ps", now, now_));
  run_until(now);
  const auto l = static_cast<std::size_t>(link);
  const double old = capacity_[l];
  if (old == capacity_Bps) return;
  usage_[l].capacity_changed(capacity_Bps, now_);
  capacity_[l] = capacity_Bps;
  refresh_port_timing(link);
  bound_valid_ = false;
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    Flow& f = flows_[i];
    if (!f.active || f.done || std::find(f.path.begin(), f.path.end(), link) == f.path.end()) continue;
    compute_tail(f);
    note_rate(static_cast<FlowId>(i));  // its NIC port's capacity may bound its rate
  }
  Port& p = ports_[l];
  if (p.busy) {
    // The packet on the wire keeps the bytes it has left and goes on at the new speed. (On a host link it may not
    // have started yet: packets reserved the link before it.)
    if (old > 0) {
      const SimTime elapsed = std::max<SimTime>(0, now_ - p.tx_update);
      const double sent = old * static_cast<double>(elapsed) / static_cast<double>(kPicosPerSecond);
      p.tx_remaining = std::max(0.0, p.tx_remaining - sent);
      p.stats.transmit_time += elapsed;
    }
    p.tx_update = now_;
    ++p.tx_gen;
    if (capacity_Bps > 0) {
      p.tx_end = now_ + transmit_time(p.tx_remaining, capacity_Bps);
      events_.push(p.tx_end, PacketEventKind::kTxDone, link, p.tx_gen);
    } else {
      p.tx_end = kNever;
    }
  }
  if (virtual_host(link) && capacity_Bps > 0) {
    // Packets reserved the link at the old speed and keep their times; the one on the wire goes first; those that
    // reached it while it was down go on now, in their order.
    if (p.busy) p.free_at = std::max(p.free_at, p.tx_end);
    while (!p.fifo.empty()) {
      const QueuedPacket pkt = p.fifo.pop();
      p.fifo_bytes -= wire_of(flows_[static_cast<std::size_t>(pkt.flow)], pkt.seq);
      cross_host_link(pkt.flow, pkt, now_);
    }
  }
  if (!p.busy) try_transmit(link);
  if (old <= 0) {  // lossy flows, and lossless ones that lost a packet past a full headroom
    // Back up: the watchdogs parked while it was down run again (by id: deterministic).
    for (std::size_t i = 0; i < flows_.size(); ++i) {
      const Flow& f = flows_[i];
      if (!f.watchdog_parked || !is_active(static_cast<FlowId>(i))) continue;
      if (std::none_of(f.path.begin(), f.path.end(),
                       [&](LinkId k) { return capacity_[static_cast<std::size_t>(k)] <= 0; })) {
        arm_watchdog(static_cast<FlowId>(i));
      }
    }
  }
}

// --- Time ----------------------------------------------------------------------------------------

// A lower bound on when the flow can finish: some copy of its last packet must reach the end of
// the path. If none is in the network, one has yet to leave the NIC after every unsent packet
// before it: the unsent wire bytes at the first link's full speed, then the last packet through
// each later hop without queueing. If the only copy ever sent is on its way, the same from where
// it is. Otherwise (copies after a go-back, or one still on its first link) the next event.
SimTime PacketNetwork::completion_bound(const Flow& f) const {
  // Over several routes any packet may be the last to arrive: the next event is the bound.
  if (f.route_count > 1) return now_;
  const std::int32_t last = f.packets - 1;
  const std::int32_t last_wire = wire_of(f, last);
  const auto n = static_cast<std::int32_t>(f.path.size());
  SimTime t;
  std::int32_t hop;  // the last packet will have crossed links 0..hop at t
  if (f.last_copies == 0 && f.next_seq <= last) {
    const double cap0 = capacity_[static_cast<std::size_t>(f.path.front())];
    if (cap0 <= 0) return kNever;
    const double unsent =
        static_cast<double>(last - f.next_seq) * (config_.mtu_payload_bytes + config_.header_bytes) + last_wire;
    const double ps = std::floor(unsent * static_cast<double>(kPicosPerSecond) / cap0);
    if (!(ps < 9.0e18)) return kNever;
    t = saturating_add(now_, static_cast<SimTime>(ps) - 1);  // - 1: float noise never makes it late
    t = saturating_add(t, latency_[static_cast<std::size_t>(f.path.front())]);
    hop = 0;
  } else if (f.last_copies == 1 && !f.retransmitted && f.last_hop >= 0) {
    t = f.last_at;
    hop = f.last_hop;
  } else {
    return now_;
  }
  return hop + 1 <= n ? saturating_add(t, f.tail[static_cast<std::size_t>(hop + 1)]) : t;
}

void PacketNetwork::compute_tail(Flow& f) const {
  const std::int32_t last_wire = wire_of(f, f.packets - 1);
  const std::size_t n = f.path.size();
  f.tail.assign(n + 1, 0);
  for (std::size_t k = n; k-- > 0;) {
    const auto l = static_cast<std::size_t>(f.path[k]);
    f.tail[k] = saturating_add(f.tail[k + 1], saturating_add(transmit_time(last_wire, capacity_[l]), latency_[l]));
  }
}

SimTime PacketNetwork::next_completion() {
  if (!unreported_.empty()) return now_;
  if (bound_valid_ && bound_ > now_) return bound_ == kNever ? kNever : std::max({bound_, events_.top_time(), now_});
  // A flow finishes when a packet arrives, so the next event is always a valid answer; the O(flows) bound only
  // lets the caller skip ahead. Under congestion it is no later than the next event again and again (a last
  // packet queued behind others), so after a bound that skipped nothing the next ones are not computed, for
  // twice as many calls each time (up to the number of flows): amortised O(1) per event.
  if (skip_bound_ > 0 && !events_.empty()) {
    --skip_bound_;
    return std::max(events_.top_time(), now_);
  }
  bound_ = kNever;
  for (const Flow& f : flows_) {
    if (f.active && !f.done) bound_ = std::min(bound_, completion_bound(f));
  }
  bound_valid_ = true;
  if (bound_ == kNever) return kNever;
  const SimTime next = std::max({bound_, events_.top_time(), now_});
  if (!events_.empty() && next <= events_.top_time()) {
    skip_period_ = std::min<std::int64_t>(2 * skip_period_ + 1, static_cast<std::int64_t>(flows_.size()));
    skip_bound_ = skip_period_;
  } else {
    skip_period_ = 0;
  }
  return next;
}

void PacketNetwork::advance(SimTime t, std::vector<FlowId>& finished) {
  TRAINSIM_CHECK(t >= now_, fmt::format("packet network: advance to {} ps is before the current time {} ps", t, now_));
  run_until(t);
  std::sort(unreported_.begin(), unreported_.end());
  finished.clear();
  for (const auto& [time, id] : unreported_) {
    finished.push_back(id);
    Flow& f = flows_[static_cast<std::size_t>(id)];
    f.reported = true;
    // Reported: the slot may serve a new flow once no packet of this one is left in the network.
    if (f.in_flight == 0) {
      f.active = false;
      free_slots_.push_back(id);
    }
  }
  unreported_.clear();
}

void PacketNetwork::run_until(SimTime t) {
  while (!events_.empty() && events_.top_time() <= t) {
    const PacketEvent e = events_.pop();
    now_ = e.time;
    ++counters_.events;
    process(e);
  }
  now_ = t;
}

void PacketNetwork::process(const PacketEvent& e) {
  switch (e.kind) {
    case PacketEventKind::kTxDone:
      if (e.b == ports_[static_cast<std::size_t>(e.a)].tx_gen) on_tx_done(e.a);
      return;
    case PacketEventKind::kPause: on_pause(e.a, e.b != 0); return;
    case PacketEventKind::kFarEnd: on_far_end(e.a); return;
    case PacketEventKind::kHostExit: on_arrive(e.a, e.b, e.hop, e.ecn, static_cast<std::uint8_t>(e.c)); return;
    case PacketEventKind::kHostXon:
      ports_[static_cast<std::size_t>(e.a)].xon_pending = false;
      check_host_backlog(e.a, e.b);
      return;
    default: break;
  }
  // Flow events: stale once the flow finished or its slot carries another flow.
  Flow& f = flows_[static_cast<std::size_t>(e.a)];
  if (!f.active || f.done || static_cast<std::uint32_t>(f.serial) != e.c) return;
  switch (e.kind) {
    case PacketEventKind::kQpReady:
      if (e.b == f.pacing_gen && f.qp == QpState::kWaiting) {
        f.qp = QpState::kReady;
        ports_[static_cast<std::size_t>(f.path.front())].ready.push(e.a);
        try_transmit(f.path.front());
      }
      return;
    case PacketEventKind::kCnp: on_cnp(e.a); return;
    case PacketEventKind::kAck: on_ack(e.a, e.b); return;
    case PacketEventKind::kRateTimer:
      if (e.b == f.timer_gen) on_rate_timer(e.a);
      return;
    case PacketEventKind::kNack:
      // Ignore a NACK the sender already acted on: it went back at least this far since the
      // NACK left the receiver.
      if (!(f.goback_seq >= 0 && f.goback_seq <= e.b && f.goback_time >= now_ - f.reverse_latency)) go_back(e.a, e.b);
      return;
    case PacketEventKind::kTimeout:
      if (e.b == f.watchdog_gen) on_watchdog(e.a);
      return;
    default: TRAINSIM_UNREACHABLE(fmt::format("packet network: unknown event kind {}", static_cast<int>(e.kind)));
  }
}

// --- Ports ---------------------------------------------------------------------------------------

void PacketNetwork::refresh_port_timing(LinkId link) {
  const auto l = static_cast<std::size_t>(link);
  ports_[l].full_packet_ps = transmit_time(config_.mtu_payload_bytes + config_.header_bytes, capacity_[l]);
}

SimTime PacketNetwork::serialization(const Port& port, LinkId link, std::int32_t wire) const {
  if (wire == config_.mtu_payload_bytes + config_.header_bytes) return port.full_packet_ps;
  return transmit_time(wire, capacity_[static_cast<std::size_t>(link)]);
}

// Starts the next packet on an idle, unpaused, up port: forwarded packets and the flows that start
// here take turns (a NIC interleaves its QPs with nothing else; a switch port has no QPs).
void PacketNetwork::try_transmit(LinkId link) {
  Port& p = ports_[static_cast<std::size_t>(link)];
  if (p.busy || p.paused || capacity_[static_cast<std::size_t>(link)] <= 0) return;
  // A host link's forwarded packets never wait in its FIFO (cross_host_link): its flows' packets reserve it after
  // them, from when it is next free.
  const bool host = host_link_[static_cast<std::size_t>(link)] == 1;
  const bool has_fifo = !virtual_host(link) && !p.fifo.empty();
  if (!has_fifo && p.ready.empty()) return;
  const bool local = !p.ready.empty() && (!has_fifo || p.serve_local_next);
  p.serve_local_next = !local;
  const SimTime start = host ? std::max(now_, p.free_at) : now_;
  QueuedPacket pkt;
  std::int32_t wire;
  if (local) {
    const FlowId id = p.ready.pop();
    const Flow& f = flows_[static_cast<std::size_t>(id)];
    wire = wire_of(f, f.next_seq);
    pkt = take_from_qp(id, link, start + serialization(p, link, wire));
  } else {
    pkt = p.fifo.pop();
    const Flow& f = flows_[static_cast<std::size_t>(pkt.flow)];
    wire = wire_of(f, pkt.seq);
    p.fifo_bytes -= wire;
    note_queue(link);
    const LinkId in = route_of(f, pkt.route)[pkt.hop - 1u];
    note_held(in, link, -wire);
    if (!config_.pfc.enabled) {
      if (SwitchBuffer* b = egress_buffer(link)) b->give_back(wire);
    } else if (const std::int32_t slot = buffer_slot(in, link); slot >= 0) {
      SwitchBuffer& b = *egress_buffer(link);
      b.release(slot, wire);
      if (ports_[static_cast<std::size_t>(in)].pause_sent && b.should_resume(slot)) send_pause(in, false);
    } else if (backpressured(in)) {
      release_ingress(in, wire);
    }
  }
  p.busy = true;
  p.in_tx = pkt;
  p.tx_remaining = wire;
  p.tx_update = start;
  p.tx_end = start + serialization(p, link, wire);
  if (host) p.free_at = p.tx_end;
  events_.push(p.tx_end, PacketEventKind::kTxDone, link, ++p.tx_gen);
}

// The flow's next packet leaves its QP for the port; the rate limiter says when the one after may.
QueuedPacket PacketNetwork::take_from_qp(FlowId id, LinkId link, SimTime port_free_at) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const std::int32_t seq = f.next_seq++;
  const std::int32_t wire = wire_of(f, seq);
  ++f.in_flight;
  if (seq + 1 == f.packets) {
    f.last_hop = -1;
    ++f.last_copies;
  }
  if (config_.congestion_control == CongestionControl::Dcqcn) dcqcn_on_sent(f.cc, config_.dcqcn, wire);
  if (config_.congestion_control == CongestionControl::Timely && (seq + 1) % packets_per_segment() == 0)
    f.segments_sent.emplace_back(seq / packets_per_segment(), now_);
  f.next_allowed = now_ + transmit_time(wire, pacing_rate(f));
  if (f.next_seq >= f.packets) {
    f.qp = QpState::kIdle;
  } else if (f.next_allowed <= port_free_at) {
    // Allowed again by the time the port is free: no event needed.
    f.qp = QpState::kReady;
    ports_[static_cast<std::size_t>(link)].ready.push(id);
  } else {
    f.qp = QpState::kWaiting;
    events_.push(f.next_allowed, PacketEventKind::kQpReady, id, ++f.pacing_gen, static_cast<std::uint32_t>(f.serial));
  }
  // Spraying: the packets take the routes in turn. Adaptive routing: all leave on route 0, the switches choose.
  std::uint8_t route = 0;
  if (f.route_count > 1 && config_.multipath == Multipath::Spray) {
    route = f.next_route;
    f.next_route = static_cast<std::uint8_t>((route + 1u) % f.route_count);
  }
  return QueuedPacket{id, seq, 0, 0, route};
}

void PacketNetwork::on_tx_done(LinkId link) {
  Port& p = ports_[static_cast<std::size_t>(link)];
  const QueuedPacket pkt = p.in_tx;
  const Flow& f = flows_[static_cast<std::size_t>(pkt.flow)];
  p.busy = false;
  p.stats.transmit_time += now_ - p.tx_update;
  const std::int32_t payload = payload_of(f, pkt.seq);
  ++p.stats.packets_sent;
  p.stats.wire_bytes_sent += payload + config_.header_bytes;
  p.payload_bytes_sent += payload;
  const SimTime arrival = now_ + latency_[static_cast<std::size_t>(link)];
  if (pkt.seq + 1 == f.packets) {
    Flow& mf = flows_[static_cast<std::size_t>(pkt.flow)];
    mf.last_hop = pkt.hop;
    mf.last_at = arrival;
  }
  if (arrival == now_ && pkt.hop + 1u < route_of(f, pkt.route).size() &&
      virtual_host(route_of(f, pkt.route)[pkt.hop + 1u])) {
    // On to a host link with no latency to cross first: it reaches that link now.
    QueuedPacket next = pkt;
    ++next.hop;
    cross_host_link(pkt.flow, next, arrival);
  } else {
    if (p.wire.empty()) events_.push(arrival, PacketEventKind::kFarEnd, link, 0);
    p.wire.push(OnWire{arrival, pkt});
  }
  try_transmit(link);
}

// The packet reaches the transmitter of its route's link `pkt.hop`, a host link, at `at` (>= now): a FIFO, so it starts
// at the later of its arrival and the link's free_at, and reserves the link for its serialization; a kFarEnd event
// hands it on when it reaches the far end (on_far_end). A link that is down holds it in its FIFO until set_capacity
// brings the link back. (Working out several host links at once would reserve the later ones before packets that
// reach them sooner: on a loaded NVLink mesh the idle gaps that left cut a ring's throughput tenfold.)
void PacketNetwork::cross_host_link(FlowId id, QueuedPacket pkt, SimTime at) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const LinkId link = route_of(f, pkt.route)[pkt.hop];
  const auto l = static_cast<std::size_t>(link);
  Port& p = ports_[l];
  const std::int32_t wire = wire_of(f, pkt.seq);
  if (capacity_[l] <= 0) {
    p.fifo.push(pkt);
    p.fifo_bytes += wire;
    p.stats.max_queue_bytes = std::max(p.stats.max_queue_bytes, p.fifo_bytes);
    return;
  }
  if (config_.host_links == HostLinkModel::Delay) {
    cross_host_links_without_queueing(f, pkt, at);
    return;
  }
  const SimTime start = std::max(at, p.free_at);
  // The queue it joins, as a fabric port counts it: the bytes ahead of it, and its own.
  const auto ahead = start > at ? static_cast<std::int64_t>(static_cast<double>(start - at) * capacity_[l] /
                                                            static_cast<double>(kPicosPerSecond))
                                : std::int64_t{0};
  p.stats.max_queue_bytes = std::max(p.stats.max_queue_bytes, ahead + wire);
  const SimTime end = start + serialization(p, link, wire);
  p.free_at = end;
  p.stats.transmit_time += end - start;
  ++p.stats.packets_sent;
  p.stats.wire_bytes_sent += wire;
  p.payload_bytes_sent += wire - config_.header_bytes;
  const SimTime t = end + latency_[l];
  if (pkt.seq + 1 == f.packets) {
    f.last_hop = pkt.hop;
    f.last_at = t;
  }
  if (p.wire.empty()) events_.push(t, PacketEventKind::kFarEnd, link, 0);
  p.wire.push(OnWire{t, pkt});
}

// HostLinkModel::Delay: the packet crosses the host link `pkt.hop` (which is up) and the host links after it on its
// route that are up, each in its serialization and latency with no queue, and one event hands it on where that run
// ends (kHostExit: to the next fabric port, its destination, or a host link that is down and holds it). Every packet
// takes a full packet's serialization, a shorter last one too (a few ns more at NVLink speed): packets of one flow
// cross a run in the same time and leave it in the order they came, which the receiver needs. They may overtake
// another flow's packets, and a host link never backs up: no PFC from a NIC's host side, and a link's transmit time
// may add up to more than the time that passed. A run is timed when a packet starts it: a link of the run that goes
// down after that does not hold the packet.
void PacketNetwork::cross_host_links_without_queueing(Flow& f, QueuedPacket pkt, SimTime at) {
  const auto path = route_of(f, pkt.route);
  const std::int32_t wire = wire_of(f, pkt.seq);
  SimTime t = at;
  std::size_t hop = pkt.hop;
  while (true) {
    const LinkId link = path[hop];
    Port& p = ports_[static_cast<std::size_t>(link)];
    const SimTime serialize = p.full_packet_ps;
    p.stats.max_queue_bytes = std::max<std::int64_t>(p.stats.max_queue_bytes, wire);
    p.stats.transmit_time += serialize;
    ++p.stats.packets_sent;
    p.stats.wire_bytes_sent += wire;
    p.payload_bytes_sent += wire - config_.header_bytes;
    t += serialize + latency_[static_cast<std::size_t>(link)];
    if (hop + 1 == path.size()) break;
    const LinkId next = path[hop + 1];
    if (!virtual_host(next) || capacity_[static_cast<std::size_t>(next)] <= 0) break;
    ++hop;
  }
  if (pkt.seq + 1 == f.packets) {
    f.last_hop = static_cast<std::int32_t>(hop);
    f.last_at = t;
  }
  events_.push(t, PacketEventKind::kHostExit, pkt.flow, pkt.seq, pkt.route, static_cast<std::uint16_t>(hop), pkt.ecn);
}

// The first packet on the link's wire reaches its far end. Packets reach it in the order they left (each left after
// the one before, and the latency is the link's): only the first of them has an event.
void PacketNetwork::on_far_end(LinkId link) {
  Port& p = ports_[static_cast<std::size_t>(link)];
  const QueuedPacket pkt = p.wire.pop().packet;
  if (!p.wire.empty()) events_.push(p.wire.front().at, PacketEventKind::kFarEnd, link, 0);
  on_arrive(pkt.flow, pkt.seq, pkt.hop, pkt.ecn, pkt.route);
}

// Bytes a host link has yet to serialize (those reaching it while it is down included).
std::int64_t PacketNetwork::host_backlog_bytes(LinkId host) const {
  const auto l = static_cast<std::size_t>(host);
  const Port& p = ports_[l];
  const SimTime busy = std::max<SimTime>(0, p.free_at - now_);
  return p.fifo_bytes +
         static_cast<std::int64_t>(static_cast<double>(busy) * capacity_[l] / static_cast<double>(kPicosPerSecond));
}

// PFC where the fabric enters a host (a NIC's port onto PCIe or NVLink): the fabric link `ingress` is paused while
// the host link's backlog is above XOFF, and resumes once it is at XON or below (and nothing else holds it), checked
// when the backlog would have drained to XON, or every 10 us while the host link is down.
void PacketNetwork::check_host_backlog(LinkId ingress, LinkId host) {
  Port& in = ports_[static_cast<std::size_t>(ingress)];
  const std::int64_t backlog = host_backlog_bytes(host);
  if (!in.pause_sent) {
    if (backlog <= config_.pfc.xoff_bytes) return;
    send_pause(ingress, true, host);
  } else if (backlog <= config_.pfc.xon_bytes) {
    // Drained; bytes queued in the fabric behind this ingress resume it themselves (release_ingress).
    if (!in.xon_pending && in.ingress_bytes <= config_.pfc.xon_bytes) send_pause(ingress, false);
    return;
  }
  if (in.xon_pending) return;
  in.xon_pending = true;
  const auto l = static_cast<std::size_t>(host);
  const SimTime drained =
      capacity_[l] > 0 ? ports_[l].free_at - transmit_time(static_cast<double>(config_.pfc.xon_bytes), capacity_[l])
                       : now_ + 10'000'000;  // 10 us
  events_.push(std::max(drained, now_ + 1), PacketEventKind::kHostXon, ingress, host);
}

// Adaptive routing at the switch a packet on `route` reached after `hop`: of the flow's routes whose link at `hop` is
// the one it came over (any of them continues from here), the one whose next port has the least queued (the packet's
// own on a tie, then the first).
std::uint8_t PacketNetwork::adaptive_route(const Flow& f, std::uint8_t route, std::uint16_t hop) const {
  const auto here = route_of(f, route);
  std::uint8_t best = route;
  std::int64_t best_bytes = ports_[static_cast<std::size_t>(here[hop + 1u])].fifo_bytes;
  for (std::uint16_t q = 0; q < f.route_count; ++q) {
    const auto r = route_of(f, static_cast<std::uint8_t>(q));
    if (q == route || r.size() <= static_cast<std::size_t>(hop) + 1 || r[hop] != here[hop]) continue;
    const std::int64_t bytes = ports_[static_cast<std::size_t>(r[hop + 1u])].fifo_bytes;
    if (bytes < best_bytes) {
      best = static_cast<std::uint8_t>(q);
      best_bytes = bytes;
    }
  }
  return best;
}

void PacketNetwork::on_arrive(FlowId id, std::int32_t seq, std::uint16_t hop, std::uint8_t ecn, std::uint8_t route) {
  const Flow& f = flows_[static_cast<std::size_t>(id)];
  if (static_cast<std::size_t>(hop) + 1 == route_of(f, route).size()) {
    deliver(id, seq, ecn);
    return;
  }
  if (f.route_count > 1 && config_.multipath == Multipath::Adaptive) route = adaptive_route(f, route, hop);
  const auto path = route_of(f, route);
  const LinkId in = path[hop];
  const LinkId out = path[hop + 1u];
  if (virtual_host(out)) {  // into a host: no drop, no mark; a backlog there pauses the fabric link it came over
    cross_host_link(id, QueuedPacket{id, seq, static_cast<std::uint16_t>(hop + 1), ecn, route}, now_);
    if (backpressured(in)) check_host_backlog(in, out);
    return;
  }
  Port& q = ports_[static_cast<std::size_t>(out)];
  const std::int32_t wire = wire_of(f, seq);
  const bool host_out = host_link_[static_cast<std::size_t>(out)] != 0;
  SwitchBuffer* buffer = egress_buffer(out);
  const std::int32_t slot = buffer_slot(in, out);
  bool admitted = true;
  if (!config_.pfc.enabled && !host_out) {
    admitted = buffer != nullptr ? buffer->admits_egress(q.fifo_bytes, wire)
                                 : q.fifo_bytes + wire <= config_.port_buffer_bytes;
    if (admitted && buffer != nullptr) buffer->take(wire);
  } else if (slot >= 0 && buffer->admit(slot, wire) == SwitchBuffer::Admission::Drop) {
    admitted = false;
    ++counters_.headroom_drops;
    // Lossless flows arm no watchdog; one that lost a packet needs it for a lost tail.
    if (!flows_[static_cast<std::size_t>(id)].watchdog_armed) arm_watchdog(id);
  }
  if (!admitted) {
    ++q.stats.drops;
    ++counters_.drops;
    packet_gone(id, seq);
    return;
  }
  if (config_.ecn.enabled && !ecn && !host_out &&
      ecn_should_mark(config_.ecn, q.fifo_bytes, config_.seed, f.serial, static_cast<std::uint64_t>(seq), hop + 1u)) {
    ecn = 1;
    ++q.stats.ecn_marks;
  }
  q.fifo.push(QueuedPacket{id, seq, static_cast<std::uint16_t>(hop + 1), ecn, route});
  note_held(in, out, wire);
  q.fifo_bytes += wire;
  q.stats.max_queue_bytes = std::max(q.stats.max_queue_bytes, q.fifo_bytes);
  note_queue(out);
  if (slot >= 0) {
    if (!ports_[static_cast<std::size_t>(in)].pause_sent && buffer->should_pause(slot)) send_pause(in, true);
  } else if (backpressured(in)) {
    Port& ingress = ports_[static_cast<std::size_t>(in)];
    ingress.ingress_bytes += wire;
    if (!ingress.pause_sent && ingress.ingress_bytes > config_.pfc.xoff_bytes) send_pause(in, true);
  }
  try_transmit(out);
}

void PacketNetwork::release_ingress(LinkId ingress_link, std::int32_t wire) {
  Port& ingress = ports_[static_cast<std::size_t>(ingress_link)];
  ingress.ingress_bytes -= wire;
  if (ingress.pause_sent && ingress.ingress_bytes <= config_.pfc.xon_bytes) send_pause(ingress_link, false);
}

void PacketNetwork::on_pause(LinkId link, bool on) {
  Port& p = ports_[static_cast<std::size_t>(link)];
  if (on == p.paused) return;
  p.paused = on;
  auto* history = pause_intervals_.empty() ? nullptr : &pause_intervals_[static_cast<std::size_t>(link)];
  if (on) {
    p.paused_since = now_;
    ++p.stats.pause_events;
    ++counters_.pause_events;
    if (history && history->size() < kMaxQueueSamples) history->push_back({now_, kNever, p.pause_cause});
  } else {
    p.stats.paused_time += now_ - p.paused_since;
    if (history && !history->empty() && history->back().to == kNever) history->back().to = now_;
    try_transmit(link);
  }
}

// --- Endpoints -----------------------------------------------------------------------------------

void PacketNetwork::deliver(FlowId id, std::int32_t seq, std::uint8_t ecn) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (f.done) {  // a duplicate still in flight when the flow finished
    packet_gone(id, seq);
    return;
  }
  if (ecn && config_.congestion_control == CongestionControl::Dcqcn &&
      (!f.cnp_sent || now_ - f.last_cnp >= config_.dcqcn.cnp_interval)) {
    f.cnp_sent = true;
    f.last_cnp = now_;
    ++counters_.cnps;
    events_.push(now_ + f.reverse_latency, PacketEventKind::kCnp, id, 0, static_cast<std::uint32_t>(f.serial));
  }
  if (f.route_count > 1) {
    deliver_reordered(id, seq);
    return;
  }
  if (seq == f.expected) {
    ++f.expected;
    f.delivered_bytes += payload_of(f, seq);
    ++counters_.packets_delivered;
    packet_gone(id, seq);
    if (f.expected == f.packets) {
      complete(id);
    } else if (config_.congestion_control == CongestionControl::Timely && f.expected % packets_per_segment() == 0) {
      events_.push(now_ + f.reverse_latency, PacketEventKind::kAck, id, f.expected / packets_per_segment() - 1,
                   static_cast<std::uint32_t>(f.serial));
    }
    return;
  }
  if (seq > f.expected && f.nacked_for != f.expected) {
    // Go-back-N receiver: ask once per hole for everything from the first missing packet on.
    f.nacked_for = f.expected;
    ++counters_.nacks;
    events_.push(now_ + f.reverse_latency, PacketEventKind::kNack, id, f.expected,
                 static_cast<std::uint32_t>(f.serial));
  }
  packet_gone(id, seq);
}

// A receiver of a flow over several routes places each packet as it arrives (its first copy; a resent one is
// discarded); the flow is done when it has them all. `expected` is the first it still lacks, as for one route.
void PacketNetwork::deliver_reordered(FlowId id, std::int32_t seq) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  std::uint64_t& word = f.received[static_cast<std::size_t>(seq) / 64];
  const std::uint64_t bit = std::uint64_t{1} << (static_cast<unsigned>(seq) % 64);
  if (word & bit) {
    packet_gone(id, seq);
    return;
  }
  word |= bit;
  f.delivered_bytes += payload_of(f, seq);
  ++counters_.packets_delivered;
  packet_gone(id, seq);
  const std::int32_t before = f.expected;
  while (f.expected < f.packets &&
         ((f.received[static_cast<std::size_t>(f.expected) / 64] >> (static_cast<unsigned>(f.expected) % 64)) & 1u)) {
    ++f.expected;
  }
  if (f.expected == f.packets) {
    complete(id);
    return;
  }
  if (config_.congestion_control != CongestionControl::Timely) return;
  // Every segment now complete up to the first packet still missing is acknowledged.
  const std::int32_t per = packets_per_segment();
  for (std::int32_t segment = before / per; segment < f.expected / per; ++segment)
    events_.push(now_ + f.reverse_latency, PacketEventKind::kAck, id, segment, static_cast<std::uint32_t>(f.serial));
}

// A packet of the flow left the network (delivered, discarded or dropped).
void PacketNetwork::packet_gone(FlowId id, std::int32_t seq) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (seq + 1 == f.packets) --f.last_copies;
  if (--f.in_flight == 0 && f.done && f.reported && f.active) {
    f.active = false;
    free_slots_.push_back(id);
  }
}

void PacketNetwork::complete(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.done = true;
  --active_;
  bound_valid_ = false;
  for (LinkId link : f.path) usage_[static_cast<std::size_t>(link)].flow_removed(now_, 0);
  for (LinkId link : f.extra_links) usage_[static_cast<std::size_t>(link)].flow_removed(now_, 0);
  f.record.finish = now_;
  completed_.push_back(f.record);
  unreported_.emplace_back(now_, id);
  note_rate(id);
}

void PacketNetwork::on_cnp(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (f.cc.line_rate <= 0) {
    const double cap0 = capacity_[static_cast<std::size_t>(f.path.front())];
    if (cap0 <= 0) return;
    f.cc.reset(std::min(f.rate_cap, cap0), f.cc.alpha, now_);
  }
  dcqcn_on_cnp(f.cc, config_.dcqcn, now_);
  ++counters_.rate_cuts;
  ++f.record.cnps;
  f.record.min_rate_Bps = std::min(f.record.min_rate_Bps, f.cc.rc);
  events_.push(now_ + config_.dcqcn.increase_period, PacketEventKind::kRateTimer, id, ++f.timer_gen,
               static_cast<std::uint32_t>(f.serial));
  note_rate(id);
}

std::int32_t PacketNetwork::packets_per_segment() const {
  return static_cast<std::int32_t>(std::max<std::int64_t>(1, config_.timely.segment_bytes / config_.mtu_payload_bytes));
}

// TIMELY: a segment's completion reached the sender. Its RTT is the time since its last packet began to leave, less
// that packet's serialization at the line rate: TIMELY sends a segment back to back at the line rate and paces
// between segments, so the RTT of Mittal et al. §3.1 (completion - send - segment / line rate) holds no pacing gap;
// here pacing spaces every packet, and timing the segment's last packet keeps the gaps out the same way. Segments
// acknowledged out of step (a go-back-N resend) give no sample.
void PacketNetwork::on_ack(FlowId id, std::int32_t segment) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  while (!f.segments_sent.empty() && f.segments_sent.front().first < segment) f.segments_sent.pop_front();
  if (f.segments_sent.empty() || f.segments_sent.front().first != segment) return;
  const SimTime sent = f.segments_sent.front().second;
  f.segments_sent.pop_front();
  if (f.timely.line_rate <= 0) {  // the first link was down at the start: learn the line rate now
    const double cap0 = capacity_[static_cast<std::size_t>(f.path.front())];
    if (cap0 <= 0) return;
    f.timely.reset(std::min(f.rate_cap, cap0));
  }
  const std::int64_t wire = config_.mtu_payload_bytes + config_.header_bytes;
  const SimTime rtt = std::max<SimTime>(0, now_ - sent - transmit_time(static_cast<double>(wire), f.timely.line_rate));
  const double before = pacing_rate(f);
  if (timely_on_rtt(f.timely, config_.timely, rtt)) {
    ++counters_.rate_cuts;
    f.record.min_rate_Bps = std::min(f.record.min_rate_Bps, f.timely.rate);
  }
  repace(id, before);
}

void PacketNetwork::on_rate_timer(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const double before = pacing_rate(f);
  if (dcqcn_on_timer(f.cc, config_.dcqcn)) {
    events_.push(now_ + config_.dcqcn.increase_period, PacketEventKind::kRateTimer, id, f.timer_gen,
                 static_cast<std::uint32_t>(f.serial));
  }
  repace(id, before);
}

// The rate rose from `before`: a packet waiting for the rate limiter pays what it still owes at the new rate.
void PacketNetwork::repace(FlowId id, double before) {
  note_rate(id);
  Flow& f = flows_[static_cast<std::size_t>(id)];
  const double after = pacing_rate(f);
  if (f.qp == QpState::kWaiting && after > before && f.next_allowed > now_) {
    // The wait left shrinks with the faster rate: the credit still owed is paid at the new rate.
    const double left_bytes =
        static_cast<double>(f.next_allowed - now_) * before / static_cast<double>(kPicosPerSecond);
    f.next_allowed = now_ + transmit_time(left_bytes, after);
    events_.push(f.next_allowed, PacketEventKind::kQpReady, id, ++f.pacing_gen, static_cast<std::uint32_t>(f.serial));
  }
}

// Go-back-N: the sender resends from `seq` on (lossy mode).
void PacketNetwork::go_back(FlowId id, std::int32_t seq) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (seq >= f.next_seq) return;
  counters_.retransmitted_packets += f.next_seq - seq;
  f.record.retransmitted_packets += f.next_seq - seq;
  f.retransmitted = true;
  f.next_seq = seq;
  f.goback_seq = seq;
  // Segments from the resent one on will be timed again when they leave.
  while (!f.segments_sent.empty() && f.segments_sent.back().first >= seq / packets_per_segment())
    f.segments_sent.pop_back();
  f.goback_time = now_;
  if (f.qp == QpState::kIdle) wake_qp(id);
}

void PacketNetwork::wake_qp(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  if (f.next_allowed > now_) {
    f.qp = QpState::kWaiting;
    events_.push(f.next_allowed, PacketEventKind::kQpReady, id, ++f.pacing_gen, static_cast<std::uint32_t>(f.serial));
    return;
  }
  f.qp = QpState::kReady;
  ports_[static_cast<std::size_t>(f.path.front())].ready.push(id);
  try_transmit(f.path.front());
}

// Lossy mode: without receiver progress over a whole timeout while packets are outstanding, the
// sender goes back to the first undelivered packet (the receiver's state stands in for its ACKs).
// While a link on the path is down the watchdog parks: resending could not get through, and its
// events would keep the network from ever being idle. set_capacity re-arms it.
void PacketNetwork::on_watchdog(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  for (LinkId l : f.path) {
    if (capacity_[static_cast<std::size_t>(l)] <= 0) {
      f.watchdog_parked = true;
      return;
    }
  }
  if (f.expected == f.watchdog_mark && f.next_seq > f.expected) {
    ++counters_.timeouts;
    go_back(id, f.expected);
  }
  arm_watchdog(id);
}

void PacketNetwork::arm_watchdog(FlowId id) {
  Flow& f = flows_[static_cast<std::size_t>(id)];
  f.watchdog_parked = false;
  f.watchdog_armed = true;
  f.watchdog_mark = f.expected;
  events_.push(now_ + config_.retransmit.timeout, PacketEventKind::kTimeout, id, f.watchdog_gen,
               static_cast<std::uint32_t>(f.serial));
}

}  // namespace trainsim
