#pragma once
// Min-heap of events ordered by (time, insertion sequence): deterministic tie-breaking.
#include <cstdint>
#include <algorithm>
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
  void push(SimTime t, std::uint32_t rank, std::uint32_t op) {
    heap_.push_back(Event{t, next_seq_++, rank, op});
    std::push_heap(heap_.begin(), heap_.end(), Later{});
  }
  bool empty() const { return heap_.empty(); }
  const Event& top() const { return heap_.front(); }  // the next event; the queue must not be empty
  Event pop() {
    std::pop_heap(heap_.begin(), heap_.end(), Later{});
    Event e = heap_.back();
    heap_.pop_back();
    return e;
  }
  std::uint64_t pushed() const { return next_seq_; }

 private:
  // A function object, not a function pointer, so that the heap's sift loops inline the comparison.
  struct Later {
    bool operator()(const Event& a, const Event& b) const { return a.time != b.time ? a.time > b.time : a.seq > b.seq; }
  };
  std::vector<Event> heap_;
  std::uint64_t next_seq_ = 0;
};

}  // namespace trainsim
