// ncclTopoComputePaths (NCCL src/graph/paths.cc) and the NIC choice per GPU and channel
// (ncclTopoGetLocalNet) on trainsim's
// NodeTopology. The BFS keeps NCCL's visiting order (frontier by frontier, links in list order) and
// its "better path" rule, so ties resolve as in NCCL. NCCL's DEV vertex is folded into the GPU: a path
// may cross a GPU only as NVLink GPU->GPU->GPU one hop from its end (NVB), as NCCL allows through DEVs.
#include <algorithm>
#include <numeric>

#include "collective/nccl/nccl_constants.hpp"
#include "collective/nccl/nccl_node_topology.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

using nccl::kLocBw;

PathType path_type_of_link(TopoLinkType t) {
  switch (t) {
    case TopoLinkType::Loc: return PathType::Loc;
    case TopoLinkType::Nvl: return PathType::Nvl;
    case TopoLinkType::C2c: return PathType::C2c;
    case TopoLinkType::Pci: return PathType::Pix;
    case TopoLinkType::Sys: return PathType::Sys;
    case TopoLinkType::Net: return PathType::Loc;  // only the NIC->GPU part matters
  }
  return PathType::Dis;
}

bool is_source_kind(TopoKind k) {
  return k == TopoKind::Gpu || k == TopoKind::Net || k == TopoKind::Cpu || k == TopoKind::NvSwitch;
}

const TopoVertex& vx(const NodeTopology& n, int v) { return n.vertices[static_cast<std::size_t>(v)]; }

// GPUs in NCCL's index order (the order the XML created them), as local ranks.
std::vector<int> gpu_index_order(const NodeTopology& node) {
  std::vector<int> order(node.gpus.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return node.gpus[static_cast<std::size_t>(a)] < node.gpus[static_cast<std::size_t>(b)];
  });
  return order;
}

// ncclTopoSetPaths: paths from every vertex to `base`, breadth first.
void bfs_to(NodeTopology& node, int base) {
  const std::size_t nv = node.vertices.size();
  std::vector<TopoPath> cur(nv);
  cur[static_cast<std::size_t>(base)] = TopoPath{PathType::Loc, kLocBw, {}};
  std::vector<int> frontier{base}, next;
  std::vector<char> queued(nv, 0);
  while (!frontier.empty()) {
    next.clear();
    std::fill(queued.begin(), queued.end(), 0);
    for (int v : frontier) {
      const TopoVertex& here = vx(node, v);
      for (const TopoLink& link : here.links) {
        const int rem = link.to;
        const TopoPath& path = cur[static_cast<std::size_t>(v)];
        // Through a GPU (NCCL: through its DEV) only one NVLink hop away from the end (NVB).
        if (v != base && here.kind == TopoKind::Gpu &&
            (link.type != TopoLinkType::Nvl || vx(node, rem).kind != TopoKind::Gpu || path.hops() > 1)) {
          continue;
        }
        PathType t = path_type_of_link(link.type);
        if (here.kind == TopoKind::Pci && vx(node, rem).kind == TopoKind::Pci) t = PathType::Pxb;
        if (link.type == TopoLinkType::Pci && (here.kind == TopoKind::Cpu || vx(node, rem).kind == TopoKind::Cpu)) {
          t = PathType::Phb;
        }
        if (v != base && here.kind == TopoKind::Gpu && path.type == PathType::Nvl && t == PathType::Nvl &&
            path.hops() == 1) {
          t = PathType::Nvb;
        }
        t = std::max(path.type, t);
        const double bw = std::min(path.bw, link.bw);
        TopoPath& rp = cur[static_cast<std::size_t>(rem)];
        const bool better =
            t < rp.type || (t == rp.type && rp.bw < bw) || (t == rp.type && rp.bw == bw && rp.hops() > path.hops() + 1);
        if (!better) continue;
        // The reverse link: from `rem` back to `v`, same type.
        const auto& rlinks = vx(node, rem).links;
        int rev = -1;
        for (std::size_t l = 0; l < rlinks.size(); ++l) {
          if (rlinks[l].to == v && rlinks[l].type == link.type) {
            rev = static_cast<int>(l);
            break;
          }
        }
        if (rev < 0) continue;  // one-way link (e.g. a pcilink listed on one side only)
        TopoPath np;
        np.type = t;
        np.bw = bw;
        np.links.reserve(path.links.size() + 1);
        np.links.emplace_back(rem, rev);
        np.links.insert(np.links.end(), path.links.begin(), path.links.end());
        rp = std::move(np);
        if (!queued[static_cast<std::size_t>(rem)]) {
          queued[static_cast<std::size_t>(rem)] = 1;
          next.push_back(rem);
        }
      }
    }
    frontier.swap(next);
  }
  for (std::size_t v = 0; v < nv; ++v) {
    if (!node.paths[v].empty()) node.paths[v][static_cast<std::size_t>(base)] = std::move(cur[v]);
  }
}

