#pragma once
// Per-link statistics of a flow-level run: what the report prints per link (`--links-csv`) and
// what tells a user which links were the bottleneck.
#include <cstdint>

#include "core/time.hpp"

namespace trainsim {

struct LinkStats {
  double bytes_carried = 0;     // finished flows in full plus the in-flight flows' progress so far
  SimTime busy_time = 0;        // time with at least one flow on the link (stalled flows included)
  std::int32_t peak_flows = 0;  // most flows on the link at once
  // bytes_carried / ∫ capacity dt over [network start, now]: 1 means saturated the whole time.
  // The integral follows capacity changes; 0 when the link never had capacity.
  double utilisation = 0;
};

// Running totals for one link, updated as flows come and go and as its capacity changes.
class LinkUsage {
 public:
  LinkUsage(double capacity_Bps, SimTime start) : capacity_(capacity_Bps), capacity_since_(start) {}

  void flow_added(SimTime now) {
    if (flows_now_++ == 0) busy_since_ = now;
    if (flows_now_ > peak_flows_) peak_flows_ = flows_now_;
  }
  void flow_removed(SimTime now, std::int64_t bytes_finished) {
    finished_bytes_ += bytes_finished;
    if (--flows_now_ == 0) busy_ += now - busy_since_;
  }
  void capacity_changed(double capacity_Bps, SimTime now) {
    capacity_time_ += capacity_ * static_cast<double>(now - capacity_since_);
    capacity_ = capacity_Bps;
    capacity_since_ = now;
  }
  double capacity() const { return capacity_; }

  // The statistics at `now`, given the bytes the flows still on the link have moved so far.
  LinkStats at(SimTime now, double in_flight_bytes) const {
    LinkStats s;
    s.bytes_carried = static_cast<double>(finished_bytes_) + in_flight_bytes;
    s.busy_time = busy_ + (flows_now_ > 0 ? now - busy_since_ : 0);
    s.peak_flows = peak_flows_;
    const double capacity_bytes = (capacity_time_ + capacity_ * static_cast<double>(now - capacity_since_)) /
                                  static_cast<double>(kPicosPerSecond);
    s.utilisation = capacity_bytes > 0 ? s.bytes_carried / capacity_bytes : 0.0;
    return s;
  }

 private:
  double capacity_;
  SimTime capacity_since_;
  double capacity_time_ = 0;  // ∫ capacity dt before capacity_since_, in bytes/s × ps
  std::int64_t finished_bytes_ = 0;
  SimTime busy_ = 0, busy_since_ = 0;
  std::int32_t flows_now_ = 0, peak_flows_ = 0;
};

}  // namespace trainsim
