// Communicator construction after the per-node searches (NCCL's init.cc initTransportsRank, graph/connect.cc
// ncclTopoPreset/Postset, graph/paths.cc p2p channel counts, transport/nvls.cc ncclNvlsTuning). Everything is
// computed once per node or once per (channel, node) so a communicator over thousands of nodes costs
// O(nranks · channels).
#include "collective/nccl/nccl_communicator.hpp"
#include "collective/nccl/nccl_constants.hpp"

#include <algorithm>
#include <numeric>
#include <string>

#include "core/error.hpp"
#include "core/index.hpp"

namespace trainsim {
namespace {

using nccl::kMaxChannels;
// NCCL_P2P_PER_CHANNEL_NET_BW as the integer NCCL divides by (GB/s).
constexpr int kP2pChannelNetBwInt = static_cast<int>(nccl::kP2pPerChannelNetBw);
constexpr int kP2pWorkPerBatch = 8;        // NCCL_MAX_DEV_WORK_P2P_PER_BATCH
constexpr int kNvlsChannelsSm90 = 16;      // NVLS_NCHANNELS_SM90
constexpr int kNvlsChannelsSm100 = 32;     // NVLS_NCHANNELS_SM100 (multi-node)
constexpr int kNvlsChannelsSm100Nvl = 24;  // NVLS_NCHANNELS_SM100_NVL (single node)
constexpr double kSm90DoublingBwIntra = 45.0;
constexpr int kCollNetNodeThreshold = 2;  // NCCL_COLLNET_NODE_THRESHOLD

[[noreturn]] void fail(const std::string& what) { throw Error("nccl communicator: " + what); }

int pow2_up(int v) {
  int p = 1;
  while (p < v) p <<= 1;
  return p;
}

// The final channel list is built by NCCL by copying channel structs: first the tree duplication,
// then cyclic copies (copyChannels). We track for every channel which duplicated channel it copies.
void copy_channels(std::vector<int>& copy_of, int end) {
  const int start = static_cast<int>(copy_of.size());
  for (int c = start; c < end; ++c) copy_of.push_back(copy_of[idx(c - start)]);
}

void check_chain(const std::vector<std::vector<int>>& intra, int c, int ppn, int node, const char* what) {
  if (c >= static_cast<int>(intra.size()))
    fail(std::string(what) + " graph of node " + std::to_string(node) + " lists no GPUs for channel " +
         std::to_string(c));
  const auto& chain = intra[idx(c)];
  std::vector<char> seen(idx(ppn), 0);
  bool ok = static_cast<int>(chain.size()) == ppn;
  for (int g : chain) {
    if (!ok) break;
    if (g < 0 || g >= ppn || seen[idx(g)])
      ok = false;
    else
      seen[idx(g)] = 1;
  }
  if (!ok)
    fail(std::string(what) + " graph of node " + std::to_string(node) + " channel " + std::to_string(c) +
         " is not an ordering of the node's " + std::to_string(ppn) + " GPUs");
}

// The cross-node reconciliation of one pattern (AllGather #3): min channels / bandwidths /
// sameChannels, max path types and crossNic. The channel lists stay node 0's.
SearchGraph reconcile(const std::vector<NodeGraphs>& graphs, SearchGraph NodeGraphs::*which) {
  SearchGraph g = graphs.front().*which;
  for (const auto& node : graphs) {
    const SearchGraph& o = node.*which;
    g.nchannels = std::min(g.nchannels, o.nchannels);
    g.same_channels = g.same_channels && o.same_channels;
    g.bw_intra = std::min(g.bw_intra, o.bw_intra);
    g.bw_inter = std::min(g.bw_inter, o.bw_inter);
    g.type_intra = std::max(g.type_intra, o.type_intra);
    g.type_inter = std::max(g.type_inter, o.type_inter);
    g.cross_nic = std::max(g.cross_nic, o.cross_nic);
  }
  return g;
}

void truncate_channels(SearchGraph& g) {
  const auto n = idx(std::max(g.nchannels, 0));
  if (g.intra.size() > n) g.intra.resize(n);
  if (g.net_in.size() > n) g.net_in.resize(n);
  if (g.net_out.size() > n) g.net_out.resize(n);
}

// ncclTopoGetNetDev with a graph: the NIC of graph channel `channel` for a GPU — the entry NET when
// the GPU is the channel's first, else the exit NET.
int graph_net(const SearchGraph& g, const NodeTopology& topo, int channel, int local, int node, const char* what) {
  const auto c = idx(channel);
  const bool first = g.intra[c].front() == local;
  const std::vector<int>& nets = first ? g.net_in : g.net_out;
  const int net = c < nets.size() ? nets[c] : -1;
  if (net < 0 || net >= static_cast<int>(topo.nets.size()))
    fail(std::string(what) + " graph of node " + std::to_string(node) + " channel " + std::to_string(channel) +
         " has no valid NIC for a multi-node communicator");
  return net;
}

// ncclTopoGetIntermediateRank: when the GPU reaches the NIC through PXN, the GPU the path relays
// through (its proxy drives the NIC); else the GPU itself. Local ranks.
int pxn_intermediate(const NodeTopology& topo, int gpu, int net) {
  const TopoPath& path = topo.gpu_to_net(gpu, net);
  if (path.type != PathType::Pxn) return gpu;
  const int src = topo.gpus[idx(gpu)];
  for (const auto& [from, link] : path.links) {
    const int to = topo.vertices[idx(from)].links[idx(link)].to;
    const TopoVertex& v = topo.vertices[idx(to)];
    if (v.kind == TopoKind::Gpu && to != src) return v.rank;
  }
  fail("PXN path from GPU " + std::to_string(gpu) + " to NIC " + std::to_string(net) + " has no intermediate GPU");
}

// ncclGetLocalCpu + the GPU->CPU bandwidth (the GPU's PCIe/C2C bandwidth for NIC aggregation).
float gpu_cpu_bw(const NodeTopology& topo, int gpu) {
  int best = -1;
  const auto& row = topo.paths[idx(topo.gpus[idx(gpu)])];
  for (int cpu : topo.cpus) {
    const TopoPath& p = row[idx(cpu)];
    if (best < 0) {
      best = cpu;
      continue;
    }
    const TopoPath& b = row[idx(best)];
    const float pb = static_cast<float>(p.bw), bb = static_cast<float>(b.bw);
    if (pb > bb || (pb == bb && p.type < b.type) || (pb == bb && p.type == b.type && p.hops() < b.hops())) best = cpu;
  }
  return best < 0 ? 0.0f : static_cast<float>(row[idx(best)].bw);
}

// ncclTopoGetLocalNetCountByBw: the GPU's channel NICs in order until their bandwidth covers the
// GPU's own bandwidth to the CPU.
void local_net_count_by_bw(const NodeTopology& topo, int gpu, int& count, float& bw) {
  count = 0;
  bw = 0;
  if (topo.nets.empty()) return;
  const float gpu_bw = gpu_cpu_bw(topo, gpu);
  for (const int net : topo.channel_nets(gpu).distinct(kMaxChannels)) {
    bw += static_cast<float>(topo.gpu_to_net(gpu, net).bw);
    ++count;
    if (bw >= gpu_bw) break;
  }
}

// ncclTopoGetMinNetBw: the slowest of the GPU's channel NICs (0 without NICs).
float min_net_bw(const NodeTopology& topo, int gpu) {
  if (topo.nets.empty()) return 0;
  float best = -1;
  for (const int net : topo.channel_nets(gpu).distinct(kMaxChannels)) {
    const auto b = static_cast<float>(topo.gpu_to_net(gpu, net).bw);
    best = best < 0 ? b : std::min(best, b);
  }
  return std::max(best, 0.0f);
}

// ncclTopoComputeP2pChannelsPerPeer for every GPU of one node: min over its peers of the channels a
// peer needs (NVLink: 2 per NVLink worth of bandwidth; PCIe: 2; network: one per NIC needed).
int node_p2p_channels_per_peer(const NodeTopology& topo, bool has_remote_peers, const CommOptions& options) {
  const int ppn = static_cast<int>(topo.gpus.size());
  int min_channels = kMaxChannels;
  for (int g = 0; g < ppn; ++g) {
    const float nvl_bw = static_cast<float>(nccl_nvlink_bw_per_link(topo.vertices[idx(topo.gpus[idx(g)])].sm));
    for (int p = 0; p < ppn; ++p) {
      if (p == g) continue;
      const TopoPath& path = topo.gpu_to_gpu(p, g);
      int n = 2;
      if ((path.type == PathType::Nvl || path.type == PathType::Nvb) && nvl_bw > 0)
        n = 2 * std::max(1, static_cast<int>(static_cast<float>(path.bw) / nvl_bw));
      min_channels = std::min(min_channels, n);
    }
    if (has_remote_peers) {
      int n = options.nchannels_per_net_peer;
      if (n <= 0) {
        int count = 0;
        float bw = 0;
        local_net_count_by_bw(topo, g, count, bw);
        n = 2;
        const int bw_int = static_cast<int>(bw);
        if (count > 0) n = std::max(count, (bw_int + kP2pChannelNetBwInt - 1) / kP2pChannelNetBwInt);
      }
      min_channels = std::min(min_channels, n);
    }
  }
  return min_channels;
}

// Runs `f(topology)` once per distinct topology object (identical nodes share one) and returns the
// minimum over nodes.
template <typename F>
auto min_over_distinct_topologies(const NcclCommunicator& comm, F f) {
  std::vector<const NodeTopology*> seen;
  decltype(f(*comm.node_topology.front())) best{};
  bool have = false;
  for (const auto& t : comm.node_topology) {
    if (std::find(seen.begin(), seen.end(), t.get()) != seen.end()) continue;
    seen.push_back(t.get());
    const auto v = f(*t);
    best = have ? std::min(best, v) : v;
    have = true;
  }
  return best;
}

// ncclNvlsTuning (transport/nvls.cc): default NVLS CTAs per architecture, the SM100 multi-node
// table, the user's NCCL_NVLS_NCHANNELS, clamped to [minCTAs 1, maxCTAs 64].
int nvls_channel_count(const NcclCommunicator& comm, const CommOptions& options) {
  int n = kNvlsChannelsSm90;
  if (comm.sm >= 100) n = comm.nnodes > 1 ? kNvlsChannelsSm100 : kNvlsChannelsSm100Nvl;
  if (comm.sm >= 100 && comm.nnodes > 1) {
    int ppn = comm.nranks;
    for (const auto& ranks : comm.node_ranks) ppn = std::min(ppn, static_cast<int>(ranks.size()));
    const float nic_bw = min_over_distinct_topologies(comm, [](const NodeTopology& t) {
      float m = -1;
      for (int g = 0; g < static_cast<int>(t.gpus.size()); ++g) {
        const float b = min_net_bw(t, g);
        m = m < 0 ? b : std::min(m, b);
      }
      return m;
    });
    if (comm.nnodes == 2 && nic_bw >= 48.0f)
      n = 32;
    else if (nic_bw >= 96.0f)
      n = ppn <= 8 ? 24 : 32;
    else if (nic_bw >= 48.0f)
      n = 24;
  }
  if (options.nvls_channels > 0) n = options.nvls_channels;
  return std::clamp(n, 1, kMaxChannels);
}

struct NodeLayout {
  int first_rank = 0;
  int ppn = 0;
};

// Per search channel: the stitched ring (connect.cc). Odd nodes found with crossNic 2 use the partner
// channel's chain (2k <-> 2k+1) so that a node receives on the NIC the previous node sent on.
struct StitchedRing {
  std::vector<int> order, next, prev;
  std::vector<int> chain_channel;  // per node: which of its ring graph channels it uses
};

StitchedRing stitch_ring(const NcclCommunicator& comm, const std::vector<NodeGraphs>& graphs,
                         const std::vector<NodeLayout>& layout, int c, int nc) {
  StitchedRing r;
  const auto nranks = idx(comm.nranks);
  r.next.assign(nranks, -1);
  r.prev.assign(nranks, -1);
  r.chain_channel.resize(idx(comm.nnodes));
  std::vector<int> recv(idx(comm.nnodes)), send(idx(comm.nnodes));
  for (int n = 0; n < comm.nnodes; ++n) {
    const SearchGraph& g = graphs[idx(n)].ring;
    const bool swap = g.cross_nic == 2 && nc % 2 == 0 && n % 2 == 1;
    const int cc = swap ? (c ^ 1) : c;
    r.chain_channel[idx(n)] = cc;
    const auto& chain = g.intra[idx(cc)];
    const int base = layout[idx(n)].first_rank;
    for (std::size_t i = 0; i + 1 < chain.size(); ++i) {
      r.next[idx(base + chain[i])] = base + chain[i + 1];
      r.prev[idx(base + chain[i + 1])] = base + chain[i];
    }
    recv[idx(n)] = base + chain.front();
    send[idx(n)] = base + chain.back();
  }
  for (int n = 0; n < comm.nnodes; ++n) {
    const int nn = (n + 1) % comm.nnodes;
    r.next[idx(send[idx(n)])] = recv[idx(nn)];
    r.prev[idx(recv[idx(nn)])] = send[idx(n)];
  }
  // The ring's order counted from rank 0 (ring.index = position in `order`).
  r.order.reserve(nranks);
  int cur = 0;
  for (std::size_t i = 0; i < nranks; ++i) {
    r.order.push_back(cur);
    cur = r.next[idx(cur)];
    if (cur < 0) fail("ring channel " + std::to_string(c) + " is broken");
  }
  if (cur != 0) fail("ring channel " + std::to_string(c) + " does not loop back to rank 0");
  return r;
}

// The NICs of a ring channel's network hops. NCCL looks up the graph channel by the final channel
// id modulo the search channels (ncclTopoGetNetDev), not by the chain the node uses.
RingChannel ring_channel(const NcclCommunicator& comm, const std::vector<NodeGraphs>& graphs,
                         const std::vector<NodeLayout>& layout, const StitchedRing& s, int graph_channel) {
  RingChannel ch;
  const auto nranks = idx(comm.nranks);
  ch.order = s.order;
  ch.next = s.next;
  ch.prev = s.prev;
  ch.send_net.assign(nranks, -1);
  ch.recv_net.assign(nranks, -1);
  ch.send_proxy.resize(nranks);
  std::iota(ch.send_proxy.begin(), ch.send_proxy.end(), 0);
  if (comm.nnodes == 1) return ch;
  for (int n = 0; n < comm.nnodes; ++n) {
    const NodeTopology& topo = *comm.node_topology[idx(n)];
    const SearchGraph& g = graphs[idx(n)].ring;
    const auto& chain = g.intra[idx(s.chain_channel[idx(n)])];
    const int base = layout[idx(n)].first_rank;
    const int sender = chain.back(), receiver = chain.front();
    const int send_net = graph_net(g, topo, graph_channel, sender, n, "ring");
    ch.send_net[idx(base + sender)] = send_net;
    ch.send_proxy[idx(base + sender)] = base + pxn_intermediate(topo, sender, send_net);
    ch.recv_net[idx(base + receiver)] = graph_net(g, topo, graph_channel, receiver, n, "ring");
  }
  return ch;
}

// One tree channel (connect.cc): in-node chains from the tree graph, joined across nodes by tree `t` of
// the double binary tree. ttp talks to the parent node; ttc0/ttc1 to the first/second child node.
TreeChannel tree_channel(const NcclCommunicator& comm, const std::vector<NodeGraphs>& graphs,
                         const std::vector<NodeLayout>& layout, const NodeTree& dtree, int c, int graph_channel) {
  TreeChannel ch;
  const auto nranks = idx(comm.nranks);
  ch.up.assign(nranks, -1);
  ch.down.assign(nranks, {-1, -1, -1});
  ch.net.assign(nranks, -1);
  const auto nnodes = idx(comm.nnodes);
  std::vector<int> ttp(nnodes), ttc0(nnodes), ttc1(nnodes);
  for (int n = 0; n < comm.nnodes; ++n) {
    const SearchGraph& g = graphs[idx(n)].tree;
    const auto& chain = g.intra[idx(c)];
    const int base = layout[idx(n)].first_rank;
    for (std::size_t i = 0; i < chain.size(); ++i) {
      const int r = base + chain[i];
      ch.up[idx(r)] = i == 0 ? -1 : base + chain[i - 1];
      ch.down[idx(r)][0] = i + 1 == chain.size() ? -1 : base + chain[i + 1];
    }
    // BALANCED_TREE: parent on chain[0], child 0 on chain[1], child 1 on chain[0]; SPLIT_TREE: both
    // children on chain[1]; TREE: everything on chain[0]. (A 1-GPU chain has only chain[0].)
    const int second = chain.size() > 1 ? chain[1] : chain[0];
    ttp[idx(n)] = base + chain[0];
    ttc0[idx(n)] = base + (g.pattern == GraphPattern::Tree ? chain[0] : second);
    ttc1[idx(n)] = base + (g.pattern == GraphPattern::SplitTree ? second : chain[0]);
  }
  if (comm.nnodes == 1) return ch;
  auto add_down = [&](int rank, int child) {
    auto& d = ch.down[idx(rank)];
    auto slot = std::find(d.begin(), d.end(), -1);
    if (slot == d.end()) fail("tree rank " + std::to_string(rank) + " already has 3 children");
    *slot = child;
  };
  for (int n = 0; n < comm.nnodes; ++n) {
    const int u = dtree.up[idx(n)];
    if (u >= 0) {
      // The parent's first child attaches to its ttc0, the second to its ttc1 (parentChildType).
      const bool first_child = dtree.down[idx(u)][0] == n;
      ch.up[idx(ttp[idx(n)])] = first_child ? ttc0[idx(u)] : ttc1[idx(u)];
    }
    const auto& d = dtree.down[idx(n)];
    if (d[0] >= 0) add_down(ttc0[idx(n)], ttp[idx(d[0])]);
    if (d[1] >= 0) add_down(ttc1[idx(n)], ttp[idx(d[1])]);
  }
  // NIC of every rank with a network edge (ncclTopoGetNetDev on the tree graph).
  for (int n = 0; n < comm.nnodes; ++n) {
    const NodeTopology& topo = *comm.node_topology[idx(n)];
    const int base = layout[idx(n)].first_rank;
    const int end = base + layout[idx(n)].ppn;
    for (int r : {ttp[idx(n)], ttc0[idx(n)], ttc1[idx(n)]}) {
      bool remote = ch.up[idx(r)] >= 0 && (ch.up[idx(r)] < base || ch.up[idx(r)] >= end);
      for (int d : ch.down[idx(r)]) remote = remote || (d >= 0 && (d < base || d >= end));
      if (remote) ch.net[idx(r)] = graph_net(graphs[idx(n)].tree, topo, graph_channel, r - base, n, "tree");
    }
  }
  return ch;
}

// CollNetDirect heads: the distinct first GPUs of each node's direct-graph channels; every node
// contributes as many as the node with the fewest.
void set_collnet_heads(NcclCommunicator& comm, const std::vector<NodeGraphs>& graphs,
                       const std::vector<NodeLayout>& layout) {
  std::vector<std::vector<int>> heads(idx(comm.nnodes));
  int nheads = kMaxChannels;
  for (int n = 0; n < comm.nnodes; ++n) {
    const SearchGraph& g = graphs[idx(n)].collnet_direct;
    for (int c = 0; c < g.nchannels && c < static_cast<int>(g.intra.size()); ++c) {
      if (g.intra[idx(c)].empty()) continue;
      const int h = g.intra[idx(c)].front();
      if (h < 0 || h >= layout[idx(n)].ppn)
        fail("collnet direct graph of node " + std::to_string(n) + " channel " + std::to_string(c) +
             " has an invalid head GPU");
      if (std::find(heads[idx(n)].begin(), heads[idx(n)].end(), h) == heads[idx(n)].end()) heads[idx(n)].push_back(h);
    }
    nheads = std::min(nheads, static_cast<int>(heads[idx(n)].size()));
  }
  if (nheads <= 0) return;
  comm.collnet_head_local.assign(heads[0].begin(), heads[0].begin() + nheads);
  comm.collnet_head_rank.assign(idx(nheads), std::vector<int>(idx(comm.nnodes)));
  for (int h = 0; h < nheads; ++h)
    for (int n = 0; n < comm.nnodes; ++n)
      comm.collnet_head_rank[idx(h)][idx(n)] = layout[idx(n)].first_rank + heads[idx(n)][idx(h)];
}

void validate_inputs(const std::vector<std::shared_ptr<const NodeTopology>>& topologies,
                     const std::vector<NodeGraphs>& graphs) {
  if (topologies.empty()) fail("no nodes");
  if (topologies.size() != graphs.size())
    fail(std::to_string(topologies.size()) + " node topologies but " + std::to_string(graphs.size()) +
         " node search results");
  for (std::size_t n = 0; n < topologies.size(); ++n) {
    const auto& t = topologies[n];
    if (!t) fail("node " + std::to_string(n) + " has no topology");
    if (t->gpus.empty()) fail("node " + std::to_string(n) + " has no GPUs");
    if (t->paths.size() != t->vertices.size()) fail("node " + std::to_string(n) + " topology has no computed paths");
    if (graphs[n].ring.nchannels < 1 || graphs[n].tree.nchannels < 1)
      fail("node " + std::to_string(n) + " has no ring or tree channels");
  }
}

// Ranks numbered node by node (NCCL's rank order inside a communicator built by node); the communicator's compute
// capability is the lowest of its nodes' (comm->minCompCap).
std::vector<NodeLayout> number_ranks_by_node(NcclCommunicator& comm,
                                             const std::vector<std::shared_ptr<const NodeTopology>>& node_topologies) {
  std::vector<NodeLayout> layout(idx(comm.nnodes));
  comm.node_ranks.resize(idx(comm.nnodes));
  comm.sm = node_topologies.front()->sm;
  comm.vendor = node_topologies.front()->vendor;
  comm.arch = node_topologies.front()->arch;
  for (int n = 0; n < comm.nnodes; ++n) {
    const NodeTopology& t = *node_topologies[idx(n)];
    const int ppn = static_cast<int>(t.gpus.size());
    layout[idx(n)] = {comm.nranks, ppn};
    for (int l = 0; l < ppn; ++l) {
      comm.node_ranks[idx(n)].push_back(comm.nranks + l);
      comm.node_of.push_back(n);
      comm.local_of.push_back(l);
    }
    comm.nranks += ppn;
    comm.sm = std::min(comm.sm, t.sm);  // comm->minCompCap
  }
  return layout;
}

// Reconciliation (ncclTopoPreset/Postset): every rank takes the min channel count etc.; ring and tree then share
// c0 = min(ring, tree) channels, which is returned. CollNet stays on only with enough nodes and a chain channel.
int reconcile_search_graphs(NcclCommunicator& comm, const std::vector<NodeGraphs>& node_graphs,
                            const CommOptions& options) {
  comm.ring_graph = reconcile(node_graphs, &NodeGraphs::ring);
  comm.tree_graph = reconcile(node_graphs, &NodeGraphs::tree);
  comm.nvls_graph = reconcile(node_graphs, &NodeGraphs::nvls);
  comm.collnet = options.collnet && comm.nnodes >= kCollNetNodeThreshold;
  if (comm.collnet) {
    comm.collnet_chain_graph = reconcile(node_graphs, &NodeGraphs::collnet_chain);
    comm.collnet_direct_graph = reconcile(node_graphs, &NodeGraphs::collnet_direct);
    truncate_channels(comm.collnet_chain_graph);
    truncate_channels(comm.collnet_direct_graph);
    comm.collnet = comm.collnet_chain_graph.nchannels > 0;
  }
  const int nc = std::min(comm.ring_graph.nchannels, comm.tree_graph.nchannels);
  comm.ring_graph.nchannels = comm.tree_graph.nchannels = nc;
  truncate_channels(comm.ring_graph);
  truncate_channels(comm.tree_graph);
  for (const auto& g : node_graphs)
    comm.max_tree_pattern = std::max(comm.max_tree_pattern, static_cast<int>(g.tree.pattern));
  return nc;
}

// Every node's first `nc` ring and tree channels must each order all of the node's GPUs: the rings and trees are
// stitched from them.
void check_ring_and_tree_chains(const std::vector<NodeGraphs>& node_graphs, const std::vector<NodeLayout>& layout,
                                int nnodes, int nc) {
  for (int n = 0; n < nnodes; ++n) {
    for (int c = 0; c < nc; ++c) {
      check_chain(node_graphs[idx(n)].ring.intra, c, layout[idx(n)].ppn, n, "ring");
      check_chain(node_graphs[idx(n)].tree.intra, c, layout[idx(n)].ppn, n, "tree");
    }
  }
}

// Channel count (ncclTopoPostset): tree duplication, CollNet +50 %, the SM90 multi-node doubling, then
// NCCL_MAX_NCHANNELS and NCCL_MIN_NCHANNELS, each step copying earlier channels cyclically. Sets the default and the
// final count, and which of the 2·nc duplicated channels each final channel copies.
void set_channel_count(NcclCommunicator& comm, int nc, const CommOptions& options) {
  std::vector<int> copy_of(idx(std::min(kMaxChannels, 2 * nc)));
  std::iota(copy_of.begin(), copy_of.end(), 0);
  int nch = static_cast<int>(copy_of.size());
  // The +50 % compares the CollNet chain graph's bandwidths (the tree graph's when the chain was not
  // searched, as in hand-built inputs).
  const SearchGraph& chain = comm.collnet_chain_graph.nchannels > 0 ? comm.collnet_chain_graph : comm.tree_graph;
  if (options.collnet && comm.nnodes >= kCollNetNodeThreshold && chain.bw_intra > chain.bw_inter &&
      comm.nranks > comm.nnodes) {
    nch = std::min(kMaxChannels, nch + nch / 2);
    copy_channels(copy_of, nch);
  }
  if (comm.sm >= 90 && comm.nnodes > 1 && comm.ring_graph.bw_intra > kSm90DoublingBwIntra && nch < 16) {
    nch = 2 * nch;
    copy_channels(copy_of, nch);
  }
  comm.default_nchannels = nch;
  const int max_nch = std::clamp(options.max_channels, 1, kMaxChannels);
  const int min_nch = std::clamp(options.min_channels, 0, kMaxChannels);
  nch = std::min(nch, max_nch);  // (maxCTAs defaults to MAXCHANNELS)
  copy_of.resize(idx(nch));
  copy_channels(copy_of, std::max(min_nch, 1));
  comm.nchannels = static_cast<int>(copy_of.size());
  comm.channel_copy_of = copy_of;
}

// Rings and trees per channel (ncclTopoPostset, connect.cc): each of the nc search channels stitched into a ring
// across the nodes once, then every final channel takes the ring and the tree of the channel it copies.
void connect_rings_and_trees(NcclCommunicator& comm, const std::vector<NodeGraphs>& node_graphs,
                             const std::vector<NodeLayout>& layout, const std::array<NodeTree, 2>& dtree, int nc) {
  std::vector<StitchedRing> stitched;
  stitched.reserve(idx(nc));
  for (int c = 0; c < nc; ++c) stitched.push_back(stitch_ring(comm, node_graphs, layout, c, nc));
  const int nch = comm.nchannels;
  comm.rings.reserve(idx(nch));
  comm.trees.reserve(idx(nch));
  for (int k = 0; k < nch; ++k) {
    const int b = comm.channel_copy_of[idx(k)];
    comm.rings.push_back(ring_channel(comm, node_graphs, layout, stitched[idx(b % nc)], k % nc));
    comm.trees.push_back(tree_channel(comm, node_graphs, layout, dtree[idx(b / nc)], b % nc, k % nc));
  }
}

// NVLS (transport/nvls.cc, connect.cc): heads = distinct first GPUs of each node's NVLS channels; every node
// contributes as many heads as the node with the fewest. With heads, the NVLS channel count (ncclNvlsTuning).
void set_nvls_heads(NcclCommunicator& comm, const std::vector<NodeGraphs>& node_graphs,
                    const std::vector<NodeLayout>& layout, const CommOptions& options) {
  std::vector<std::vector<int>> heads(idx(comm.nnodes));
  int nheads = comm.nvls_graph.nchannels > 0 ? kMaxChannels : 0;
  for (int n = 0; n < comm.nnodes && nheads > 0; ++n) {
    const SearchGraph& g = node_graphs[idx(n)].nvls;
    for (int c = 0; c < g.nchannels && c < static_cast<int>(g.intra.size()); ++c) {
      if (g.intra[idx(c)].empty()) continue;
      const int h = g.intra[idx(c)].front();
      if (h < 0 || h >= layout[idx(n)].ppn)
        fail("nvls graph of node " + std::to_string(n) + " channel " + std::to_string(c) + " has an invalid head GPU");
      if (std::find(heads[idx(n)].begin(), heads[idx(n)].end(), h) == heads[idx(n)].end()) heads[idx(n)].push_back(h);
    }
    nheads = std::min(nheads, static_cast<int>(heads[idx(n)].size()));
  }
  comm.nvls_heads = nheads;
  if (nheads <= 0) return;
  comm.nvls_head_local.assign(heads[0].begin(), heads[0].begin() + nheads);
  comm.nvls_head_rank.assign(idx(nheads), std::vector<int>(idx(comm.nnodes)));
  for (int h = 0; h < nheads; ++h)
    for (int n = 0; n < comm.nnodes; ++n)
      comm.nvls_head_rank[idx(h)][idx(n)] = layout[idx(n)].first_rank + heads[idx(n)][idx(h)];
  comm.nvls_channels = nvls_channel_count(comm, options);
}

// The two node-level trees of the double binary tree, kept for the tree algorithms' schedules.
void record_node_trees(NcclCommunicator& comm, const std::array<NodeTree, 2>& dtree) {
  for (int t = 0; t < 2; ++t) {
    comm.node_tree_up[idx(t)] = dtree[idx(t)].up;
    comm.node_tree_down[idx(t)] = dtree[idx(t)].down;
  }
}

// p2p (ncclTopoComputeP2pChannels): channels, channels per peer (min over ranks, pow2) and the multi-node shrink loop
// that lets every peer of a rank fit in p2pnChannels with 8 p2p works per channel.
void set_p2p_channels(NcclCommunicator& comm, const CommOptions& options) {
  comm.p2p_nchannels = std::min(pow2_up(std::max(std::min(comm.nchannels, kMaxChannels), 1)), kMaxChannels);
  const bool multi_node = comm.nnodes > 1;
  int per_peer = min_over_distinct_topologies(
      comm, [&](const NodeTopology& t) { return node_p2p_channels_per_peer(t, multi_node, options); });
  per_peer = pow2_up(per_peer);
  if (multi_node && options.nchannels_per_net_peer <= 0) {
    const int max_peers = comm.nranks;  // NCCL_P2P_MAX_PEERS default
    while (per_peer * ((max_peers + kP2pWorkPerBatch - 1) / kP2pWorkPerBatch) > comm.p2p_nchannels && per_peer > 1)
      per_peer /= 2;
  } else {
    per_peer = std::min(comm.p2p_nchannels, per_peer);
  }
  comm.p2p_channels_per_peer = per_peer;
}

// p2p schedule group size (ncclP2pSchedule): NCCL_P2P_SCHEDULE_GROUP_SIZE multi-node (else the largest node),
// reduced by gcd until it divides every node's rank count.
void set_p2p_schedule_group_size(NcclCommunicator& comm, const std::vector<NodeLayout>& layout,
                                 const CommOptions& options) {
  int group = 0;
  if (comm.nnodes > 1) {
    if (options.p2p_schedule_group_size < 1)
      throw ScenarioError("", "nccl.NCCL_P2P_SCHEDULE_GROUP_SIZE",
                          "must be a positive integer, got " + std::to_string(options.p2p_schedule_group_size));
    group = options.p2p_schedule_group_size;
  } else {
    group = layout.front().ppn;
  }
  for (const auto& l : layout)
    if (l.ppn % group != 0 || l.ppn < group) group = std::gcd(group, l.ppn);
  comm.p2p_group_size = group;
}

}  // namespace

PathType NcclCommunicator::path_type(int src_rank, int dst_rank) const {
  if (src_rank < 0 || src_rank >= nranks || dst_rank < 0 || dst_rank >= nranks)
    fail("path_type: rank out of range (" + std::to_string(src_rank) + ", " + std::to_string(dst_rank) + ")");
  if (src_rank == dst_rank) return PathType::Loc;
  const int n = node_of[idx(src_rank)];
  if (n != node_of[idx(dst_rank)]) return PathType::Net;
  return node_topology[idx(n)]->gpu_to_gpu(local_of[idx(src_rank)], local_of[idx(dst_rank)]).type;
}

NcclCommunicator build_communicator(const std::vector<std::shared_ptr<const NodeTopology>>& node_topologies,
                                    const std::vector<NodeGraphs>& node_graphs, const CommOptions& options) {
  validate_inputs(node_topologies, node_graphs);
  NcclCommunicator comm;
  comm.nnodes = static_cast<int>(node_topologies.size());
  comm.node_topology = node_topologies;
  const std::vector<NodeLayout> layout = number_ranks_by_node(comm, node_topologies);
  const int nc = reconcile_search_graphs(comm, node_graphs, options);
  check_ring_and_tree_chains(node_graphs, layout, comm.nnodes, nc);
  set_channel_count(comm, nc, options);
  const auto dtree = double_binary_tree(comm.nnodes);
  connect_rings_and_trees(comm, node_graphs, layout, dtree, nc);
  set_nvls_heads(comm, node_graphs, layout, options);
  if (comm.collnet) set_collnet_heads(comm, node_graphs, layout);
  record_node_trees(comm, dtree);
  set_p2p_channels(comm, options);
  set_p2p_schedule_group_size(comm, layout, options);
  return comm;
}

}  // namespace trainsim