PathType merge_path_type(PathType a, PathType b) {
  const PathType hi = std::max(a, b), lo = std::min(a, b);
  return hi == PathType::Phb && lo == PathType::C2c ? PathType::P2c : hi;
}

// addInterStep: src -> mid -> dst replaces src -> dst.
void add_inter_step(NodeTopology& node, int mid, int src, int dst) {
  const TopoPath& a = node.paths[static_cast<std::size_t>(src)][static_cast<std::size_t>(mid)];
  const TopoPath& b = node.paths[static_cast<std::size_t>(mid)][static_cast<std::size_t>(dst)];
  TopoPath p;
  p.links = a.links;
  p.links.insert(p.links.end(), b.links.begin(), b.links.end());
  p.type = vx(node, mid).kind == TopoKind::Gpu ? PathType::Pxn : merge_path_type(a.type, b.type);
  p.bw = std::min(a.bw, b.bw);
  node.paths[static_cast<std::size_t>(src)][static_cast<std::size_t>(dst)] = std::move(p);
}

// ncclTopoGetLocal: the targets with the highest path bandwidth, ties broken by the lowest type.
template <typename Targets>
std::vector<int> best_targets(const NodeTopology& node, int from, const Targets& targets, std::size_t count) {
  std::vector<int> out;
  double max_bw = 0;
  PathType min_type = PathType::Dis;
  const auto& row = node.paths[static_cast<std::size_t>(from)];
  if (row.empty()) return out;
  for (std::size_t i = 0; i < count; ++i) {
    const TopoPath& p = row[static_cast<std::size_t>(targets(i))];
    if (p.bw > max_bw || (p.bw == max_bw && p.type < min_type)) {
      max_bw = p.bw;
      min_type = p.type;
      out.clear();
    }
    if (p.bw == max_bw && p.type == min_type) out.push_back(static_cast<int>(i));
  }
  return out;
}

// GPUs (local ranks, NCCL index order) closest to a NET vertex.
std::vector<int> local_gpus_of_net_vertex(const NodeTopology& node, int net_vertex, const std::vector<int>& order) {
  std::vector<int> found = best_targets(
      node, net_vertex, [&](std::size_t i) { return node.gpus[static_cast<std::size_t>(order[i])]; }, order.size());
  for (int& i : found) i = order[static_cast<std::size_t>(i)];
  return found;
}

int local_cpu(const NodeTopology& node, int gpu_vertex) {
  const auto& cpus = node.cpus;
  const std::vector<int> best = best_targets(
      node, gpu_vertex, [&](std::size_t i) { return cpus[i]; }, cpus.size());
  if (best.empty()) return -1;
  int c = cpus[static_cast<std::size_t>(best[0])];
  for (std::size_t i = 1; i < best.size(); ++i) {
    const int cand = cpus[static_cast<std::size_t>(best[i])];
    if (node.paths[static_cast<std::size_t>(gpu_vertex)][static_cast<std::size_t>(cand)].hops() <
        node.paths[static_cast<std::size_t>(gpu_vertex)][static_cast<std::size_t>(c)].hops()) {
      c = cand;
    }
  }
  return c;
}

// The first GPU on a PXN path after its start: the proxy GPU (ncclTopoGetIntermediateRank).
int intermediate_gpu(const NodeTopology& node, const TopoPath& p) {
  for (const auto& [from, l] : p.links) {
    const int to = vx(node, from).links[static_cast<std::size_t>(l)].to;
    if (vx(node, to).kind == TopoKind::Gpu) return to;
  }
  return -1;
}

