#pragma once
// A FIFO ring buffer that doubles when full: an egress port's queued packets and a NIC port's
// ready queue pairs allocate only while they reach a new peak, never per packet.
#include <cstdint>
#include <vector>

#include "core/time.hpp"

namespace trainsim {

template <class T>
class RingQueue {
 public:
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }
  const T& front() const { return buf_[head_]; }

  void push(const T& v) {
    if (size_ == buf_.size()) grow();
    buf_[(head_ + size_) & (buf_.size() - 1)] = v;
    ++size_;
  }
  T pop() {
    const T v = buf_[head_];
    head_ = (head_ + 1) & (buf_.size() - 1);
    --size_;
    return v;
  }

 private:
  void grow() {
    std::vector<T> bigger(buf_.empty() ? 16 : 2 * buf_.size());
    for (std::size_t i = 0; i < size_; ++i) bigger[i] = buf_[(head_ + i) & (buf_.size() - 1)];
    buf_.swap(bigger);
    head_ = 0;
  }

  std::vector<T> buf_;  // size is 0 or a power of two
  std::size_t head_ = 0, size_ = 0;
};

// A packet waiting in an egress FIFO (or being serialized).
struct QueuedPacket {
  std::int32_t flow, seq;
  std::uint16_t hop;   // index of this port's link on the packet's route
  std::uint8_t ecn;    // marked congestion-experienced on the way
  std::uint8_t route;  // which of the flow's routes it takes (0 for a flow with one)
};

// A packet on a link's wire: it reaches the link's far end at `at`.
struct OnWire {
  SimTime at;
  QueuedPacket packet;
};

}  // namespace trainsim
