#pragma once
// The packet network's event queue: a binary min-heap of small POD events ordered by (time,
// insertion order). The insertion order breaks ties, so equal-time events run first-scheduled
// first and a run is reproducible bit for bit. Storage is one vector that only grows: no
// allocation per packet once the heap has reached its working size.
#include <cstdint>
#include <vector>

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
};

struct PacketEvent {
  SimTime time;
  std::uint64_t order;
  std::int32_t a, b;
  std::uint32_t c;
  PacketEventKind kind;
  std::uint8_t ecn;
  std::uint16_t hop;  // a coupled ring channel's path crosses two links per GPU: hundreds on a large ring
};
static_assert(sizeof(PacketEvent) == 32, "events stay small: the heap is the hot path");

class PacketEventQueue {
 public:
  bool empty() const { return heap_.empty(); }
  std::size_t size() const { return heap_.size(); }
  SimTime top_time() const { return heap_.empty() ? kNever : heap_.front().time; }
  const PacketEvent& top() const { return heap_.front(); }

  void push(SimTime time, PacketEventKind kind, std::int32_t a, std::int32_t b, std::uint32_t c = 0,
            std::uint16_t hop = 0, std::uint8_t ecn = 0) {
    heap_.push_back(PacketEvent{time, next_order_++, a, b, c, kind, ecn, hop});
    sift_up(heap_.size() - 1);
  }

  // Floyd's pop: the hole left by the top goes down to a leaf along the smaller children (one comparison per level,
  // picked without a branch), then the last event rises from there (usually a level or two). The order of events
  // is a strict total order, so they come out in the same sequence as with any other heap.
  PacketEvent pop() {
    const PacketEvent top = heap_.front();
    const PacketEvent last = heap_.back();
    heap_.pop_back();
    const std::size_t n = heap_.size();
    if (n == 0) return top;
    std::size_t i = 0;
    for (std::size_t child = 1; child < n; child = 2 * i + 1) {
      if (child + 1 < n) child += static_cast<std::size_t>(before(heap_[child + 1], heap_[child]));
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = last;
    sift_up(i);
    return top;
  }

 private:
  static bool before(const PacketEvent& x, const PacketEvent& y) {
    return (x.time < y.time) | ((x.time == y.time) & (x.order < y.order));
  }
  void sift_up(std::size_t i) {
    const PacketEvent e = heap_[i];
    while (i > 0) {
      const std::size_t parent = (i - 1) / 2;
      if (!before(e, heap_[parent])) break;
      heap_[i] = heap_[parent];
      i = parent;
    }
    heap_[i] = e;
  }
  std::vector<PacketEvent> heap_;
  std::uint64_t next_order_ = 0;
};

}  // namespace trainsim
