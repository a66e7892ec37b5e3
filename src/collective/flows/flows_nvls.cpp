// NVLS and NVLSTree flows (NCCL src/device/all_reduce.h, NVLS and NVLS_TREE). Traffic inside a node goes
// GPU <-> NVSwitch (LinkClass::NVLinkSharp, endpoint FlowEndpoint::Kind::NvSwitch = the node): for
// AllReduce every GPU pushes its whole part into the switch, head h pulls the reduced block h
// (multimem.ld_reduce), stores it back as a multicast, and the switch replicates it to every GPU.
// NVLSTree adds, per head h, a double binary tree over nodes between the heads h of all nodes
// (tree 0 on even NVLS channels, tree 1 on odd ones).
#include <algorithm>
#include <string>
#include <vector>

#include "collective/flows/flows_internal.hpp"
#include "core/error.hpp"

namespace trainsim::flows {
namespace {

FlowEndpoint nvswitch(int node) { return FlowEndpoint{FlowEndpoint::Kind::NvSwitch, node}; }

Flow sharp_flow(FlowEndpoint src, FlowEndpoint dst, std::int64_t bytes, int channel, int step) {
  Flow f;
  f.src = src;
  f.dst = dst;
  f.bytes = bytes;  // NVLS is Simple only: wire = payload
  f.payload = bytes;
  f.link = LinkClass::NVLinkSharp;
  f.channel = channel;
  f.step = step;
  return f;
}

struct NodeTreeShape {
  std::vector<int> up, child_begin, children, bfs;
};

NodeTreeShape node_tree(const NcclCommunicator& comm, int t) {
  const int nn = comm.nnodes;
  const auto& up = comm.node_tree_up[static_cast<std::size_t>(t)];
  const auto& down = comm.node_tree_down[static_cast<std::size_t>(t)];
  if (static_cast<int>(up.size()) != nn || static_cast<int>(down.size()) != nn)
    throw Error("flow generation: NVLSTree node tree " + std::to_string(t) + " does not list every node");
  NodeTreeShape s;
  s.up = up;
  s.child_begin.assign(static_cast<std::size_t>(nn) + 1, 0);
  for (int x = 0; x < nn; ++x)
    for (int c : down[static_cast<std::size_t>(x)])
      if (c >= 0) ++s.child_begin[static_cast<std::size_t>(x) + 1];
  for (int x = 0; x < nn; ++x)
    s.child_begin[static_cast<std::size_t>(x) + 1] += s.child_begin[static_cast<std::size_t>(x)];
  for (int x = 0; x < nn; ++x)
    for (int c : down[static_cast<std::size_t>(x)])
      if (c >= 0) {
        if (c >= nn || up[static_cast<std::size_t>(c)] != x)
          throw Error("flow generation: NVLSTree node tree " + std::to_string(t) + " has inconsistent up/down");
        s.children.push_back(c);
      }
  for (int x = 0; x < nn; ++x)
    if (up[static_cast<std::size_t>(x)] < 0) s.bfs.push_back(x);
  for (std::size_t i = 0; i < s.bfs.size(); ++i) {
    const auto x = static_cast<std::size_t>(s.bfs[i]);
    for (int k = s.child_begin[x]; k < s.child_begin[x + 1]; ++k)
      s.bfs.push_back(s.children[static_cast<std::size_t>(k)]);
  }
  if (static_cast<int>(s.bfs.size()) != nn)
    throw Error("flow generation: NVLSTree node tree " + std::to_string(t) + " does not reach every node");
  return s;
}

class NvlsEmitter {
 public:
  NvlsEmitter(const CallContext& ctx, DagBuilder& b, bool with_tree)
      : ctx_(ctx),
        comm_(ctx.comm),
        b_(b),
        nodes_(ranks_by_node(ctx.comm)),
        with_tree_(with_tree),
        sharp_(!with_tree && ctx.comm.nnodes > 1) {
    nheads_ = static_cast<int>(comm_.nvls_head_local.size());
    for (int h = 0; h < nheads_; ++h) {
      const int l = comm_.nvls_head_local[static_cast<std::size_t>(h)];
      for (const auto& ranks : nodes_)
        if (l < 0 || l >= static_cast<int>(ranks.size()) || ranks[static_cast<std::size_t>(l)] < 0)
          throw Error("flow generation: NVLS head local rank " + std::to_string(l) + " missing on a node");
    }
    if (with_tree_) trees_ = {node_tree(comm_, 0), node_tree(comm_, 1)};
  }

