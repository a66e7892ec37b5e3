#pragma once
// What the packet network reports beyond the flow-level LinkStats: per-port queueing, PFC, ECN
// and drops, counters for the whole run, and one record per completed flow.
#include <cstdint>

#include "core/time.hpp"
#include "network/network_types.hpp"

namespace trainsim {

struct PacketLinkStats {
  std::int64_t packets_sent = 0;     // packets serialized onto the link (retransmissions included)
  std::int64_t wire_bytes_sent = 0;  // with headers
  SimTime transmit_time = 0;         // time spent serializing
  std::int64_t max_queue_bytes = 0;  // peak of the egress FIFO (forwarded packets, wire bytes)
  std::int64_t pause_events = 0;     // PAUSE frames that took effect at this link's transmitter
  SimTime paused_time = 0;           // time the transmitter was held by PFC
  std::int64_t ecn_marks = 0;        // packets marked joining this link's queue
  std::int64_t drops = 0;            // packets dropped at this link's queue (lossy mode)
};

// A port's egress queue at a time (PacketNetwork::record_port_history).
struct QueueSample {
  SimTime at = 0;
  std::int64_t bytes = 0;
};

// An interval PFC held a port's transmitter (PacketNetwork::record_port_history): [from, to), to = kNever while it
// still holds. `cause`: the egress port of the switch the paused link enters that held the most of the link's bytes
// when the PAUSE left (-1: none held there) - the next edge of the congestion tree.
struct PauseInterval {
  SimTime from = 0, to = 0;
  LinkId cause = -1;
};

// A flow's sending rate from `at` on (PacketNetwork::record_rates): what its congestion control allows, at most its
// NIC port's capacity; 0 once the flow has finished.
struct RateSample {
  std::uint64_t flow = 0;  // the flow's serial (FlowRecord::serial)
  LinkId nic = -1;         // the NIC port it leaves through
  SimTime at = 0;
  double rate_Bps = 0;
};

struct PacketCounters {
  std::int64_t events = 0;             // events processed (stale ones included)
  std::int64_t packets_delivered = 0;  // in-order packets accepted by receivers
  std::int64_t cnps = 0;               // CNPs sent by receivers
  std::int64_t rate_cuts = 0;          // CNPs that reached a live sender
  std::int64_t drops = 0;
  std::int64_t nacks = 0;     // go-back-N requests sent by receivers
  std::int64_t timeouts = 0;  // sender watchdogs that went back
  std::int64_t retransmitted_packets = 0;
  std::int64_t pause_events = 0;
  std::int64_t headroom_drops = 0;  // lossless with switch buffers: packets past a full PFC headroom (also in drops)
};

// The most a switch's shared buffer (PacketConfig::switch_buffer) held at once.
struct SwitchBufferStats {
  std::int32_t switch_id = -1;
  std::int64_t peak_bytes = 0;
};

struct FlowRecord {
  FlowId id = -1;            // the slot it had (may since carry another flow)
  std::uint64_t serial = 0;  // order of start() calls, from 0: unique over the run
  std::int64_t bytes = 0;
  SimTime start = 0, finish = 0;
  std::int64_t cnps = 0;                   // CNPs that reached its sender
  std::int64_t retransmitted_packets = 0;  // packets it sent more than once
  double min_rate_Bps = 0;                 // lowest DCQCN rate it was cut to (line rate if never)
};

}  // namespace trainsim
