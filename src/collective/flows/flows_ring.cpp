// Ring flows (NCCL src/device/all_reduce.h runRing, all_gather.h, reduce_scatter.h): AllReduce (RingTwice),
// AllGather, ReduceScatter, Broadcast (PipelineFrom, ring rotated to the root) and Reduce (PipelineTo). Ring
// position i of a channel sends to position i+1; the NET hops take their NICs / PXN proxy from the stitched
// ring.
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "collective/flows/flows_internal.hpp"
#include "core/error.hpp"

namespace trainsim::flows {
namespace {

struct RingWalker {
  const CallContext& ctx;
  const RingChannel& ring;
  int channel;
  int n;
  DagBuilder& b;

  int rank_at(std::int64_t pos) const { return ring.order[static_cast<std::size_t>(((pos % n) + n) % n)]; }

  Flow hop(int pos, std::int64_t payload, std::int64_t wire, int step) const {
    const int src = rank_at(pos), dst = rank_at(pos + 1);
    Flow f = gpu_flow(ctx.comm, src, dst, payload, wire, channel, step);
    if (f.link == LinkClass::Network) {
      const auto s = static_cast<std::size_t>(src), d = static_cast<std::size_t>(dst);
      f.src_net = s < ring.send_net.size() && ring.send_net[s] >= 0 ? ring.send_net[s] : local_nic(ctx.comm, src);
      f.dst_net = d < ring.recv_net.size() && ring.recv_net[d] >= 0 ? ring.recv_net[d] : local_nic(ctx.comm, dst);
      if (s < ring.send_proxy.size() && ring.send_proxy[s] >= 0 && ring.send_proxy[s] != src)
        f.relay = ring.send_proxy[s];
    }
    return f;
  }
};

// RingTwice: per loop, position i sends chunk (i-1-s) mod n at step s = 0..2n-3, i.e. every chunk
// once in the reduce-scatter half and every chunk but i and i+1 in the all-gather half.
void all_reduce(const RingWalker& w, const ChannelPart& part, const CollChunking& ck) {
  const int n = w.n;
  const NcclProtocol proto = w.ctx.plan.protocol;
  PartLoops loops{part.bytes, ck.chunk_bytes, 16, n};
  if (!w.ctx.per_step()) {
    std::int64_t all_payload = 0, all_wire = 0;
    std::vector<std::int64_t> payload(static_cast<std::size_t>(n)), wire(static_cast<std::size_t>(n));
    for (int k = 0; k < n; ++k) {
      payload[static_cast<std::size_t>(k)] = loops.chunk_payload_total(k);
      wire[static_cast<std::size_t>(k)] = loops.chunk_wire_total(k, proto);
      all_payload += payload[static_cast<std::size_t>(k)];
      all_wire += wire[static_cast<std::size_t>(k)];
    }
    for (int i = 0; i < n; ++i) {
      const auto a = static_cast<std::size_t>(i), c = static_cast<std::size_t>((i + 1) % n);
      const std::int64_t p = 2 * all_payload - payload[a] - payload[c];
      const std::int64_t x = 2 * all_wire - wire[a] - wire[c];
      if (p > 0) w.b.add(w.hop(i, p, x, -1));
    }
    return;
  }
  const int steps = 2 * (n - 1);
  std::vector<std::uint32_t> prev(static_cast<std::size_t>(n), kNoFlow), cur(prev);
  for (std::int64_t loop = 0; loop < loops.loops(); ++loop) {
    for (int s = 0; s < steps; ++s) {
      for (int i = 0; i < n; ++i) {
        const int k = (((i - 1 - s) % n) + n) % n;
        const std::int64_t bytes = loops.chunk_bytes(loop, k);
        auto& slot = cur[static_cast<std::size_t>(i)];
        slot = kNoFlow;
        if (bytes == 0) continue;
        // The chunk arrived from position i-1 in the previous step.
        if (s > 0) w.b.depend_on(prev[static_cast<std::size_t>((i - 1 + n) % n)]);
        slot = w.b.add(w.hop(i, bytes, wire_bytes(bytes, proto), static_cast<int>(loop * steps + s)));
      }
      std::swap(prev, cur);
    }
  }
}

// AllGather / ReduceScatter: per loop every position sends n-1 pieces of min(chunk, rest) bytes.
void all_gather_like(const RingWalker& w, const ChannelPart& part, const CollChunking& ck) {
  const int n = w.n;
  const NcclProtocol proto = w.ctx.plan.protocol;
  if (!w.ctx.per_step()) {
    const PieceTotals t = piece_totals(part.bytes, ck.chunk_bytes, proto);
    for (int i = 0; i < n; ++i) w.b.add(w.hop(i, (n - 1) * t.payload, (n - 1) * t.wire, -1));
    return;
  }
  std::vector<std::uint32_t> prev(static_cast<std::size_t>(n), kNoFlow), cur(prev);
  int step = 0;
  for (std::int64_t off = 0; off < part.bytes; off += ck.chunk_bytes) {
    const std::int64_t bytes = std::min(ck.chunk_bytes, part.bytes - off);
    for (int s = 0; s < n - 1; ++s, ++step) {
      for (int i = 0; i < n; ++i) {
        if (s > 0) w.b.depend_on(prev[static_cast<std::size_t>((i - 1 + n) % n)]);
        cur[static_cast<std::size_t>(i)] = w.b.add(w.hop(i, bytes, wire_bytes(bytes, proto), step));
      }
      std::swap(prev, cur);
    }
  }
}

// Broadcast / Reduce: a pipeline of n-1 hops starting at `first_pos`, chunk by chunk.
void pipeline(const RingWalker& w, const ChannelPart& part, const CollChunking& ck, int first_pos) {
  const int n = w.n;
  const NcclProtocol proto = w.ctx.plan.protocol;
  if (!w.ctx.per_step()) {
    const PieceTotals t = piece_totals(part.bytes, ck.chunk_bytes, proto);
    for (int j = 0; j < n - 1; ++j) w.b.add(w.hop(first_pos + j, t.payload, t.wire, -1));
    return;
  }
  int loop = 0;
  for (std::int64_t off = 0; off < part.bytes; off += ck.chunk_bytes, ++loop) {
    const std::int64_t bytes = std::min(ck.chunk_bytes, part.bytes - off);
    std::uint32_t last = kNoFlow;
    for (int j = 0; j < n - 1; ++j) {
      w.b.depend_on(last);
      last = w.b.add(w.hop(first_pos + j, bytes, wire_bytes(bytes, proto), loop * (n - 1) + j));
    }
  }
}

}  // namespace

void ring_flows(const CallContext& ctx, FlowDag& dag) {
  const NcclCommunicator& comm = ctx.comm;
  const int n = comm.nranks;
  const int budget = comm.nchannels > 0 ? comm.nchannels : static_cast<int>(comm.rings.size());
  const std::vector<ChannelPart> parts = collective_parts(ctx, budget);
  DagBuilder b(dag);
  for (const ChannelPart& part : parts) {
    if (part.channel >= static_cast<int>(comm.rings.size()))
      throw Error("flow generation: ring channel " + std::to_string(part.channel) + " missing from the communicator (" +
                  std::to_string(comm.rings.size()) + " rings)");
    const RingChannel& ring = comm.rings[static_cast<std::size_t>(part.channel)];
    if (static_cast<int>(ring.order.size()) != n)
      throw Error("flow generation: ring channel " + std::to_string(part.channel) + " does not list every rank");
    const CollChunking ck = chunking_for(ctx, part, 1);
    const RingWalker w{ctx, ring, part.channel, n, b};
    int root_pos = 0;
    for (int i = 0; i < n; ++i)
      if (ring.order[static_cast<std::size_t>(i)] == ctx.root) root_pos = i;
    switch (ctx.kind) {
      case CollKind::AllReduce: all_reduce(w, part, ck); break;
      case CollKind::AllGather:
      case CollKind::ReduceScatter: all_gather_like(w, part, ck); break;
      case CollKind::Broadcast: pipeline(w, part, ck, root_pos); break;   // root sends first
      case CollKind::Reduce: pipeline(w, part, ck, root_pos + 1); break;  // ends at the root
      default: throw Error("flow generation: Ring does not run this collective");
    }
  }
  dag.channels = static_cast<int>(parts.size());
  dag.note =
      ctx.per_step()
          ? "Ring PerStep: one flow per (channel, loop, step, hop); each depends on the flow that delivered its "
            "chunk to the sender in the previous step"
          : "Ring PerChannel: one flow per (channel, ring hop) carrying all chunks of that channel over the hop; "
            "hops of a channel run concurrently (pipeline fill not included)";
}

}  // namespace trainsim::flows
