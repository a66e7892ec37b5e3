// Tree AllReduce flows (NCCL src/device/all_reduce.h runTreeUpDown): per channel, the chunk stream goes up
// every tree edge (leaves first, interior ranks add and forward) and then down from the root.
// Channels [0, nc) use tree 0 and the duplicates tree 1 (the communicator's per-channel trees).
#include <algorithm>
#include <string>
#include <vector>

#include "collective/flows/flows_internal.hpp"
#include "core/error.hpp"

namespace trainsim::flows {
namespace {

// Parent/children view of one tree channel with a root-first (BFS) order.
struct TreeShape {
  std::vector<int> up;
  std::vector<int> child_begin, children;  // CSR
  std::vector<int> bfs;                    // roots first, parents before children
};

TreeShape shape_of(const TreeChannel& t, int n, int channel) {
  TreeShape s;
  s.up = t.up;
  s.child_begin.assign(static_cast<std::size_t>(n) + 1, 0);
  for (int r = 0; r < n; ++r) {
    for (int c : t.down[static_cast<std::size_t>(r)]) {
      if (c < 0) continue;
      if (c >= n || t.up[static_cast<std::size_t>(c)] != r)
        throw Error("flow generation: tree channel " + std::to_string(channel) + " has inconsistent up/down at rank " +
                    std::to_string(r));
      ++s.child_begin[static_cast<std::size_t>(r) + 1];
    }
  }
  for (int r = 0; r < n; ++r)
    s.child_begin[static_cast<std::size_t>(r) + 1] += s.child_begin[static_cast<std::size_t>(r)];
  s.children.resize(static_cast<std::size_t>(s.child_begin[static_cast<std::size_t>(n)]));
  std::vector<int> fill(s.child_begin.begin(), s.child_begin.end() - 1);
  for (int r = 0; r < n; ++r)
    for (int c : t.down[static_cast<std::size_t>(r)])
      if (c >= 0) s.children[static_cast<std::size_t>(fill[static_cast<std::size_t>(r)]++)] = c;
  for (int r = 0; r < n; ++r)
    if (t.up[static_cast<std::size_t>(r)] < 0) s.bfs.push_back(r);
  for (std::size_t i = 0; i < s.bfs.size(); ++i) {
    const auto r = static_cast<std::size_t>(s.bfs[i]);
    for (int k = s.child_begin[r]; k < s.child_begin[r + 1]; ++k)
      s.bfs.push_back(s.children[static_cast<std::size_t>(k)]);
  }
  if (static_cast<int>(s.bfs.size()) != n)
    throw Error("flow generation: tree channel " + std::to_string(channel) + " does not reach every rank from a root");
  return s;
}

struct TreeEmitter {
  const CallContext& ctx;
  const TreeChannel& tree;
  const TreeShape& shape;
  int channel;
  DagBuilder& b;
  std::vector<std::uint32_t> up_flow, down_flow;

  Flow edge(int src, int dst, std::int64_t payload, std::int64_t wire, int step) const {
    Flow f = gpu_flow(ctx.comm, src, dst, payload, wire, channel, step);
    if (f.link == LinkClass::Network) {
      const auto s = static_cast<std::size_t>(src), d = static_cast<std::size_t>(dst);
      f.src_net = s < tree.net.size() && tree.net[s] >= 0 ? tree.net[s] : local_nic(ctx.comm, src);
      f.dst_net = d < tree.net.size() && tree.net[d] >= 0 ? tree.net[d] : local_nic(ctx.comm, dst);
    }
    return f;
  }

  // One pass up and down for `payload` bytes; `chain_up` makes each up flow wait for its
  // children's (PerStep: the chunk must be reduced below first).
  void emit(std::int64_t payload, std::int64_t wire, int step, bool chain_up) {
    const auto n = shape.up.size();
    up_flow.assign(n, kNoFlow);
    down_flow.assign(n, kNoFlow);
    for (auto it = shape.bfs.rbegin(); it != shape.bfs.rend(); ++it) {
      const auto r = static_cast<std::size_t>(*it);
      if (shape.up[r] < 0) continue;
      if (chain_up)
        for (int k = shape.child_begin[r]; k < shape.child_begin[r + 1]; ++k)
          b.depend_on(up_flow[static_cast<std::size_t>(shape.children[static_cast<std::size_t>(k)])]);
      up_flow[r] = b.add(edge(*it, shape.up[r], payload, wire, step));
    }
    for (int x : shape.bfs) {
      const auto r = static_cast<std::size_t>(x);
      for (int k = shape.child_begin[r]; k < shape.child_begin[r + 1]; ++k) {
        const int c = shape.children[static_cast<std::size_t>(k)];
        if (shape.up[r] < 0) {
          // The root broadcasts once the reduction has arrived from all its children.
          for (int j = shape.child_begin[r]; j < shape.child_begin[r + 1]; ++j)
            b.depend_on(up_flow[static_cast<std::size_t>(shape.children[static_cast<std::size_t>(j)])]);
        } else {
          b.depend_on(down_flow[r]);  // forwards what came down from its parent
        }
        down_flow[static_cast<std::size_t>(c)] = b.add(edge(x, c, payload, wire, step));
      }
    }
  }
};

}  // namespace

void tree_flows(const CallContext& ctx, FlowDag& dag) {
  const NcclCommunicator& comm = ctx.comm;
  const int n = comm.nranks;
  const int budget = comm.nchannels > 0 ? comm.nchannels : static_cast<int>(comm.trees.size());
  const std::vector<ChannelPart> parts = collective_parts(ctx, budget);
  DagBuilder b(dag);
  for (const ChannelPart& part : parts) {
    if (part.channel >= static_cast<int>(comm.trees.size()))
      throw Error("flow generation: tree channel " + std::to_string(part.channel) + " missing from the communicator");
    const TreeChannel& tree = comm.trees[static_cast<std::size_t>(part.channel)];
    if (static_cast<int>(tree.up.size()) != n || static_cast<int>(tree.down.size()) != n)
      throw Error("flow generation: tree channel " + std::to_string(part.channel) + " does not list every rank");
    const TreeShape shape = shape_of(tree, n, part.channel);
    const CollChunking ck = chunking_for(ctx, part, 1);
    TreeEmitter e{ctx, tree, shape, part.channel, b, {}, {}};
    if (!ctx.per_step()) {
      const PieceTotals t = piece_totals(part.bytes, ck.chunk_bytes, ctx.plan.protocol);
      e.emit(t.payload, t.wire, -1, false);
      continue;
    }
    int loop = 0;
    for (std::int64_t off = 0; off < part.bytes; off += ck.chunk_bytes, ++loop) {
      const std::int64_t bytes = std::min(ck.chunk_bytes, part.bytes - off);
      e.emit(bytes, wire_bytes(bytes, ctx.plan.protocol), loop, true);
    }
  }
  dag.channels = static_cast<int>(parts.size());
  dag.note = ctx.per_step()
                 ? "Tree PerStep: per (channel, chunk) one flow per edge up (after the children's) and down (after the "
                   "parent's arrival; the root after all its children)"
                 : "Tree PerChannel: one flow per (channel, tree edge, direction) carrying all chunks; up flows run "
                   "concurrently, down flows wait for the reduction to arrive at their sender (the root: from all "
                   "children; others: from the parent), so the split kernel's up/down overlap is not represented";
}

}  // namespace trainsim::flows
