#include "collective/p2p_model.hpp"

#include <algorithm>
#include <cmath>

#include "collective/nccl/nccl_constants.hpp"

namespace trainsim {

namespace {
using namespace nccl;

// Point-to-point traffic as NCCL's ring prices a step: the protocol's base latency plus one hop of the slowest link
// used (NVLink/PCIe or NET; no p2p entry exists in NCCL's tables), then the longer of the bytes inside the node at
// the GPU's NVLink/PCIe bandwidth and those leaving it at its NIC bandwidth, which run at once.
double p2p_time_us(double intra_bytes, double inter_bytes, bool multi, int protocol, const NcclTopology& t) {
  const int hop_hw = multi ? kHwNet : (t.ring.nvlink_intra ? kHwNvlink : kHwPci);
  const double lat_us = kBaseLat[kAlgoRing][protocol] + kHwLat[hop_hw][kAlgoRing][protocol];
  const double intra_us = t.intra_bw_per_gpu > 0 ? intra_bytes / (1000.0 * t.intra_bw_per_gpu) : 0;
  const double inter_us = t.net_bw_per_gpu > 0 ? inter_bytes / (1000.0 * t.net_bw_per_gpu) : 0;
  return lat_us + std::max(intra_us, inter_us);
}

}  // namespace

CollectiveEstimate estimate_p2p(CollKind kind, std::int64_t bytes, const NcclTopology& t) {
  CollectiveEstimate est;
  est.algorithm = NcclAlgorithm::P2P;
  const double b = static_cast<double>(bytes);
  const int n = t.nranks;
  const bool multi = t.nnodes > 1;

  // Bytes that cross NVLink/PCIe inside the node and bytes that leave through the NICs.
  double intra_bytes = 0, inter_bytes = 0, per_peer = b;
  if (kind == CollKind::SendRecv) {
    (multi ? inter_bytes : intra_bytes) = b;
  } else {  // AllToAll: B/n to every peer; ppn-1 peers share the node, n-ppn are remote
    per_peer = b / n;
    const int local_peers = std::min(t.max_per_node, n) - 1;
    intra_bytes = per_peer * local_peers;
    inter_bytes = per_peer * (n - 1 - local_peers);
  }

  // Protocol (NCCL addP2pToPlan): LL when a peer's data fits NCCL_P2P_LL_THRESHOLD on a connection with LL buffers;
  // network connections have none by default, so remote traffic is always Simple.
  const bool ll = !multi && per_peer <= kP2pLLThresholdBytes;
  est.protocol = ll ? NcclProtocol::LL : NcclProtocol::Simple;
  const int p = ll ? kProtoLL : kProtoSimple;
  const double time_us = p2p_time_us(intra_bytes, inter_bytes, multi, p, t);

  est.time = from_microseconds(time_us);
  // Channels (ncclTopoComputeP2pChannels): a remote peer gets ceil(NIC bw / 14 GB/s) channels; local peers use
  // the p2p pool.
  est.channels =
      multi ? std::max(1, static_cast<int>(std::ceil(t.net_bw_per_gpu / kP2pPerChannelNetBw))) : t.comm_channels;
  est.algbw_GBps = b / (1000.0 * time_us);
  // nccl-tests: sendrecv busbw = algbw, alltoall busbw = algbw·(n-1)/n.
  est.busbw_GBps = kind == CollKind::AllToAll ? est.algbw_GBps * (n - 1) / n : est.algbw_GBps;
  return est;
}

double token_exchange_latency_us(const NcclTopology& t) { return p2p_time_us(0, 0, t.nnodes > 1, kProtoSimple, t); }

CollectiveEstimate estimate_token_exchange(std::int64_t bytes, const TokenExchange& exchange, const NcclTopology& t) {
  CollectiveEstimate est;
  est.algorithm = NcclAlgorithm::P2P;
  est.protocol = NcclProtocol::Simple;
  if (bytes <= 0 || !exchange.on()) return est;
  const double b = static_cast<double>(bytes);
  const bool multi = t.nnodes > 1;
  const double inter_bytes = multi ? b * exchange.remote_copies : 0.0;
  const double intra_bytes = b * exchange.nvlink_copies;
  const double time_us = p2p_time_us(intra_bytes, inter_bytes, multi, kProtoSimple, t);
  est.time = from_microseconds(time_us);
  est.algbw_GBps = b / (1000.0 * time_us);
  est.busbw_GBps = est.algbw_GBps;
  return est;
}

}  // namespace trainsim
