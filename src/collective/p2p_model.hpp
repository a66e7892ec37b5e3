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

// DeepEP's normal (throughput) kernels (deepseek-ai/DeepEP csrc/kernels/internode.cu, intranode.cu): a token goes
// once over RDMA to the GPU of the same local index on each destination node, which forwards it over NVLink to the
// GPUs holding its experts; the two run at once, so the call takes the longer of its NIC bytes
// (bytes x remote_copies at the GPU's NIC bandwidth) and its NVLink bytes (bytes x nvlink_copies), plus one hop's
// latency as an all-to-all does. Its own kernels, not NCCL's: algorithm P2P, protocol Simple.
CollectiveEstimate estimate_token_exchange(std::int64_t bytes, const TokenExchange& exchange, const NcclTopology& topo);
// Its fixed part: that latency alone (what a flow-level run adds to the exchange's flows).
double token_exchange_latency_us(const NcclTopology& topo);

}  // namespace trainsim
