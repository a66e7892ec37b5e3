// CollNet flows (NCCL src/device/all_reduce.h, CollNetDirect/CollNetChain): in-network (SHARP) all-reduce. The
// switches' aggregation tree is one endpoint (FlowEndpoint::Kind::InNetwork), its reduction atomic: every
// node's contribution goes up to it and the reduced block comes back down to every node.
//   CollNetChain: per channel, data climbs the channel's intra-node chain (the TREE-pattern graph) to
//     its first GPU, which sends it through the channel's NIC to the fabric, receives the reduced
//     result and passes it back down the chain.
//   CollNetDirect: every rank scatters 1/nHeads of its data straight to each local head over NVLink,
//     the heads reduce and exchange with the fabric through their own NICs, then write the result
//     back to every rank.
// CollNet tasks do not use CBD: every channel interleaves chunks over the whole buffer
// (scheduleCollTasksToPlan, loop = nChannels·nHeads·chunk), so each channel moves an equal share.
#include <algorithm>
#include <string>
#include <vector>

#include "collective/flows/flows_internal.hpp"
#include "core/error.hpp"

namespace trainsim::flows {
namespace {

FlowEndpoint fabric(int tree) { return FlowEndpoint{FlowEndpoint::Kind::InNetwork, tree}; }

Flow to_fabric(int rank, int tree, int nic, std::int64_t bytes, int channel, int step) {
  Flow f;
  f.src = gpu(rank);
  f.dst = fabric(tree);
  f.bytes = f.payload = bytes;  // CollNet is Simple only: wire = payload
  f.link = LinkClass::Network;
  f.src_net = nic;
  f.channel = channel;
  f.step = step;
  return f;
}

Flow from_fabric(int rank, int tree, int nic, std::int64_t bytes, int channel, int step) {
  Flow f = to_fabric(rank, tree, nic, bytes, channel, step);
  std::swap(f.src, f.dst);
  f.src_net = -1;
  f.dst_net = nic;
  return f;
}

// Equal shares of `bytes` in 16-byte units over `n` parts, the remainder to the first parts.
std::vector<std::int64_t> equal_shares(std::int64_t bytes, int n) {
  const std::int64_t units = (bytes + 15) / 16;
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  std::int64_t left = bytes;
  for (int i = 0; i < n; ++i) {
    const std::int64_t u = units / n + (i < units % n ? 1 : 0);
    out[static_cast<std::size_t>(i)] = std::min(left, u * 16);
    left -= out[static_cast<std::size_t>(i)];
  }
  return out;
}

// Pieces of one channel's share: the whole share (PerChannel) or chunk-sized pieces (PerStep).
std::vector<std::int64_t> pieces_of(const CallContext& ctx, std::int64_t share, int heads) {
  if (!ctx.per_step() || share == 0) return {share};
  const CollChunking ck = chunking_for(ctx, ChannelPart{0, 0, share}, heads);
  std::vector<std::int64_t> out;
  for (std::int64_t off = 0; off < share; off += ck.chunk_bytes) out.push_back(std::min(ck.chunk_bytes, share - off));
  return out;
}

int chain_nic(const NcclCommunicator& comm, int graph_channel, int head) {
  const SearchGraph& g = comm.collnet_chain_graph;
  const auto c = static_cast<std::size_t>(graph_channel);
  if (c < g.net_in.size() && g.net_in[c] >= 0) return g.net_in[c];
  return local_nic(comm, head);
}

}  // namespace

void collnet_chain_flows(const CallContext& ctx, FlowDag& dag) {
  const NcclCommunicator& comm = ctx.comm;
  const SearchGraph& g = comm.collnet_chain_graph;
  if (g.nchannels <= 0 || g.intra.empty())
    throw Error("flow generation: CollNetChain needs the communicator's chain graph");
  DagBuilder b(dag);
  const auto nodes = ranks_by_node(comm);
  const int nc = std::max(1, ctx.plan.channels);
  const auto shares = equal_shares(ctx.bytes, nc);
  const auto nn = nodes.size();
  std::vector<std::uint32_t> at_head(nn), up(nn);
  for (int c = 0; c < nc; ++c) {
    const int gc = c % g.nchannels;
    const std::vector<int>& chain = g.intra[static_cast<std::size_t>(gc)];
    const auto pieces = pieces_of(ctx, shares[static_cast<std::size_t>(c)], 1);
    for (std::size_t s = 0; s < pieces.size(); ++s) {
      const std::int64_t bytes = pieces[s];
      if (bytes == 0) continue;
      const int step = ctx.per_step() ? static_cast<int>(s) : -1;
      auto rank_at = [&](std::size_t n, std::size_t i) { return nodes[n][static_cast<std::size_t>(chain[i])]; };
      for (std::size_t n = 0; n < nn; ++n) {
        std::uint32_t prev = kNoFlow;  // the chunk reaches chain[i] (partially reduced) before it moves on
        for (std::size_t i = chain.size() - 1; i >= 1; --i) {
          if (ctx.per_step()) b.depend_on(prev);
          prev = b.add(gpu_flow(comm, rank_at(n, i), rank_at(n, i - 1), bytes, bytes, c, step));
        }
        at_head[n] = prev;
        if (ctx.per_step()) b.depend_on(prev);
        up[n] = b.add(to_fabric(rank_at(n, 0), c, chain_nic(comm, gc, rank_at(n, 0)), bytes, c, step));
      }
      for (std::size_t n = 0; n < nn; ++n) {
        if (ctx.per_step())
          for (std::uint32_t u : up) b.depend_on(u);  // the fabric reduces every node's block
        std::uint32_t prev = b.add(from_fabric(rank_at(n, 0), c, chain_nic(comm, gc, rank_at(n, 0)), bytes, c, step));
        for (std::size_t i = 1; i < chain.size(); ++i) {
          if (ctx.per_step()) b.depend_on(prev);
          prev = b.add(gpu_flow(comm, rank_at(n, i - 1), rank_at(n, i), bytes, bytes, c, step));
        }
      }
    }
  }
  dag.channels = nc;
  dag.note = ctx.per_step()
                 ? "CollNetChain PerStep: per (channel, chunk) flows up each node's chain, to and from the in-network "
                   "reduction, and down the chain, chained by arrival; the fabric waits for every node"
                 : "CollNetChain PerChannel: per channel one flow per chain hop up and down and one to / from the "
                   "in-network reduction per node, all concurrent (the chain pipelines its chunks); channels carry "
                   "equal shares (CollNet interleaves chunks over channels)";
}

void collnet_direct_flows(const CallContext& ctx, FlowDag& dag) {
  const NcclCommunicator& comm = ctx.comm;
  const auto& heads = comm.collnet_head_local;
  if (heads.empty()) throw Error("flow generation: CollNetDirect needs the communicator's direct heads");
  DagBuilder b(dag);
  const auto nodes = ranks_by_node(comm);
  const int nheads = static_cast<int>(heads.size());
  const int nc = std::max(1, ctx.plan.channels);
  // Every channel uses the same heads, so PerChannel carries all channels in one flow per
  // (rank, head); PerStep emits each channel's chunks.
  const int emitted_channels = ctx.per_step() ? nc : 1;
  const auto shares = equal_shares(ctx.bytes, emitted_channels);
  const auto nn = nodes.size();
  std::vector<std::uint32_t> up(nn);
  std::vector<std::vector<std::uint32_t>> scatter(nn);
  for (int c = 0; c < emitted_channels; ++c) {
    const auto blocks = equal_shares(shares[static_cast<std::size_t>(c)], nheads);
    for (int h = 0; h < nheads; ++h) {
      const auto pieces = pieces_of(ctx, blocks[static_cast<std::size_t>(h)], nheads);
      for (std::size_t s = 0; s < pieces.size(); ++s) {
        const std::int64_t bytes = pieces[s];
        if (bytes == 0) continue;
        const int step = ctx.per_step() ? static_cast<int>(s) * nheads + h : -1;
        for (std::size_t n = 0; n < nn; ++n) {
          const int head = nodes[n][static_cast<std::size_t>(heads[static_cast<std::size_t>(h)])];
          scatter[n].clear();
          for (int r : nodes[n])
            if (r != head) scatter[n].push_back(b.add(gpu_flow(comm, r, head, bytes, bytes, c, step)));
          if (ctx.per_step())
            for (std::uint32_t f : scatter[n]) b.depend_on(f);
          up[n] = b.add(to_fabric(head, h, local_nic(comm, head), bytes, c, step));
        }
        for (std::size_t n = 0; n < nn; ++n) {
          const int head = nodes[n][static_cast<std::size_t>(heads[static_cast<std::size_t>(h)])];
          if (ctx.per_step())
            for (std::uint32_t u : up) b.depend_on(u);
          const std::uint32_t down = b.add(from_fabric(head, h, local_nic(comm, head), bytes, c, step));
          for (int r : nodes[n]) {
            if (r == head) continue;
            if (ctx.per_step()) b.depend_on(down);
            b.add(gpu_flow(comm, head, r, bytes, bytes, c, step));
          }
        }
      }
    }
  }
  dag.channels = nc;
  dag.note =
      ctx.per_step()
          ? "CollNetDirect PerStep: per (channel, chunk, head) scatter to the head, head to / from the in-network "
            "reduction, and the head's write-back to every rank, chained by arrival"
          : "CollNetDirect PerChannel: every channel uses the same heads, so one flow per (rank, head) carries all "
            "channels: scatter to each head, each head to / from the in-network reduction, and back; concurrent";
}

}  // namespace trainsim::flows
