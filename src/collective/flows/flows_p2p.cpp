// Point-to-point flows (NCCL src/enqueue.cc): AllToAll as n Send/Recv pairs per rank in the
// init.cc ncclP2pSchedule round order, SendRecv to the ring neighbour, and single sends. Each (peer, round) is
// cut into parts on p2p channels (scheduleP2pTasksToPlan / addP2pToPlan: nChannelsMin/Max, min/max part size,
// 4 KiB-aligned parts, bit-reversed channel base per round), LL below 16 KiB per channel on LL-capable
// (intra-node) connections, and network sends relayed through the remote peer's local-index twin (PXN), each part
// on its channel's NIC.
#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "collective/flows/flows_internal.hpp"
#include "core/error.hpp"

namespace trainsim::flows {
namespace {

constexpr std::int64_t kP2pLLThreshold = 16384;   // NCCL_P2P_LL_THRESHOLD
constexpr std::int64_t kP2pNvlChunk = 512 << 10;  // NCCL_P2P_NVL_CHUNKSIZE
constexpr std::int64_t kP2pPciChunk = 128 << 10;  // NCCL_P2P_PCI_CHUNKSIZE
constexpr int kP2pPerBatch = 8;                   // NCCL_MAX_DEV_WORK_P2P_PER_BATCH

int pow2_up(int x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}
int log2_of(int pow2) {
  int l = 0;
  while ((1 << l) < pow2) ++l;
  return l;
}
int reverse_bits(int v, int bits) {
  int r = 0;
  for (int i = 0; i < bits; ++i)
    if (v & (1 << i)) r |= 1 << (bits - 1 - i);
  return r;
}

struct P2pParams {
  int nchannels = 1;     // p2pnChannels (power of two)
  int per_peer_max = 1;  // p2pnChannelsPerPeer
  int per_peer_min = 1;
  std::int64_t chunk = 0;  // comm->p2pChunkSize
  bool multi_node = false;
  int pxn_level = 2;
  std::vector<std::vector<int>> nodes;
  std::vector<RankChannelNics> nics;  // by rank: the NIC of each p2p channel
};

P2pParams p2p_params(const NcclCommunicator& comm, const FlowOptions& o) {
  P2pParams p;
  p.multi_node = comm.nnodes > 1;
  p.nchannels = pow2_up(std::max(1, comm.p2p_nchannels > 0 ? comm.p2p_nchannels : comm.nchannels));
  p.per_peer_max = std::min(p.nchannels, pow2_up(std::max(1, comm.p2p_channels_per_peer)));
  p.per_peer_min = p.per_peer_max;
  while (p.per_peer_min * comm.nranks > p.nchannels && p.per_peer_min > 1) p.per_peer_min /= 2;
  p.nodes = ranks_by_node(comm);
  if (p.multi_node) {
    p.chunk = o.p2p_net_chunksize;
  } else {
    bool all_nvlink = true;  // comm->isAllNvlink
    const auto& ranks = p.nodes[0];
    for (std::size_t a = 0; a < ranks.size() && all_nvlink; ++a)
      for (std::size_t b = 0; b < ranks.size(); ++b)
        if (a != b && ranks[a] >= 0 && ranks[b] >= 0 && gpu_link(comm, ranks[a], ranks[b]) != LinkClass::NVLink) {
          all_nvlink = false;
          break;
        }
    p.chunk = all_nvlink ? kP2pNvlChunk : kP2pPciChunk;
  }
  p.chunk = std::min(p.chunk, o.buffsize / 8);
  p.pxn_level = o.p2p_pxn_level;
  if (p.multi_node) p.nics = channel_nics_by_rank(comm);
  return p;
}

int channel_base(const NcclCommunicator& comm, const P2pParams& p, int round) {
  int base = round;
  if (p.multi_node) {
    const int g = comm.p2p_group_size;  // rounds towards one group of GPUs share a base (addP2pToPlan)
    base = (round / g) * ((g + kP2pPerBatch - 1) / kP2pPerBatch) + (round % g) / kP2pPerBatch;
  }
  return reverse_bits(base, log2_of(p.nchannels));
}

// One send of `bytes` from src to dst in schedule round `round` (NCCL src/enqueue.cc, addP2pToPlan).
void emit_send(const NcclCommunicator& comm, const P2pParams& p, const FlowOptions& o, int src, int dst,
               std::int64_t bytes, int round, DagBuilder& b) {
  if (src == dst || bytes <= 0) return;
  const bool network = comm.node_of[static_cast<std::size_t>(src)] != comm.node_of[static_cast<std::size_t>(dst)];
  const std::int64_t min_part = p.multi_node ? p.chunk / 2 : p.chunk / 8;
  const std::int64_t max_part = p.multi_node ? p.chunk : p.chunk * 32;
  int nch = static_cast<int>(std::min<std::int64_t>(p.per_peer_min, (bytes + min_part - 1) / min_part));
  std::int64_t part_size = std::max(min_part, (bytes + nch - 1) / nch);
  while (part_size > max_part && nch <= p.per_peer_max / 2) {
    nch *= 2;
    part_size = (bytes + nch - 1) / nch;
  }
  // Network connections have no LL buffers (NCCL_ALLOC_P2P_NET_LL_BUFFERS=0).
  const bool ll = !network && bytes <= nch * kP2pLLThreshold;
  const NcclProtocol proto = ll ? NcclProtocol::LL : NcclProtocol::Simple;
  std::int64_t chunk = ll ? kLLStepBytes / 2 : p.chunk;  // payload per proxy step
  if (network && !ll) {
    if (bytes < p.chunk)
      chunk /= 4;
    else if (bytes < 8 * p.chunk)
      chunk /= 2;
  }
  const std::int64_t part_bytes = ((bytes + nch - 1) / nch + 4095) / 4096 * 4096;
  const int base = channel_base(comm, p, round);
  int relay = -1;
  if (network && p.pxn_level == 2) {
    const auto& mine = p.nodes[static_cast<std::size_t>(comm.node_of[static_cast<std::size_t>(src)])];
    const auto twin_local = static_cast<std::size_t>(comm.local_of[static_cast<std::size_t>(dst)]);
    if (twin_local < mine.size() && mine[twin_local] >= 0 && mine[twin_local] != src) relay = mine[twin_local];
  }
  for (int part = 0; part < nch; ++part) {
    const std::int64_t beg = std::min<std::int64_t>(part * part_bytes, bytes);
    const std::int64_t end = std::min<std::int64_t>((part + 1) * part_bytes, bytes);
    if (end <= beg) continue;
    const int channel = (base + part) & (p.nchannels - 1);
    auto make = [&](std::int64_t payload, std::int64_t wire, int step) {
      Flow f = gpu_flow(comm, src, dst, payload, wire, channel, step);
      if (f.link == LinkClass::Network) {
        // Each channel's part leaves on that channel's NIC of the GPU that puts it on the network (the PXN relay
        // or the sender) and arrives on the receiver's NIC of the channel: a GPU with several local NICs spreads
        // its parts over them (ncclTopoGetLocalNet per channel). Receives are always local.
        f.relay = relay;
        f.src_net = p.nics[static_cast<std::size_t>(relay >= 0 ? relay : src)].at(channel);
        f.dst_net = p.nics[static_cast<std::size_t>(dst)].at(channel);
      }
      return f;
    };
    if (o.granularity == FlowGranularity::PerStep) {
      int step = 0;
      for (std::int64_t off = beg; off < end; off += chunk, ++step) {
        const std::int64_t m = std::min(chunk, end - off);
        b.add(make(m, wire_bytes(m, proto), step));
      }
    } else {
      const PieceTotals t = piece_totals(end - beg, chunk, proto);
      b.add(make(t.payload, t.wire, -1));
    }
  }
}

}  // namespace

void p2p_collective_flows(const CallContext& ctx, FlowDag& dag) {
  const NcclCommunicator& comm = ctx.comm;
  const int n = comm.nranks;
  const P2pParams p = p2p_params(comm, ctx.options);
  DagBuilder b(dag);
  if (ctx.kind == CollKind::AllToAll) {
    const std::int64_t per_peer = ctx.bytes / n;
    for (int r = 0; r < n; ++r) {
      const std::vector<int> peers = comm.p2p_send_peer(r);
      for (int round = 0; round < n; ++round)
        emit_send(comm, p, ctx.options, r, peers[static_cast<std::size_t>(round)], per_peer, round, b);
    }
  } else {
    for (int r = 0; r < n; ++r) {
      const int dst = (r + 1) % n;
      const std::vector<int> peers = comm.p2p_send_peer(r);
      const int round = static_cast<int>(std::find(peers.begin(), peers.end(), dst) - peers.begin());
      emit_send(comm, p, ctx.options, r, dst, ctx.bytes, round, b);
    }
  }
  dag.channels = p.nchannels;
  dag.note = ctx.per_step() ? "P2P PerStep: one flow per (sender, peer, part, proxy chunk); rounds not serialised"
                            : "P2P PerChannel: one flow per (sender, peer, part) on its p2p channel; all rounds "
                              "concurrent (NCCL runs up to 8 p2p works per channel at once)";
}

void p2p_send_flows(const NcclCommunicator& comm, int src, int dst, std::int64_t bytes, const FlowOptions& options,
                    FlowDag& dag) {
  const P2pParams p = p2p_params(comm, options);
  const std::vector<int> peers = comm.p2p_send_peer(src);
  const int round = static_cast<int>(std::find(peers.begin(), peers.end(), dst) - peers.begin());
  DagBuilder b(dag);
  emit_send(comm, p, options, src, dst, bytes, round, b);
  dag.channels = p.nchannels;
  dag.note = options.granularity == FlowGranularity::PerStep ? "Send PerStep: one flow per (part, proxy chunk)"
                                                             : "Send PerChannel: one flow per part (p2p channel)";
}

void token_exchange_flows(const NcclCommunicator& comm, std::int64_t bytes, const TokenExchange& x, FlowDag& dag) {
  const std::vector<std::vector<int>> nodes = ranks_by_node(comm);
  const double b = static_cast<double>(bytes);
  DagBuilder builder(dag);
  for (int r = 0; r < comm.nranks; ++r) {
    const auto node = static_cast<std::size_t>(comm.node_of[static_cast<std::size_t>(r)]);
    const auto local = static_cast<std::size_t>(comm.local_of[static_cast<std::size_t>(r)]);
    const auto& mine = nodes[node];
    const auto peers_here =
        static_cast<double>(std::count_if(mine.begin(), mine.end(), [&](int g) { return g >= 0 && g != r; }));
    for (const int g : mine) {  // NVLink: the copies forwarded inside the node, even over its other GPUs
      if (g < 0 || g == r || peers_here <= 0) continue;
      const auto payload = static_cast<std::int64_t>(std::llround(b * x.nvlink_copies / peers_here));
      if (payload > 0) builder.add(gpu_flow(comm, r, g, payload, payload, 0, -1));
    }
    const auto other_nodes = static_cast<double>(nodes.size() - 1);
    for (std::size_t h = 0; h < nodes.size(); ++h) {  // RDMA: to the same local index on each other node
      if (h == node || local >= nodes[h].size() || nodes[h][local] < 0) continue;
      const int twin = nodes[h][local];
      const auto payload = static_cast<std::int64_t>(std::llround(b * x.remote_copies / other_nodes));
      if (payload <= 0) continue;
      Flow f = gpu_flow(comm, r, twin, payload, payload, 0, -1);
      f.src_net = local_nic(comm, r);
      f.dst_net = local_nic(comm, twin);
      builder.add(f);
    }
  }
  dag.channels = 1;
  dag.note =
      "DeepEP exchange: one flow per (sender, peer); network copies to each other node's same-index GPU, "
      "NVLink copies to the node's other GPUs, all at once";
}

}  // namespace trainsim::flows
