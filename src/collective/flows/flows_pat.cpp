// PAT AllGather / ReduceScatter flows for one rank per node (NCCL src/include/collectives.h, PatAGAlgorithm /
// PatRSAlgorithm).
// Simplified: NCCL's PAT walks log2(n) dimensions; in dimension d a rank exchanges with the rank at
// distance 2^d and moves the pieces whose offset s (1 <= s < n) has lowest set bit d, so each
// piece reaches every rank exactly once ((n-1)/n of the data per rank, as for the ring). The exact
// step order / aggregation factor of NCCL's PatAGAlgorithm is not reproduced.
#include <algorithm>
#include <vector>

#include "collective/flows/flows_internal.hpp"

namespace trainsim::flows {
namespace {

// Number of s in [1, n) whose lowest set bit is d.
std::int64_t pieces_in_dim(int n, int d) {
  const std::int64_t p = std::int64_t{1} << d;
  if (p > n - 1) return 0;
  return (n - 1 - p) / (2 * p) + 1;
}

int dims_of(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

}  // namespace

void pat_flows(const CallContext& ctx, FlowDag& dag) {
  const NcclCommunicator& comm = ctx.comm;
  const int n = comm.nranks;
  const bool gather = ctx.kind == CollKind::AllGather;
  const int dims = dims_of(n);
  const NcclProtocol proto = ctx.plan.protocol;
  const std::vector<ChannelPart> parts = collective_parts(ctx, comm.nchannels > 0 ? comm.nchannels : ctx.plan.channels);
  DagBuilder b(dag);
  // AllGather sends to r - 2^d (largest distance first), ReduceScatter to r + 2^d (smallest first).
  auto peer = [&](int r, int d) { return gather ? ((r - (1 << d)) % n + n) % n : (r + (1 << d)) % n; };
  auto flow = [&](int r, int d, std::int64_t payload, std::int64_t wire, int channel, int step) {
    const int dst = peer(r, d);
    Flow f = gpu_flow(comm, r, dst, payload, wire, channel, step);
    if (f.link == LinkClass::Network) {
      f.src_net = local_nic(comm, r);
      f.dst_net = local_nic(comm, dst);
    }
    return f;
  };
  for (const ChannelPart& part : parts) {
    const CollChunking ck = chunking_for(ctx, part, 1);
    if (!ctx.per_step()) {
      const PieceTotals t = piece_totals(part.bytes, ck.chunk_bytes, proto);
      for (int d = 0; d < dims; ++d)
        for (int r = 0; r < n; ++r)
          b.add(flow(r, d, pieces_in_dim(n, d) * t.payload, pieces_in_dim(n, d) * t.wire, part.channel, -1));
      continue;
    }
    std::vector<std::uint32_t> arrived(static_cast<std::size_t>(n)), next(static_cast<std::size_t>(n));
    int step = 0;
    for (std::int64_t off = 0; off < part.bytes; off += ck.chunk_bytes) {
      const std::int64_t bytes = std::min(ck.chunk_bytes, part.bytes - off);
      std::fill(arrived.begin(), arrived.end(), kNoFlow);
      for (int i = 0; i < dims; ++i, ++step) {
        const int d = gather ? dims - 1 - i : i;
        const std::int64_t k = pieces_in_dim(n, d);
        for (int r = 0; r < n; ++r) {
          b.depend_on(arrived[static_cast<std::size_t>(r)]);  // what it forwards came in the previous dimension
          next[static_cast<std::size_t>(peer(r, d))] =
              b.add(flow(r, d, k * bytes, k * wire_bytes(bytes, proto), part.channel, step));
        }
        std::swap(arrived, next);
      }
    }
  }
  dag.channels = static_cast<int>(parts.size());
  dag.note = ctx.per_step()
                 ? "PAT PerStep (simplified dimension order): per (channel, chunk, dimension) one flow per rank"
                 : "PAT PerChannel (simplified): per (channel, dimension d) one flow per rank to the rank at "
                   "distance 2^d carrying the pieces routed through that dimension";
}

}  // namespace trainsim::flows
