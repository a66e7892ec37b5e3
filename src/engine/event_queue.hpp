#pragma once
// The engine's events, earliest first, ordered by (time, insertion sequence): deterministic tie-breaking.
// A simulation holds few events at once (about one per simulated rank and stream), so the queue keeps them in a
// sorted array, earliest at the back: taking the next event costs nothing and adding one moves a few cache lines,
// where a binary heap paid a sift down and up for each (a sixth of the engine's time). An event of the array is 16
// bytes: its place says its sequence, so it carries none, and each one moved is a single 16-byte copy. Past
// kSortedLimit events (a run of thousands of --per-rank ranks) it turns into a binary heap, whose entries carry their
// sequence, until it drains; events come out the same either way.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/time.hpp"

namespace trainsim {

struct Event {
  SimTime time = 0;
  std::uint32_t rank = 0;  // simulated-rank index
  std::uint32_t op = 0;
};
static_assert(sizeof(Event) == 16, "an event moves as one 16-byte copy");

class EventQueue {
 public:
  static constexpr std::size_t kSortedLimit = 64;

  void push(SimTime t, std::uint32_t rank, std::uint32_t op) {
    const Event e{t, rank, op};
    const std::uint64_t seq = pushed_++;
    if (!heap_.empty()) {
      push_heap_event({e, seq});
      return;
    }
    if (events_.size() == kSortedLimit) {  // too many for a sorted array: a heap from now on
      to_heap();
      push_heap_event({e, seq});
      return;
    }
    // Latest first: the events later than e stay in front of it, those of its time or earlier move one place back.
    // e is the newest, so it comes out after every event of its time: only times need comparing.
    std::size_t at = events_.size();
    events_.push_back(e);
    while (at > 0 && events_[at - 1].time <= e.time) {
      events_[at] = events_[at - 1];
      --at;
    }
    events_[at] = e;
  }
  bool empty() const { return events_.empty() && heap_.empty(); }
  // The next event; the queue must not be empty.
  const Event& top() const { return heap_.empty() ? events_.back() : heap_.front().event; }
  Event pop() {
    if (!heap_.empty()) {
      std::pop_heap(heap_.begin(), heap_.end(), Later{});
      const Event e = heap_.back().event;
      heap_.pop_back();
      return e;
    }
    const Event e = events_.back();
    events_.pop_back();
    return e;
  }
  std::uint64_t pushed() const { return pushed_; }

 private:
  struct Sequenced {
    Event event;
    std::uint64_t seq = 0;
  };
  // A function object, not a function pointer, so that the heap's sifts inline the comparison.
  struct Later {
    bool operator()(const Sequenced& a, const Sequenced& b) const {
      return a.event.time != b.event.time ? a.event.time > b.event.time : a.seq > b.seq;
    }
  };
  // The array's events, numbered in the order they come out (equal times in push order), become the heap's.
  void to_heap() {
    heap_.reserve(2 * kSortedLimit);
    std::uint64_t seq = 0;
    for (auto it = events_.rbegin(); it != events_.rend(); ++it) heap_.push_back({*it, seq++});
    events_.clear();
    std::make_heap(heap_.begin(), heap_.end(), Later{});
  }
  void push_heap_event(const Sequenced& s) {
    heap_.push_back(s);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  std::vector<Event> events_;    // sorted latest first, while the queue is an array
  std::vector<Sequenced> heap_;  // a max-heap of Later (earliest at the front), once it is one
  std::uint64_t pushed_ = 0;
};

}  // namespace trainsim