  int nheads() const { return nheads_; }

  // AllReduce, one channel part: PerChannel totals or per (loop, head) flows.
  void all_reduce(const ChannelPart& part, const CollChunking& ck) {
    const PartLoops loops{part.bytes, ck.chunk_bytes, 16384, nheads_};
    channel_ = part.channel;
    tree_ = with_tree_ ? &trees_[static_cast<std::size_t>(part.channel % 2)] : nullptr;
    if (!ctx_.per_step()) {
      for (int node = 0; node < comm_.nnodes; ++node)
        for (int r : nodes_[static_cast<std::size_t>(node)])
          b_.add(sharp_flow(gpu(r), nvswitch(node), part.bytes, channel_, -1));
      for (int h = 0; h < nheads_; ++h) head_block(h, loops.chunk_payload_total(h), -1, false);
      for (int node = 0; node < comm_.nnodes; ++node)
        for (int r : nodes_[static_cast<std::size_t>(node)])
          b_.add(sharp_flow(nvswitch(node), gpu(r), part.bytes, channel_, -1));
      return;
    }
    for (std::int64_t loop = 0; loop < loops.loops(); ++loop) {
      for (int h = 0; h < nheads_; ++h) {
        const std::int64_t bytes = loops.chunk_bytes(loop, h);
        if (bytes == 0) continue;
        const int step = static_cast<int>(loop * nheads_ + h);
        scatter_.assign(static_cast<std::size_t>(comm_.nnodes), {});
        for (int node = 0; node < comm_.nnodes; ++node)
          for (int r : nodes_[static_cast<std::size_t>(node)])
            scatter_[static_cast<std::size_t>(node)].push_back(
                b_.add(sharp_flow(gpu(r), nvswitch(node), bytes, channel_, step)));
        head_block(h, bytes, step, true);
        for (int node = 0; node < comm_.nnodes; ++node)
          for (int r : nodes_[static_cast<std::size_t>(node)]) {
            b_.depend_on(mcast_[static_cast<std::size_t>(node)]);
            b_.add(sharp_flow(nvswitch(node), gpu(r), bytes, channel_, step));
          }
      }
    }
  }

  // AllGather / ReduceScatter on one node: multicast stores / multimem reductions of each rank's
  // block; the switch writes to (reads from) every GPU of the multicast group, the issuer included.
  void gather_like(const ChannelPart& part, const CollChunking& ck, bool gather) {
    const int node = 0;
    const auto& ranks = nodes_[0];
    const auto n = static_cast<std::int64_t>(ranks.size());
    const std::int64_t up_factor = gather ? 1 : n, down_factor = gather ? n : 1;
    if (!ctx_.per_step()) {
      for (int r : ranks) b_.add(sharp_flow(gpu(r), nvswitch(node), up_factor * part.bytes, part.channel, -1));
      for (int r : ranks) b_.add(sharp_flow(nvswitch(node), gpu(r), down_factor * part.bytes, part.channel, -1));
      return;
    }
    int step = 0;
    for (std::int64_t off = 0; off < part.bytes; off += ck.chunk_bytes, ++step) {
      const std::int64_t bytes = std::min(ck.chunk_bytes, part.bytes - off);
      std::vector<std::uint32_t> ups;
      for (int r : ranks)
        ups.push_back(b_.add(sharp_flow(gpu(r), nvswitch(node), up_factor * bytes, part.channel, step)));
      for (int r : ranks) {
        for (std::uint32_t u : ups) b_.depend_on(u);
        b_.add(sharp_flow(nvswitch(node), gpu(r), down_factor * bytes, part.channel, step));
      }
    }
  }

