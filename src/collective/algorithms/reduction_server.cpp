// Reduction server AllReduce (Google Cloud, "Faster distributed training with Google Cloud's
// Reduction Server", 2021; Vertex AI Reduction Server docs). The reduction server sits below NCCL:
// a worker NODE reduces inside itself first, and only then do its NICs send the gradient to the
// reducers, once, and receive the reduced gradient back, once. With m worker nodes of q GPUs each
// (n = m·q ranks), R CPU reducers (R = `servers`, or one per worker node when 0) and S bytes:
//   1. intra-node reduce-scatter of S over NVLink (NCCL): GPU l of each node holds shard l
//      (S/q bytes) reduced over its node;
//   2. every GPU sends its shard, split over the R reducers, through the node's NICs and receives
//      the reduced shard back: a node sends S and receives S, whatever q is;
//        worker GPU: sends S/q, receives S/q over its share of the node's NICs (net_bw_GBps);
//        reducer:    receives m·S/R, sends m·S/R at nic_gbps;
//   3. intra-node all-gather of S over NVLink (NCCL).
// Phase 2's two directions use opposite halves of full-duplex links and the implementation streams
// small chunks (a reducer returns chunk c while workers are still sending chunk c+1), so it costs
// the busiest single direction:  latency_us + max( (S/q) / worker_bw , (m·S/R) / reducer_bw ).
// With one GPU per node (q = 1) phases 1 and 3 vanish: S/worker_bw, independent of the node count,
// half of ring's 2(n-1)/n·S/bw for large n (the published ~2x algbw). With q GPUs behind the node's
// NICs the network term is S / node_bw, again half of what a ring moves through those NICs, so the
// 2x holds per node too; the NVLink phases cost a few percent on top. Groups with different GPU
// counts per node (no uniform shard layout) treat every GPU as its own worker (q = 1).
#include <algorithm>
#include <cmath>
#include <string>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "core/check.hpp"
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
  if (n <= 1 || bytes <= 0)
    return make_custom_estimate(NcclAlgorithm::ReductionServer, CollKind::AllReduce, bytes, n, 0);
  if (!(ctx.net_bw_GBps > 0)) {
    throw Error("reduction_server: the cluster's per-GPU network bandwidth must be positive (got " +
                std::to_string(ctx.net_bw_GBps) + " GB/s)");
  }
  // Workers: nodes of q GPUs when every node holds the same number of the group's ranks, else GPUs.
  const bool per_node = ctx.ppn > 1 && ctx.nnodes >= 1 && ctx.ppn * ctx.nnodes == n;
  const int q = per_node ? ctx.ppn : 1;
  const int workers = per_node ? ctx.nnodes : n;
  TRAINSIM_CHECK(!per_node || ctx.nccl,
                 "reduction_server: no NCCL model to price the intra-node reduce-scatter / all-gather "
                 "(CustomAlgoContext::nccl unset)");

  const double S = static_cast<double>(bytes);
  const double shard = std::ceil(S / q);  // bytes each GPU sends (and receives) in phase 2
  const double reducer_GBps = gbps_to_bytes_per_s(rs.nic_gbps) / 1e9;
  const double worker_us = shard / (1000.0 * ctx.net_bw_GBps);
  const double reducer_us = static_cast<double>(workers) * S / servers / (1000.0 * reducer_GBps);
  SimTime total = from_microseconds(rs.latency_us + std::max(worker_us, reducer_us));
  if (per_node) {  // phases 1 and 3 inside each node, priced by NCCL on the node's GPUs
    total += ctx.nccl(CollKind::ReduceScatter, bytes, q, 1).time;
    total += ctx.nccl(CollKind::AllGather, bytes, q, 1).time;
  }
  CollectiveEstimate est =
      make_custom_estimate(NcclAlgorithm::ReductionServer, CollKind::AllReduce, bytes, n, to_microseconds(total));
  est.time = total;
  est.channels = 1;
  return est;
}

}  // namespace trainsim
