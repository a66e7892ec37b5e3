#pragma once
// The packet network's event queue, ordered by (time, insertion order). The insertion order breaks ties, so
// equal-time events run first-scheduled first and a run is reproducible bit for bit.
//
// A radix heap (Ahuja, Mehlhorn, Orlin and Tarjan 1990): events are never scheduled before the last one taken
// (the network schedules at or after its clock), so each event sits in the bucket of the highest bit in which its
// time differs from that last time, and taking the next one empties the lowest non-empty bucket into the buckets
// below it around its earliest time. Pushing is an append; an event moves down at most 64 buckets in its life,
// and with the network's events a few microseconds ahead it moves a few. Events of equal time always share a
// bucket and keep their insertion order in it, so they come out exactly as a binary heap on (time, order) gives
// them. The binary heap this replaced spent two fifths of a packet-level run sifting (a dependent load and
// compare per level). Storage is 64 vectors that only grow: no allocation per packet once they have reached
// their working size; a bit per bucket finds the lowest non-empty one in one instruction.
#include <array>
#include <bit>
#include <cstdint>
#include <vector>

#include "core/check.hpp"
#include "core/time.hpp"

namespace trainsim {

enum class PacketEventKind : std::uint8_t {
  kTxDone,     // a = link, b = the link's transmit generation (stale when it changed)
  kQpReady,    // a = flow, b = pacing generation, c = flow serial: the rate limiter allows a packet
  kPause,      // a = link, b = 1 PAUSE / 0 RESUME, reaching the link's transmitter
  kCnp,        // a = flow, c = flow serial: a CNP reaches the sender
  kRateTimer,  // a = flow, b = timer generation, c = flow serial: DCQCN increase timer
  kNack,       // a = flow, b = the receiver's expected packet, c = flow serial (lossy mode)
  kTimeout,    // a = flow, b = watchdog generation, c = flow serial (lossy mode)
  kAck,        // a = flow, b = segment, c = flow serial: a segment's completion reaches the sender (TIMELY)
  kFarEnd,     // a = link: the first packet on the link's wire reaches its far end
  kHostXon,    // a = ingress link, b = host link: PFC may resume the ingress once the host link's backlog is low
  kHostExit,   // a = flow, b = packet, c = route, hop, ecn: a packet leaves a run of host links crossed without
               // queueing (HostLinkModel::Delay) at the far end of its link `hop`
};

// No sequence number: the radix heap keeps events of equal time in push order by itself.
struct PacketEvent {
  SimTime time;
  std::int32_t a, b;
  std::uint32_t c;
  PacketEventKind kind;
  std::uint8_t ecn;
  std::uint16_t hop;  // a coupled ring channel's path crosses two links per GPU: hundreds on a large ring
};
static_assert(sizeof(PacketEvent) == 24, "events stay small: the queue moves them");

class PacketEventQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  // The earliest time queued; kNever when empty.
  SimTime top_time() const {
    if (size_ == 0) return kNever;
    if (head_ < buckets_[0].size()) return last_;
    if (!min_valid_) {
      const std::vector<PacketEvent>& b = buckets_[first_nonempty()];
      min_ = b.front().time;
      for (const PacketEvent& e : b) min_ = e.time < min_ ? e.time : min_;
      min_valid_ = true;
    }
    return min_;
  }

  // `time` is never before the last event taken.
  void push(SimTime time, PacketEventKind kind, std::int32_t a, std::int32_t b, std::uint32_t c = 0,
            std::uint16_t hop = 0, std::uint8_t ecn = 0) {
    TRAINSIM_CHECK(time >= last_, "packet event queue: an event scheduled before the last one taken");
    const std::size_t into = bucket_of(time);
    buckets_[into].push_back(PacketEvent{time, a, b, c, kind, ecn, hop});
    occupied_ |= std::uint64_t{1} << into;
    ++size_;
    if (min_valid_ && time < min_) min_ = time;
  }

  // The earliest event, the first-pushed of equal times; the queue must not be empty.
  PacketEvent pop() {
    std::vector<PacketEvent>& now = buckets_[0];
    if (head_ == now.size()) {
      now.clear();
      head_ = 0;
      const std::size_t i = first_nonempty();
      last_ = top_time();
      std::vector<PacketEvent>& from = buckets_[i];
      for (const PacketEvent& e : from) {
        const std::size_t into = bucket_of(e.time);
        buckets_[into].push_back(e);
        occupied_ |= std::uint64_t{1} << into;
      }
      from.clear();
      occupied_ &= ~(std::uint64_t{1} << i);
    }
    min_valid_ = false;
    --size_;
    return now[head_++];
  }

 private:
  std::size_t bucket_of(SimTime time) const {
    return static_cast<std::size_t>(std::bit_width(static_cast<std::uint64_t>(time ^ last_)));
  }
  // The lowest non-empty bucket above 0 (the queue holds an event outside bucket 0).
  std::size_t first_nonempty() const {
    return static_cast<std::size_t>(std::countr_zero(occupied_ & ~std::uint64_t{1}));
  }

  // Times are never negative and never before last_, so they differ from it below bit 63: buckets 0 to 63.
  std::array<std::vector<PacketEvent>, 64> buckets_;  // [0]: time == last_, taken from head_ on
  std::uint64_t occupied_ = 0;                        // bit i: bucket i may hold events (exactly, above bucket 0)
  std::size_t head_ = 0, size_ = 0;
  SimTime last_ = 0;
  mutable SimTime min_ = 0;  // the earliest time outside bucket 0, when min_valid_
  mutable bool min_valid_ = false;
};

}  // namespace trainsim
