#pragma once
// What moves a transfer's bytes over its path once the backend has routed it: the max-min fair flow
// network (flow/flow_network.hpp) or the packet network (packet/). FlowBackend turns collectives into
// routed transfers and drives one of these; both see the same links (capacity in bytes/s, latency)
// and the same paths, so a scenario can switch `simulation.network_model` and nothing else changes.
#include <cstdint>
#include <span>
#include <vector>

#include "core/time.hpp"
#include "network/link_usage.hpp"
#include "network/network_types.hpp"

namespace trainsim {

class TransferNetwork {
 public:
  virtual ~TransferNetwork() = default;
  // What the caller waits before starting a transfer on `path`: the propagation the network itself does
  // not model (the flow network moves bytes at a rate and leaves the links' latency to the caller; a packet
  // network carries each packet across each link's latency itself and returns 0).
  virtual SimTime delay_before_start(std::span<const LinkId> path) const = 0;
  // A transfer of `bytes` over `path` (no link twice) starts at `now`, at most at `rate_cap_Bps`. Its id
  // stays valid until it is reported finished.
  virtual FlowId start(SimTime now, std::span<const LinkId> path, std::int64_t bytes,
                       double rate_cap_Bps = kUnlimitedRate) = 0;
  // From `now` on, `link` carries `capacity_Bps` (0 = down).
  virtual void set_capacity(LinkId link, double capacity_Bps, SimTime now) = 0;
  // The earliest time something inside the network happens (a transfer finishing, for a packet network
  // also a packet moving); kNever when nothing is in flight or all is stalled.
  virtual SimTime next_completion() = 0;
  // Moves to `t`, handing out in `finished` the transfers done since the last call, by (finish time, id).
  virtual void advance(SimTime t, std::vector<FlowId>& finished) = 0;
  virtual std::vector<LinkStats> link_statistics() const = 0;
};

}  // namespace trainsim
