#pragma once
// AllToAll and SendRecv go through NCCL's point-to-point engine (NCCL src/enqueue.cc, scheduleP2pTasksToPlan):
// no algorithm choice, only LL vs Simple per operation. This first version prices them like the
// collectives: a latency plus the bytes over the bottleneck link.
#include <cstdint>

#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_topology.hpp"

namespace trainsim {

// `bytes`: SendRecv = bytes in one direction (both directions run at once on separate link
// directions); AllToAll = one rank's whole send buffer, of which (n-1)/n leaves the GPU.
CollectiveEstimate estimate_p2p(CollKind kind, std::int64_t bytes, const NcclTopology& topo);

}  // namespace trainsim