// ncclTopoCheckGdr, with NCCL_NET_GDR_READ left at its default.
bool gdr_enabled(const NodeTopology& node, int gpu_vertex, int net_vertex, bool read, const PathOptions& opt) {
  const TopoVertex& gpu = vx(node, gpu_vertex);
  if (!vx(node, net_vertex).gdr || !gpu.gdr) return false;
  if (read && gpu.sm < 80) {
    // Pre-Ampere GDR reads only with NVLink to another GPU (or a single GPU).
    bool nvlink = node.gpus.size() == 1;
    for (int other : node.gpus) {
      if (other != gpu_vertex &&
          node.paths[static_cast<std::size_t>(gpu_vertex)][static_cast<std::size_t>(other)].type == PathType::Nvl) {
        nvlink = true;
      }
    }
    if (!nvlink) return false;
  }
  const TopoPath* p = &node.paths[static_cast<std::size_t>(gpu_vertex)][static_cast<std::size_t>(net_vertex)];
  if (p->type == PathType::Pxn) {
    const int proxy = intermediate_gpu(node, *p);
    if (proxy >= 0) p = &node.paths[static_cast<std::size_t>(proxy)][static_cast<std::size_t>(net_vertex)];
  }
  return p->type <= opt.gdr_level;
}

}  // namespace

const char* to_string(PathType t) {
  static const char* names[] = {"LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS", "NET", "DIS"};
  return names[static_cast<int>(t)];
}

const char* to_string(TopoKind k) {
  switch (k) {
    case TopoKind::Gpu: return "GPU";
    case TopoKind::Pci: return "PCI";
    case TopoKind::NvSwitch: return "NVS";
    case TopoKind::Cpu: return "CPU";
    case TopoKind::Nic: return "NIC";
    case TopoKind::Net: return "NET";
  }
  return "?";
}

double nccl_nvlink_bw_per_link(int sm) {
  return sm >= 100  ? 40.1
         : sm >= 90 ? 20.6
         : sm == 86 ? 12.0
         : sm >= 80 ? 20.0
         : sm >= 70 ? 20.0
         : sm >= 60 ? 18.0
                    : 20.0;
}

double nccl_pcie_bw(double gts, int width) {
  // Per-lane value in units of 100 Mb/s (kvDictPciGen); unknown speeds count as Gen3.
  const double lane = gts == 2.5  ? 15
                      : gts == 5  ? 30
                      : gts == 8  ? 60
                      : gts == 16 ? 120
                      : gts == 32 ? 240
                      : gts == 64 ? 480
                                  : 60;
  return (width <= 0 ? 16 : width) * lane / 80.0;
}

