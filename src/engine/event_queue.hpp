#pragma once
// The engine's events, earliest first, ordered by (time, insertion sequence): deterministic tie-breaking.
// A simulation holds few events at once (about one per simulated rank and stream), so the queue keeps them in a
// sorted array, earliest at the back: taking the next event costs nothing and adding one moves a few cache lines,
// where a binary heap paid a sift down and up for each (a sixth of the engine's time). Past kSortedLimit events (a
// run of thousands of --per-rank ranks) it turns into a binary heap for good, and events come out the same.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/time.hpp"

namespace trainsim {

struct Event {
  SimTime time = 0;
  std::uint64_t seq = 0;
  std::uint32_t rank = 0;  // simulated-rank index
  std::uint32_t op = 0;
};

class EventQueue {
 public:
  static constexpr std::size_t kSortedLimit = 64;

  void push(SimTime t, std::uint32_t rank, std::uint32_t op) {
    const Event e{t, next_seq_++, rank, op};
    if (heap_) {
      push_heap_event(e);
      return;
    }
    if (events_.size() == kSortedLimit) {  // too many for a sorted array: a heap from now on
      heap_ = true;
      std::make_heap(events_.begin(), events_.end(), Later{});
      push_heap_event(e);
      return;
    }
    // Latest first: the events later than e stay in front of it, those of its time or earlier move one place back.
    // e's seq is the newest, so it comes out after every event of its time: only times need comparing.
    std::size_t at = events_.size();
    events_.push_back(e);
    while (at > 0 && events_[at - 1].time <= e.time) {
      events_[at] = events_[at - 1];
      --at;
    }
    events_[at] = e;
  }
  bool empty() const { return events_.empty(); }
  // The next event; the queue must not be empty.
  const Event& top() const { return heap_ ? events_.front() : events_.back(); }
  Event pop() {
    if (heap_) std::pop_heap(events_.begin(), events_.end(), Later{});
    Event e = events_.back();
    events_.pop_back();
    return e;
  }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  // A function object, not a function pointer, so that the heap's sifts inline the comparison.
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  void push_heap_event(const Event& e) {
    events_.push_back(e);
    std::push_heap(events_.begin(), events_.end(), Later{});
  }
  std::vector<Event> events_;  // sorted latest first, or a max-heap of Later (earliest at the front)
  bool heap_ = false;
  std::uint64_t next_seq_ = 0;
};

}  // namespace trainsim