 private:
  int head_rank(int node, int h) const {
    return nodes_[static_cast<std::size_t>(node)]
                 [static_cast<std::size_t>(comm_.nvls_head_local[static_cast<std::size_t>(h)])];
  }

  Flow net_flow(int src, int dst, std::int64_t bytes, int step) const {
    Flow f = gpu_flow(comm_, src, dst, bytes, bytes, channel_, step);
    f.src_net = nvls_head_nic(comm_, src);
    f.dst_net = nvls_head_nic(comm_, dst);
    return f;
  }

  // Head <-> the fabric's in-network reduction (aggregation tree h), through the head's NIC.
  Flow fabric_flow(int head, int h, std::int64_t bytes, int step, bool to_fabric) const {
    Flow f;
    const FlowEndpoint g{FlowEndpoint::Kind::Gpu, head}, fab{FlowEndpoint::Kind::InNetwork, h};
    f.src = to_fabric ? g : fab;
    f.dst = to_fabric ? fab : g;
    f.bytes = f.payload = bytes;
    f.link = LinkClass::Network;
    (to_fabric ? f.src_net : f.dst_net) = nvls_head_nic(comm_, head);
    f.channel = channel_;
    f.step = step;
    return f;
  }

  // Block h: switch -> head (reduced), [NVLSTree: heads' tree up and down; multi-node NVLS: heads to
  // and from the fabric], head -> switch (multicast).
  void head_block(int h, std::int64_t bytes, int step, bool chained) {
    if (bytes == 0) return;
    const auto nn = static_cast<std::size_t>(comm_.nnodes);
    std::vector<std::uint32_t> reduced(nn, kNoFlow), up(nn, kNoFlow), down(nn, kNoFlow);
    mcast_.assign(nn, kNoFlow);
    for (std::size_t node = 0; node < nn; ++node) {
      if (chained)
        for (std::uint32_t s : scatter_[node]) b_.depend_on(s);
      reduced[node] = b_.add(sharp_flow(nvswitch(static_cast<int>(node)), gpu(head_rank(static_cast<int>(node), h)),
                                        bytes, channel_, step));
    }
    if (sharp_) {  // multi-node NVLS: head h of every node reduces block h in the fabric (CollNet)
      for (std::size_t node = 0; node < nn; ++node) {
        if (chained) b_.depend_on(reduced[node]);
        up[node] = b_.add(fabric_flow(head_rank(static_cast<int>(node), h), h, bytes, step, true));
      }
      for (std::size_t node = 0; node < nn; ++node) {
        if (chained)
          for (std::uint32_t u : up) b_.depend_on(u);
        down[node] = b_.add(fabric_flow(head_rank(static_cast<int>(node), h), h, bytes, step, false));
      }
    }
    if (tree_ != nullptr) {
      const NodeTreeShape& t = *tree_;
      auto children_up = [&](std::size_t x) {
        for (int k = t.child_begin[x]; k < t.child_begin[x + 1]; ++k)
          b_.depend_on(up[static_cast<std::size_t>(t.children[static_cast<std::size_t>(k)])]);
      };
      for (auto it = t.bfs.rbegin(); it != t.bfs.rend(); ++it) {
        const auto x = static_cast<std::size_t>(*it);
        if (t.up[x] < 0) continue;
        if (chained) {
          b_.depend_on(reduced[x]);
          children_up(x);
        }
        up[x] = b_.add(net_flow(head_rank(*it, h), head_rank(t.up[x], h), bytes, step));
      }
      for (int xi : t.bfs) {
        const auto x = static_cast<std::size_t>(xi);
        for (int k = t.child_begin[x]; k < t.child_begin[x + 1]; ++k) {
          const int c = t.children[static_cast<std::size_t>(k)];
          if (t.up[x] < 0) {
            children_up(x);  // the root's sum is complete once its children's partials arrived
            if (chained) b_.depend_on(reduced[x]);
          } else {
            b_.depend_on(down[x]);
          }
          down[static_cast<std::size_t>(c)] = b_.add(net_flow(head_rank(xi, h), head_rank(c, h), bytes, step));
        }
      }
    }
    for (std::size_t node = 0; node < nn; ++node) {
      if (chained && sharp_) b_.depend_on(down[node]);
      if (chained) {
        b_.depend_on(reduced[node]);
        if (tree_ != nullptr) {
          const NodeTreeShape& t = *tree_;
          if (t.up[node] >= 0) {
            b_.depend_on(down[node]);
          } else {
            for (int k = t.child_begin[node]; k < t.child_begin[node + 1]; ++k)
              b_.depend_on(up[static_cast<std::size_t>(t.children[static_cast<std::size_t>(k)])]);
          }
        }
      }
      mcast_[node] = b_.add(sharp_flow(gpu(head_rank(static_cast<int>(node), h)), nvswitch(static_cast<int>(node)),
                                       bytes, channel_, step));
    }
  }

