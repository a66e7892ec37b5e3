#include "network/packet/switch_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"

namespace trainsim {

std::int64_t pfc_headroom_bytes(double capacity_Bps, SimTime latency, std::int32_t packet_wire_bytes) {
  const double bdp = capacity_Bps * to_seconds(latency);
  return static_cast<std::int64_t>(std::llround(2 * bdp)) + 2 * static_cast<std::int64_t>(packet_wire_bytes);
}

NoSharedPoolError::NoSharedPoolError(std::int32_t switch_id, std::int64_t size_bytes, std::int64_t headroom_bytes)
    : Error(fmt::format("packet network: switch_buffer.size_bytes: switch {}'s {} bytes leave no shared pool beside "
                        "its ports' PFC headroom ({} bytes)",
                        switch_id, size_bytes, headroom_bytes)),
      switch_id_(switch_id),
      size_bytes_(size_bytes),
      headroom_bytes_(headroom_bytes) {}

SwitchBuffer::SwitchBuffer(std::int64_t size_bytes, double alpha, std::int64_t resume_offset_bytes)
    : size_(size_bytes), alpha_(alpha), resume_offset_(resume_offset_bytes) {
  TRAINSIM_CHECK(
      size_bytes > 0 && alpha > 0 && std::isfinite(alpha) && resume_offset_bytes >= 0,
      fmt::format("switch buffer: size {} B, alpha {}, resume offset {} B", size_bytes, alpha, resume_offset_bytes));
}

int SwitchBuffer::add_ingress(std::int64_t headroom_bytes) {
  TRAINSIM_CHECK(headroom_bytes >= 0, "switch buffer: negative headroom");
  ingress_.push_back(Ingress{headroom_bytes, 0, 0});
  headroom_total_ += headroom_bytes;
  return static_cast<int>(ingress_.size() - 1);
}

std::int64_t SwitchBuffer::threshold() const {
  const std::int64_t free_pool = std::max<std::int64_t>(0, pool_bytes() - pool_used_);
  return static_cast<std::int64_t>(alpha_ * static_cast<double>(free_pool));
}

void SwitchBuffer::count(std::int64_t delta) {
  used_ += delta;
  peak_ = std::max(peak_, used_);
}

SwitchBuffer::Admission SwitchBuffer::admit(int i, std::int32_t wire) {
  Ingress& in = ingress_[static_cast<std::size_t>(i)];
  // The pool takes it while the ingress stays within the threshold and the pool has room (alpha above 1 would let
  // one ingress ask for more than is free).
  if (in.pool_used + wire <= threshold() && pool_used_ + wire <= pool_bytes()) {
    in.pool_used += wire;
    pool_used_ += wire;
    count(wire);
    return Admission::Pool;
  }
  if (in.headroom_used + wire <= in.headroom) {
    in.headroom_used += wire;
    count(wire);
    return Admission::Headroom;
  }
  return Admission::Drop;
}

void SwitchBuffer::release(int i, std::int32_t wire) {
  Ingress& in = ingress_[static_cast<std::size_t>(i)];
  // Headroom empties first, as in the ns-3 model: what arrived late is the first to be accounted as gone.
  const std::int64_t from_headroom = std::min<std::int64_t>(in.headroom_used, wire);
  const std::int64_t from_pool = wire - from_headroom;
  TRAINSIM_CHECK(from_pool <= in.pool_used, "switch buffer: an ingress released more than it holds");
  in.headroom_used -= from_headroom;
  in.pool_used -= from_pool;
  pool_used_ -= from_pool;
  count(-wire);
}

bool SwitchBuffer::should_pause(int i) const {
  const Ingress& in = ingress_[static_cast<std::size_t>(i)];
  return in.headroom_used > 0 || (in.pool_used > 0 && in.pool_used >= threshold());
}

bool SwitchBuffer::should_resume(int i) const {
  const Ingress& in = ingress_[static_cast<std::size_t>(i)];
  return in.headroom_used == 0 && (in.pool_used == 0 || in.pool_used + resume_offset_ <= threshold());
}

bool SwitchBuffer::admits_egress(std::int64_t queue_bytes, std::int32_t wire) const {
  const std::int64_t free_bytes = size_ - used_;
  return wire <= free_bytes && static_cast<double>(queue_bytes + wire) <= alpha_ * static_cast<double>(free_bytes);
}

void SwitchBuffer::take(std::int32_t wire) { count(wire); }

void SwitchBuffer::give_back(std::int32_t wire) {
  TRAINSIM_CHECK(used_ >= wire, "switch buffer: more bytes left than were taken");
  count(-wire);
}

}  // namespace trainsim