void compute_paths(NodeTopology& node, const PathOptions& options) {
  const std::size_t nv = node.vertices.size();
  node.paths.assign(nv, {});
  for (std::size_t v = 0; v < nv; ++v) {
    if (is_source_kind(node.vertices[v].kind)) node.paths[v].assign(nv, TopoPath{});
  }
  for (std::size_t v = 0; v < nv; ++v) {
    if (is_source_kind(node.vertices[v].kind)) bfs_to(node, static_cast<int>(v));
  }
  const std::vector<int> order = gpu_index_order(node);

  // P2P: GPU pairs farther apart than NCCL_P2P_LEVEL go through the destination's CPU (SHM).
  PathType p2p_level = options.p2p_level;
  if (p2p_level == PathType::Pxb && node.arch == CpuArch::X86 && node.vendor == CpuVendor::Amd &&
      node.gpus.size() <= 2) {
    p2p_level = PathType::Sys;  // AMD x86 with at most two GPUs (unless the user set a level)
  }
  for (int gr : order) {
    const int g = node.gpus[static_cast<std::size_t>(gr)];
    for (int pr : order) {
      const int p = node.gpus[static_cast<std::size_t>(pr)];
      if (node.paths[static_cast<std::size_t>(p)][static_cast<std::size_t>(g)].type > p2p_level) {
        const int cpu = local_cpu(node, g);
        if (cpu >= 0) add_inter_step(node, cpu, p, g);
      }
    }
  }

  // C2C + PHB to a NIC the GPU is closest to: P2C.
  for (int gr : order) {
    const int g = node.gpus[static_cast<std::size_t>(gr)];
    const int c = local_cpu(node, g);
    if (c < 0) continue;
    for (int ni : node.local_nets(gr)) {
      const int n = node.nets[static_cast<std::size_t>(ni)];
      const PathType merged =
          merge_path_type(node.paths[static_cast<std::size_t>(g)][static_cast<std::size_t>(c)].type,
                          node.paths[static_cast<std::size_t>(n)][static_cast<std::size_t>(c)].type);
      if (merged == PathType::P2c) {
        auto& gn = node.paths[static_cast<std::size_t>(g)][static_cast<std::size_t>(n)].type;
        auto& ng = node.paths[static_cast<std::size_t>(n)][static_cast<std::size_t>(g)].type;
        gn = std::min(PathType::P2c, gn);
        ng = std::min(PathType::P2c, ng);
      }
    }
  }

  // PXN (send through an NVLink peer's NIC) and GDR (else bounce through host memory), per NET then
  // GPU as NCCL does: a rewritten path can change later GPUs' NIC choices, as in NCCL.
  const PathType pxn_type = options.pxn_c2c ? PathType::P2c : PathType::Pxb;
  for (std::size_t ni = 0; ni < node.nets.size(); ++ni) {
    const int n = node.nets[ni];
    for (int gr : order) {
      const int g = node.gpus[static_cast<std::size_t>(gr)];
      if (!options.pxn_disable) {
        const int peer_rank = node.local_gpu_of_net(static_cast<int>(ni));
        if (peer_rank >= 0 && peer_rank != gr) {
          const int peer = node.gpus[static_cast<std::size_t>(peer_rank)];
          const TopoPath& peer_net = node.paths[static_cast<std::size_t>(peer)][static_cast<std::size_t>(n)];
          const TopoPath& own_net = node.paths[static_cast<std::size_t>(g)][static_cast<std::size_t>(n)];
          if (peer_net.type <= pxn_type && gdr_enabled(node, peer, n, true, options) &&
              node.paths[static_cast<std::size_t>(peer)][static_cast<std::size_t>(g)].type <= PathType::Nvl &&
              (peer_net.bw > own_net.bw || own_net.type > PathType::Pxn)) {
            add_inter_step(node, peer, g, n);
          }
        }
      }
      if (node.paths[static_cast<std::size_t>(g)][static_cast<std::size_t>(n)].type < PathType::Phb &&
          !gdr_enabled(node, g, n, false, options)) {
        const int cpu = local_cpu(node, g);
        if (cpu >= 0) {
          add_inter_step(node, cpu, n, g);
          add_inter_step(node, cpu, g, n);
        }
      }
    }
  }
}

std::vector<int> NodeTopology::local_nets(int gpu) const {
  const int g = gpus.at(static_cast<std::size_t>(gpu));
  return best_targets(
      *this, g, [&](std::size_t i) { return nets[i]; }, nets.size());
}

NodeTopology::ChannelNets NodeTopology::channel_nets(int gpu) const {
  ChannelNets out;
  out.nets = local_nets(gpu);
  const std::vector<int>& mine = out.nets;
  if (mine.empty()) return out;
  // How many GPUs share the first local NIC (the count does not depend on the GPU order).
  const int first = nets[static_cast<std::size_t>(mine[0])];
  const std::size_t local_gpu_count =
      std::max<std::size_t>(1, best_targets(
                                   *this, first, [&](std::size_t i) { return gpus[i]; }, gpus.size())
                                   .size());
  const int count = static_cast<int>(mine.size());
  const int nets_per_gpu = (count + static_cast<int>(local_gpu_count) - 1) / static_cast<int>(local_gpu_count);
  int net =
      vertices[static_cast<std::size_t>(gpus[static_cast<std::size_t>(gpu)])].dev % static_cast<int>(local_gpu_count);
  if (net < 0) net = 0;
  if ((count & (count - 1)) == 0) {
    // Bit-mirror the start so GPUs sharing a power-of-two set of NICs spread over them.
    int mirror = 0;
    for (int b = 1, mb = count >> 1; b < count; b <<= 1, mb >>= 1)
      if (net & b) mirror |= mb;
    net = mirror;
  }
  out.start = net;
  out.per_gpu = nets_per_gpu;
  return out;
}

int NodeTopology::local_gpu_of_net(int net) const {
  const std::vector<int> order = gpu_index_order(*this);
  const std::vector<int> locals = local_gpus_of_net_vertex(*this, nets.at(static_cast<std::size_t>(net)), order);
  std::vector<ChannelNets> by_gpu;
  by_gpu.reserve(locals.size());
  for (int g : locals) by_gpu.push_back(channel_nets(g));
  for (int c = 0; c < 64; ++c) {
    for (std::size_t i = 0; i < locals.size(); ++i) {
      if (by_gpu[i].at(c) == net) return locals[i];
    }
  }
  return -1;
}

