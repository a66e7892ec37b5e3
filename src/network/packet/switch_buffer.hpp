#pragma once
// One switch's packet buffer, shared by all its ports, with dynamic thresholds (docs/packet-network.md, "Switch
// buffers"). Real switches (Broadcom's Tomahawk, NVIDIA's Spectrum) do not give each port a fixed slice: every
// ingress and egress draws on one pool, and a queue may grow while it stays below alpha x the pool still free
// (Choudhury and Hahne, "Dynamic queue length thresholds for shared-memory packet switches", IEEE/ACM ToN 1998).
// A busy port thus gets much of the buffer when the others are idle and less as they fill.
//
// Lossless (PFC), per ingress port, the way the HPCC paper's ns-3 RDMA model accounts it (SwitchMmu:
// UpdateIngressAdmission, CheckShouldPause, CheckShouldResume, GetPfcThreshold):
//  - the pool is the buffer less the headroom every lossless ingress keeps for what is still on its wire when it
//    pauses its sender; threshold T = alpha x (pool - bytes of the pool in use);
//  - a packet joins the pool while its ingress's pool bytes stay within T, else its ingress's headroom; when the
//    headroom is full too it is dropped (headroom too small for the link: a misconfiguration a real switch shows
//    the same way);
//  - the ingress pauses its sender once it holds headroom bytes or its pool bytes reach T, and resumes when its
//    headroom is empty and its pool bytes are 0 or `resume_offset` below T.
// Lossy, per egress queue: a packet is dropped when the buffer is full or its queue would pass alpha x the free
// buffer.
#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "core/time.hpp"

namespace trainsim {

// The headroom an ingress needs so that PFC loses nothing: after the switch decides to pause, the PAUSE crosses
// the link (latency), the sender finishes the packet it is serializing, and what was already on the wire arrives
// (latency again) behind the packet that crossed the threshold: 2 x the link's bandwidth-delay product plus two
// packets (the sizing rule of NVIDIA's and Cisco's PFC headroom guides, without cable-length margins).
std::int64_t pfc_headroom_bytes(double capacity_Bps, SimTime latency, std::int32_t packet_wire_bytes);

// A switch whose ports' PFC headroom leaves its buffer no shared pool (PacketNetwork::seal_links): the caller names
// the switch and the setting.
class NoSharedPoolError : public Error {
 public:
  NoSharedPoolError(std::int32_t switch_id, std::int64_t size_bytes, std::int64_t headroom_bytes);
  std::int32_t switch_id() const { return switch_id_; }
  std::int64_t size_bytes() const { return size_bytes_; }
  std::int64_t headroom_bytes() const { return headroom_bytes_; }

 private:
  std::int32_t switch_id_;
  std::int64_t size_bytes_, headroom_bytes_;
};

class SwitchBuffer {
 public:
  enum class Admission : std::uint8_t { Pool, Headroom, Drop };

  // `size_bytes` > 0; `alpha` > 0; `resume_offset_bytes` >= 0.
  SwitchBuffer(std::int64_t size_bytes, double alpha, std::int64_t resume_offset_bytes);

  // A lossless ingress keeping `headroom_bytes` (>= 0) of the buffer; returns its index. The headroom of every
  // ingress must leave a pool of at least a packet (checked by the caller before the first packet).
  int add_ingress(std::int64_t headroom_bytes);
  std::int64_t pool_bytes() const { return size_ - headroom_total_; }

  // Lossless: a packet of `wire` bytes arriving over ingress `i`; Pool and Headroom take its bytes.
  Admission admit(int i, std::int32_t wire);
  // It left the switch (its egress port sent it).
  void release(int i, std::int32_t wire);
  bool should_pause(int i) const;
  bool should_resume(int i) const;

  // Lossy: whether a packet of `wire` bytes may join an egress queue holding `queue_bytes`; take() when it does,
  // give_back() when it leaves.
  bool admits_egress(std::int64_t queue_bytes, std::int32_t wire) const;
  void take(std::int32_t wire);
  void give_back(std::int32_t wire);

  std::int64_t threshold() const;  // T of the lossless pool
  std::int64_t used_bytes() const { return used_; }
  std::int64_t peak_bytes() const { return peak_; }
  std::int64_t headroom_bytes_used(int i) const { return ingress_[static_cast<std::size_t>(i)].headroom_used; }
  std::int64_t pool_bytes_used(int i) const { return ingress_[static_cast<std::size_t>(i)].pool_used; }

 private:
  struct Ingress {
    std::int64_t headroom = 0, headroom_used = 0, pool_used = 0;
  };
  void count(std::int64_t delta);

  std::int64_t size_;
  double alpha_;
  std::int64_t resume_offset_;
  std::int64_t headroom_total_ = 0;
  std::int64_t pool_used_ = 0;  // lossless: bytes of the pool in use, over every ingress
  std::int64_t used_ = 0, peak_ = 0;
  std::vector<Ingress> ingress_;
};

}  // namespace trainsim
