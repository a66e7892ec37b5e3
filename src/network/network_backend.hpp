#pragma once
// How the engine times a collective once every member has arrived (docs/architecture.md, `network`).
// The analytical backend is the collective layer's estimate and needs no object (the engine asks
// CollectiveModel directly); event-driven backends (flow-level, later packet-level) implement this
// interface: calls start, the network moves from event to event, and calls complete when the
// slowest of their copies has finished, so concurrent calls compete for links.
#include <cstdint>
#include <vector>

#include "core/collective_kind.hpp"
#include "core/time.hpp"

namespace trainsim {

struct CollectiveCall {
  CollKind kind = CollKind::AllReduce;
  std::int64_t bytes = 0;    // NCCL's nBytes convention (CollectiveDesc::bytes)
  std::uint32_t group = 0;   // the communicator (an index the backend was built with)
  int sender = -1;           // SendRecv on a pair: the member index that alone sends; -1 = both
  TokenExchange exchange{};  // a DeepEP token exchange (CollectiveDesc::exchange)
};

class NetworkBackend {
 public:
  virtual ~NetworkBackend() = default;
  // Call `token` (the caller's id, unique among calls in flight) starts at `now` ≥ every earlier
  // time given to this backend.
  virtual void start(SimTime now, std::uint64_t token, const CollectiveCall& call) = 0;
  // Time of the backend's next internal event (a transfer starting or finishing, a call
  // completing); kNever when nothing is in flight.
  virtual SimTime next_event() = 0;
  // Processes every internal event up to and including `t`; `completed` receives the tokens of the
  // calls that completed, in completion order (time, then token).
  virtual void advance(SimTime t, std::vector<std::uint64_t>& completed) = 0;
};

}  // namespace trainsim