double NodeTopology::max_bw(bool multi_node) const {
  if (!multi_node && gpus.size() == 1) return kLocBw;
  double best = 0;
  for (int g : gpus) {
    const auto& row = paths[static_cast<std::size_t>(g)];
    for (int t : multi_node ? nets : gpus) {
      const TopoPath& p = row[static_cast<std::size_t>(t)];
      if (!p.links.empty()) best = std::max(best, p.bw);
    }
  }
  return best;
}

double NodeTopology::total_bw() const {
  double best = 0;
  for (int g : gpus) {
    double nvl = 0, pci = 0;
    for (const TopoLink& l : vertices[static_cast<std::size_t>(g)].links) {
      if (l.type == TopoLinkType::Nvl) nvl += l.bw;
      if (l.type == TopoLinkType::Pci) pci = l.bw;
    }
    best = std::max({best, nvl, pci});
  }
  return best;
}

NodeTopology restrict_to_gpus(const NodeTopology& node, const std::vector<int>& local_ranks,
                              const std::vector<bool>& keep_net) {
  TRAINSIM_CHECK(keep_net.empty() || keep_net.size() == node.nets.size(),
                 "restrict_to_gpus: " + std::to_string(keep_net.size()) + " NET flags for " +
                     std::to_string(node.nets.size()) + " NETs");
  std::vector<char> drop_vertex(node.vertices.size(), 0);
  for (std::size_t n = 0; n < keep_net.size(); ++n)
    if (!keep_net[n]) drop_vertex[static_cast<std::size_t>(node.nets[n])] = 1;
  std::vector<char> keep_gpu(node.gpus.size(), 0);
  for (int r : local_ranks) {
    if (r < 0 || r >= static_cast<int>(node.gpus.size())) {
      throw Error("restrict_to_gpus: local rank " + std::to_string(r) + " is not on this node (" +
                  std::to_string(node.gpus.size()) + " GPUs)");
    }
    if (keep_gpu[static_cast<std::size_t>(r)]) {
      throw Error("restrict_to_gpus: local rank " + std::to_string(r) + " listed twice");
    }
    keep_gpu[static_cast<std::size_t>(r)] = 1;
  }
  std::vector<int> remap(node.vertices.size(), -1);
  NodeTopology out;
  for (std::size_t v = 0; v < node.vertices.size(); ++v) {
    const TopoVertex& x = node.vertices[v];
    if (x.kind == TopoKind::Gpu && !keep_gpu[static_cast<std::size_t>(x.rank)]) continue;
    if (drop_vertex[v]) continue;
    remap[v] = static_cast<int>(out.vertices.size());
    out.vertices.push_back(x);
  }
  for (TopoVertex& x : out.vertices) {
    std::vector<TopoLink> links;
    for (const TopoLink& l : x.links)
      if (remap[static_cast<std::size_t>(l.to)] >= 0)
        links.push_back({remap[static_cast<std::size_t>(l.to)], l.type, l.bw});
    x.links = std::move(links);
  }
  for (std::size_t i = 0; i < local_ranks.size(); ++i) {
    const int v = remap[static_cast<std::size_t>(node.gpus[static_cast<std::size_t>(local_ranks[i])])];
    out.vertices[static_cast<std::size_t>(v)].rank = static_cast<int>(i);
    out.gpus.push_back(v);
  }
  for (std::size_t n = 0; n < node.nets.size(); ++n) {
    if (!keep_net.empty() && !keep_net[n]) continue;
    out.nets.push_back(remap[static_cast<std::size_t>(node.nets[n])]);
    out.net_origin.push_back(node.original_net(static_cast<int>(n)));
  }
  for (int c : node.cpus) out.cpus.push_back(remap[static_cast<std::size_t>(c)]);
  out.nvswitch = node.nvswitch >= 0 ? remap[static_cast<std::size_t>(node.nvswitch)] : -1;
  out.arch = node.arch;
  out.vendor = node.vendor;
  out.sm = 0;
  for (int g : out.gpus) {
    const int sm = out.vertices[static_cast<std::size_t>(g)].sm;
    out.sm = out.sm == 0 ? sm : std::min(out.sm, sm);
  }
  return out;
}

}  // namespace trainsim
