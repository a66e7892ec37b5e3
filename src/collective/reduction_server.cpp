// Reduction server AllReduce (Google Cloud, "Faster distributed training with Google Cloud's
// Reduction Server", 2021; Vertex AI Reduction Server docs). n GPU workers, R CPU reducers (R =
// `servers`, or one per worker node when 0). Each worker splits its S-byte gradient into R shards,
// sends shard r to reducer r and receives the reduced shard r back:
//   worker:  sends S, receives S               (ring all-reduce: 2(n-1)/n·S each way)
//   reducer: receives n·S/R, sends n·S/R
// Sending and receiving use opposite directions of full-duplex links, and the implementation streams
// small chunks (a reducer returns chunk c while workers are still sending chunk c+1), so the
// bandwidth term is the busiest single direction of any link, not the sum of both:
//   time = latency_us + max( S / worker_bw , (n·S/R) / reducer_bw )
// worker_bw = the GPU's own network bandwidth (net_bw_GBps: GPUs share nothing here but their NIC),
// reducer_bw = nic_gbps / 8 GB/s. latency_us (one worker -> reducer -> worker round trip incl. the
// pipeline fill) does not grow with n, and with R scaled with n neither does the reducer term: the
// time is independent of the number of workers, and half of ring's 2(n-1)/n·S/bw for large n.
#include <algorithm>
#include <string>

#include "collective/custom_algorithm_parts.hpp"
#include "core/error.hpp"
#include "core/units.hpp"

namespace trainsim {

int reduction_servers_used(const ReductionServerSpec& rs, int nnodes) {
  if (rs.servers < 0) {
    throw Error("reduction_server.servers must be >= 0 (0 = one per worker node), got " + std::to_string(rs.servers));
  }
  return rs.servers > 0 ? rs.servers : std::max(nnodes, 1);
}

CollectiveEstimate estimate_reduction_server(std::int64_t bytes, const CustomAlgoContext& ctx) {
  const ReductionServerSpec& rs = ctx.reduction_server;
  const int n = ctx.nranks;
  const int servers = reduction_servers_used(rs, ctx.nnodes);
  if (!(rs.nic_gbps > 0)) {
    throw Error("reduction_server.nic_gbps must be positive, got " + std::to_string(rs.nic_gbps));
  }
  if (!(rs.latency_us >= 0)) {
    throw Error("reduction_server.latency_us must be >= 0, got " + std::to_string(rs.latency_us));
  }
  if (n <= 1 || bytes <= 0) return make_custom_estimate(NcclAlgorithm::ReductionServer, CollKind::AllReduce, bytes, n, 0);
  if (!(ctx.net_bw_GBps > 0)) {
    throw Error("reduction_server: the cluster's per-GPU network bandwidth must be positive (got " +
                std::to_string(ctx.net_bw_GBps) + " GB/s)");
  }
  const double S = static_cast<double>(bytes);
  const double reducer_GBps = gbps_to_bytes_per_s(rs.nic_gbps) / 1e9;
  const double worker_us = S / (1000.0 * ctx.net_bw_GBps);
  const double reducer_us = static_cast<double>(n) * S / servers / (1000.0 * reducer_GBps);
  CollectiveEstimate est = make_custom_estimate(NcclAlgorithm::ReductionServer, CollKind::AllReduce, bytes, n,
                                                rs.latency_us + std::max(worker_us, reducer_us));
  est.channels = 1;
  return est;
}

}  // namespace trainsim