  const CallContext& ctx_;
  const NcclCommunicator& comm_;
  DagBuilder& b_;
  std::vector<std::vector<int>> nodes_;
  bool with_tree_;
  bool sharp_;  // plain NVLS across nodes: the inter-node step is CollNet's in-network reduction
  int nheads_ = 0;
  int channel_ = 0;
  std::vector<NodeTreeShape> trees_;
  const NodeTreeShape* tree_ = nullptr;
  std::vector<std::vector<std::uint32_t>> scatter_;  // PerStep: this (loop, head)'s GPU->switch flows per node
  std::vector<std::uint32_t> mcast_;                 // head -> switch flow per node of the current block
};

int nvls_budget(const NcclCommunicator& comm) {
  const int nvls = comm.nvls_channels > 0 ? comm.nvls_channels : 16;
  return comm.nnodes > 1 && comm.nchannels > 0 ? std::min(comm.nchannels, nvls) : nvls;
}

}  // namespace

void nvls_flows(const CallContext& ctx, FlowDag& dag) {
  DagBuilder b(dag);
  NvlsEmitter e(ctx, b, false);
  const std::vector<ChannelPart> parts = collective_parts(ctx, nvls_budget(ctx.comm));
  for (const ChannelPart& part : parts) {
    const CollChunking ck = chunking_for(ctx, part, e.nheads());
    if (ctx.kind == CollKind::AllReduce)
      e.all_reduce(part, ck);
    else
      e.gather_like(part, ck, ctx.kind == CollKind::AllGather);
  }
  dag.channels = static_cast<int>(parts.size());
  dag.note =
      ctx.per_step()
          ? "NVLS PerStep: per (channel, loop, head) GPU->NVSwitch, NVSwitch->head, head->NVSwitch, NVSwitch->GPU "
            "flows chained by arrival"
          : "NVLS PerChannel: per channel one GPU->NVSwitch and one NVSwitch->GPU flow per GPU and, for "
            "AllReduce, NVSwitch->head / head->NVSwitch flows per head block, all concurrent (the kernel "
            "pipelines its scatter, reduce and multicast warps)";
}

void nvls_tree_flows(const CallContext& ctx, FlowDag& dag) {
  DagBuilder b(dag);
  NvlsEmitter e(ctx, b, true);
  const int budget = ctx.comm.nvls_channels > 0 ? ctx.comm.nvls_channels : 16;
  const std::vector<ChannelPart> parts = collective_parts(ctx, budget);
  for (const ChannelPart& part : parts) e.all_reduce(part, chunking_for(ctx, part, e.nheads()));
  dag.channels = static_cast<int>(parts.size());
  dag.note = ctx.per_step()
                 ? "NVLSTree PerStep: per (channel, loop, head) NVLS flows plus the heads' node-tree up/down flows, "
                   "chained by arrival"
                 : "NVLSTree PerChannel: NVLS flows per channel (concurrent) plus one network flow per (channel, head, "
                   "node-tree edge, direction); down flows wait for the reduction's arrival at their sender";
}

}  // namespace trainsim::flows
