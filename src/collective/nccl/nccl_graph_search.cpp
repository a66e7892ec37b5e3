// ncclTopoCompute on one node (NCCL src/graph/search.cc), reproduced step for step: the same depth-first walk
// (NET -> GPU -> ... -> GPU -> NET), the same candidate order, bandwidth bookkeeping in float with
// NCCL's 1/1000 rounding, the same per-try and global step budgets (they decide which solution a
// timed-out search keeps, so they are part of the result), the same odometer of relaxations and the
// same channel duplication. The only additions are a hard cap on total steps (2^25, ~10x what the
// slowest case seen needs: NCCL's global timeout does not stop a search that has found nothing yet),
// so no input can make the simulator spin, and the rounding of the reported float bandwidths to
// 1e-4 GB/s.
#include "collective/nccl/nccl_constants.hpp"
#include "collective/nccl/nccl_graph_search.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <tuple>

#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

using nccl::kMaxChannels;
using nccl::kMaxNvlsArity;
constexpr int kMaxDirectArity = 7;  // NCCL_MAX_DIRECT_ARITY
constexpr std::int64_t kGlobalTimeout = 1LL << 19;
constexpr int kTimeout = 1 << 14;
constexpr int kTimeoutTree = 1 << 14;
constexpr int kTimeoutSameChannels = 1 << 8;
constexpr int kPciOrderBudget = 1 << 10;
// trainsim's own backstop (see file comment). NCCL's global timeout only ends pass 1 once a solution
// exists, so a pattern that needs many channels at a low speed walks the whole relaxation ladder first:
// a tree for 4 of 8 DGX-H100 GPUs (8 channels demanded by the ring) takes ~3.1M steps before NCCL
// finds it at 24 GB/s; the cap must stay well above that or the search falls back to 0.1 GB/s SYS.
constexpr std::int64_t kHardStepCap = 1LL << 25;

enum Forced { kFreeOrder = 0, kPciOrder = 1, kReplayOrder = 2 };

int pt(PathType t) { return static_cast<int>(t); }
constexpr int kPathDis = 11, kPathSys = 9, kPathPxn = 7, kPathPix = 4, kPathLoc = 0;

// Speed ladders, GB/s per channel (search.cc).
const std::vector<float>& ladder(int sm, bool inter) {
  static const std::vector<float> intra_old{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  static const std::vector<float> inter_old{48, 30, 28, 24, 20, 18,   15,   12,    10,   9,
                                            7,  6,  5,  4,  3,  2.4f, 1.2f, 0.24f, 0.12f};
  static const std::vector<float> intra_90{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<float> inter_90{48, 45, 42, 40, 30,   24,   22,    20,   17.5f,
                                           15, 12, 6,  3,  2.4f, 1.2f, 0.24f, 0.12f};
  static const std::vector<float> intra_100{90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  static const std::vector<float> inter_100{96, 86,    80, 48, 45.1f, 42, 40,   30,   24,    22,
                                            20, 17.5f, 15, 12, 6,     3,  2.4f, 1.2f, 0.24f, 0.12f};
  if (inter) return sm >= 100 ? inter_100 : sm >= 90 ? inter_90 : inter_old;
  return sm >= 100 ? intra_100 : sm >= 90 ? intra_90 : intra_old;
}

// struct ncclTopoGraph, with GPUs as search indices (NCCL's GPU order) and NETs as indices into
// NodeTopology::nets.
struct Graph {
  GraphPattern pattern = GraphPattern::Ring;
  int nChannels = 0;
  float bwIntra = 0, bwInter = 0, latencyInter = 0;
  int typeIntra = 0, typeInter = 0;
  int sameChannels = 0, crossNic = 0;
  int minChannels = 1, maxChannels = 1;
  int nHops = 0;
  bool collNet = false;
  std::vector<int> intra;  // kMaxChannels × ngpus
  std::vector<int> inter;  // kMaxChannels × 2
};

// roundf (halves away from zero) without the libm call; floats of 2^23 and more are integers already.
float round_half_away(float x) {
  if (!(std::fabs(x) < 8388608.0f)) return x;
  const float t = static_cast<float>(static_cast<std::int32_t>(x));
  const float frac = x - t;
  return frac >= 0.5f ? t + 1 : frac <= -0.5f ? t - 1 : t;
}

// SUB_ROUND: NCCL rounds every bandwidth update to 1/1000 GB/s to keep float drift out of the search.
float sub_round(float a, float b) { return round_half_away((a - b) * 1000.0f) / 1000.0f; }

// NodeGraphSearch::net_moves: a NET bandwidth moved by d moves what is left of it by d and at most one rounding to
// the 1/1000 grid (sub_round; after that the speeds taken and given back are on the grid), plus float noise.
constexpr double kNetMarginSlack = 0.002;

class Searcher {
 public:
  Searcher(const NodeTopology& node, const SearchOptions& options) : node_(node), options_(options) {
    TRAINSIM_CHECK(node.paths.size() == node.vertices.size(),
                   "NCCL graph search: compute_paths must run on the node topology first");
    inter_ = options.multi_node;
    // NCCL's GPU index order = vertex (XML) order.
    for (std::size_t r = 0; r < node.gpus.size(); ++r) gpu_vertex_.push_back(node.gpus[r]);
    std::sort(gpu_vertex_.begin(), gpu_vertex_.end());
    ngpus_ = static_cast<int>(gpu_vertex_.size());
    for (int v : gpu_vertex_) gpu_rank_.push_back(vx(v).rank);
    nnets_ = static_cast<int>(node.nets.size());
    std::vector<int> index_of_rank(node.gpus.size(), -1);
    for (int s = 0; s < ngpus_; ++s)
      index_of_rank[static_cast<std::size_t>(gpu_rank_[static_cast<std::size_t>(s)])] = s;

    int total = 0;
    for (const TopoVertex& v : node.vertices) {
      link_base_.push_back(total);
      total += static_cast<int>(v.links.size());
    }
    bw_.reserve(static_cast<std::size_t>(total));
    for (const TopoVertex& v : node.vertices)
      for (const TopoLink& l : v.links) bw_.push_back(static_cast<float>(l.bw));
    for (int n : node.nets) net_bw_.push_back(static_cast<float>(vx(n).net_bw));
    // The NETs that share each one's bandwidth (ports of one NIC ASIC, itself included), found once: the search
    // takes and gives back a NET's bandwidth at every channel start.
    net_siblings_.resize(node.nets.size());
    for (int n = 0; n < nnets_; ++n)
      for (int m = 0; m < nnets_; ++m)
        if (vx(nv(m)).guid == vx(nv(n)).guid && vx(nv(m)).port == vx(nv(n)).port)
          net_siblings_[static_cast<std::size_t>(n)].push_back(m);
    used_.assign(static_cast<std::size_t>(ngpus_), 0);
    // Search endpoints: GPUs (search order), NETs, the NVS; every path between two is compiled once.
    std::vector<int> ep_vertex(gpu_vertex_);
    ep_vertex.insert(ep_vertex.end(), node.nets.begin(), node.nets.end());
    if (node.nvswitch >= 0) ep_vertex.push_back(node.nvswitch);
    nvs_ep_ = node.nvswitch >= 0 ? static_cast<int>(ep_vertex.size()) - 1 : -1;
    endpoints_ = ep_vertex.size();
    compiled_.resize(endpoints_ * endpoints_);
    for (std::size_t a = 0; a < endpoints_; ++a)
      for (std::size_t b = 0; b < endpoints_; ++b) compile(compiled_[a * endpoints_ + b], ep_vertex[a], ep_vertex[b]);
    note_path_types();
    next_pool_.resize(static_cast<std::size_t>(kMaxChannels * std::max(1, ngpus_) + 1));
    for (int v : gpu_vertex_) {
      std::pair<int, int> ids{-1, -1};
      for (std::size_t l = 0; l < vx(v).links.size() && ids.first < 0; ++l) {
        const TopoLink& up = vx(v).links[l];
        if (up.type != TopoLinkType::Pci) continue;
        const auto& rl = vx(up.to).links;
        for (std::size_t k = 0; k < rl.size(); ++k) {
          if (rl[k].to == v) {
            ids = {link_base_[static_cast<std::size_t>(v)] + static_cast<int>(l),
                   link_base_[static_cast<std::size_t>(up.to)] + static_cast<int>(k)};
            break;
          }
        }
      }
      pci_links_.push_back(ids);
    }

    // Per NET: its local GPU and its closest GPUs; per GPU: its NICs by channel (ncclTopoGetLocalNet).
    for (int n = 0; n < nnets_; ++n) {
      const int r = node.local_gpu_of_net(n);
      net_local_gpu_.push_back(r >= 0 ? index_of_rank[static_cast<std::size_t>(r)] : -1);
      net_local_gpus_.push_back(closest_gpus(node.nets[static_cast<std::size_t>(n)]));
    }
    for (int s = 0; s < ngpus_; ++s) {
      pref_nets_.push_back(node.channel_nets(gpu_rank_[static_cast<std::size_t>(s)]).distinct(kMaxChannels));
    }
    const float max_bw = static_cast<float>(node.max_bw(inter_));
    sys_max_bw_ = max_bw;
    sys_total_bw_ = (!inter_ && ngpus_ == 1) ? 5000.0f : static_cast<float>(node.total_bw());
  }

  Graph compute(GraphPattern pattern, int min_channels, int max_channels);

  // The moves of the NET-dependent bandwidths that change no comparison the search made: [low, high).
  std::pair<float, float> net_moves() const { return {net_low_, net_high_}; }

  // Everything the search reads once it is set up, with the links numbered in the order the compiled paths first
  // use them: the search walks compiled paths and NET attributes only, and its graphs name local ranks and NET
  // indices, so two nodes with equal words find the same graphs, whichever hosts, NICs and bus ids they are (the
  // data-parallel copies of an NVL72 rack). What a multi-node search reads of the NETs' bandwidths goes to
  // `values` (matched loosely by the memo, NetBandwidthMoves) instead of the words.
  CanonicalSearchInputs canonical_inputs() const {
    CanonicalSearchInputs in;
    std::vector<std::uint64_t>& w = in.words;
    const auto put = [&w](std::int64_t v) { w.push_back(static_cast<std::uint64_t>(v)); };
    const auto put_float = [&w](double v) {
      const float f = static_cast<float>(v);
      std::uint32_t bits = 0;
      std::memcpy(&bits, &f, sizeof bits);
      w.push_back(bits);
    };
    put(options_.cross_nic);
    put(options_.multi_node);
    put(options_.min_channels);
    put(options_.max_channels);
    put(options_.replay_fruitless_tries);
    put(inter_);
    put(ngpus_);
    put(nnets_);
    put(static_cast<std::int64_t>(endpoints_));
    put(nvs_ep_);
    put(node_.nvswitch >= 0);
    put(node_.sm);
    put(static_cast<std::int64_t>(node_.arch));
    put(static_cast<std::int64_t>(node_.vendor));
    for (const int r : gpu_rank_) put(r);
    // Links by first use; a NET link's bandwidth is a NET input of a multi-node search.
    std::map<std::size_t, std::int64_t> canon;
    std::vector<std::pair<std::size_t, bool>> links;  // (bw_ index, touches a NET) in canonical order
    const auto link = [&](std::size_t id, bool net) {
      const auto [it, added] = canon.emplace(id, static_cast<std::int64_t>(links.size()));
      if (added) links.emplace_back(id, net);
      return it->second;
    };
    for (const CompiledPath& cp : compiled_) {
      put(cp.type);
      put(cp.rev_type);
      put(cp.nccl_hops);
      put(cp.int_bw);
      put(cp.intra);
      put(cp.intel_phb);
      put(static_cast<std::int64_t>(cp.hops.size()));
      for (const Hop& h : cp.hops) {
        put(link(h.id, h.net));
        put(h.pci);
        put(h.net);
        put(h.rev_net);
        put_float(h.rev_share);
        put(h.rev_share > 0 ? link(h.rev_id, h.rev_net) : -1);
      }
    }
    for (const auto& [up, down] : pci_links_) {
      put(up >= 0 ? link(static_cast<std::size_t>(up), false) : -1);
      put(down >= 0 ? link(static_cast<std::size_t>(down), false) : -1);
    }
    put(static_cast<std::int64_t>(links.size()));
    for (const auto& [id, net] : links) {
      if (net && inter_)
        in.values.push_back(bw_[id]);
      else
        put_float(bw_[id]);
    }
    // NETs: the search compares guid/port, rail and plane for equality only, so a guid counts by its first NET.
    std::vector<std::uint64_t> guids;
    for (int n = 0; n < nnets_; ++n) {
      const TopoVertex& v = vx(nv(n));
      const auto g = std::find(guids.begin(), guids.end(), v.guid);
      put(g - guids.begin());
      if (g == guids.end()) guids.push_back(v.guid);
      put(v.port);
      put(v.rail);
      put(v.plane);
      put_float(v.latency_us);
      if (inter_)
        in.values.push_back(net_bw_[static_cast<std::size_t>(n)]);
      else
        put_float(net_bw_[static_cast<std::size_t>(n)]);
    }
    for (const auto* lists : {&net_siblings_, &net_local_gpus_, &pref_nets_}) {
      put(static_cast<std::int64_t>(lists->size()));
      for (const std::vector<int>& list : *lists) {
        put(static_cast<std::int64_t>(list.size()));
        for (const int x : list) put(x);
      }
    }
    for (const int g : net_local_gpu_) put(g);
    put_float(sys_total_bw_);
    if (inter_)
      in.values.push_back(sys_max_bw_);
    else
      put_float(sys_max_bw_);
    return in;
  }

 private:
  // The search asked whether a NET-dependent bandwidth (what is left on a NET link or a NET, or the fastest
  // GPU-to-NET path) is below a bandwidth it wants. Moved by d, the value gives the same answer while d stays
  // below wanted - value (it was below) or at least wanted - value (it was not).
  void note_net_comparison(float value, float wanted) const {
    if (!inter_) return;
    const float d = wanted - value;
    if (value < wanted)
      net_high_ = std::min(net_high_, d);
    else
      net_low_ = std::max(net_low_, d);
  }
  // A speed compared with the node's fastest GPU-to-NET path; returns the speed.
  float note_max_bw_comparison(float speed) const {
    note_net_comparison(sys_max_bw_, speed);
    return speed;
  }

  // A try reads typeIntra / typeInter only by comparing path types with them (followPath, ncclTopoSelectNets), so
  // two limits between which no path's type lies allow the same paths: the try walks the same steps. Marks the
  // types present, inside the node (GPU and NVS ends) and towards the NETs, both directions.
  void note_path_types() {
    for (const CompiledPath& cp : compiled_) {
      if (cp.hops.empty()) continue;
      auto& present = cp.intra ? intra_types_present_ : inter_types_present_;
      for (int t : {cp.type, cp.rev_type})
        if (t >= 0 && t < kPathDis) present[static_cast<std::size_t>(t)] = true;
    }
  }
  // How many of the present types a limit allows: equal for limits that allow the same paths.
  static int allowed_types(const std::array<bool, kPathDis>& present, int limit) {
    int n = 0;
    for (int t = 0; t < kPathDis && t <= limit; ++t) n += present[static_cast<std::size_t>(t)] ? 1 : 0;
    return n;
  }

  const TopoVertex& vx(int v) const { return node_.vertices[static_cast<std::size_t>(v)]; }
  const TopoPath& path(int from, int to) const {
    return node_.paths[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
  }
  int gv(int s) const { return gpu_vertex_[static_cast<std::size_t>(s)]; }
  int nv(int n) const { return node_.nets[static_cast<std::size_t>(n)]; }
  int net_ep(int n) const { return ngpus_ + n; }
  bool is_gpu(int v) const { return vx(v).kind == TopoKind::Gpu; }

  // NCCL's hop count: every GPU end adds its GPU<->DEV LOC hop, a PXN proxy GPU two.
  int nccl_hops(int from, int to, const TopoPath& p) const {
    if (p.links.empty()) return 0;
    return p.hops() + (is_gpu(from) ? 1 : 0) + (is_gpu(to) ? 1 : 0) + (p.type == PathType::Pxn ? 2 : 0);
  }

  std::vector<int> closest_gpus(int from) const {
    std::vector<int> out;
    double max_bw = 0;
    PathType min_type = PathType::Dis;
    for (int s = 0; s < ngpus_; ++s) {
      const TopoPath& p = path(from, gv(s));
      if (p.bw > max_bw || (p.bw == max_bw && p.type < min_type)) {
        max_bw = p.bw;
        min_type = p.type;
        out.clear();
      }
      if (p.bw == max_bw && p.type == min_type) out.push_back(s);
    }
    return out;
  }

  // A path prepared for the search: its links as indices into bw_, with what each costs.
  struct Hop {
    std::size_t id = 0, rev_id = 0;
    bool pci = false;
    bool net = false, rev_net = false;  // the link (or its reverse) starts or ends at a NET
    // Takes the path's bandwidth as it is: no Intel PCIe overhead, no share on the reverse link, no NET end whose
    // comparisons the memo notes. Most hops are (NVLink), and take() walks them on a short path.
    bool plain = false;
    float rev_share = 0;  // 0, 1/8 (into a pre-Ampere GPU from a non-GPU) or 1 (POWER NVLink CPU)
  };
  struct CompiledPath {
    int type = kPathDis, rev_type = kPathDis, nccl_hops = 0;
    int int_bw = 0;  // the path bandwidth as NCCL's candidate scores hold it (truncated)
    bool intra = false, intel_phb = false;
    std::vector<Hop> hops;
  };

  void compile(CompiledPath& cp, int from, int to) const {
    const TopoPath& p = path(from, to);
    cp.type = pt(p.type);
    cp.rev_type = pt(path(to, from).type);
    cp.nccl_hops = nccl_hops(from, to, p);
    cp.int_bw = static_cast<int>(static_cast<float>(p.bw));
    cp.intra =
        (is_gpu(from) || vx(from).kind == TopoKind::NvSwitch) && (is_gpu(to) || vx(to).kind == TopoKind::NvSwitch);
    for (const auto& [v, l] : p.links) {
      const TopoLink& link = vx(v).links[static_cast<std::size_t>(l)];
      const TopoVertex& rem = vx(link.to);
      // GPU traffic through an Intel root complex costs 1.2x PCIe bandwidth (INTEL_P2P_OVERHEAD).
      if (p.type == PathType::Phb && is_gpu(from) && rem.kind == TopoKind::Cpu && rem.arch == CpuArch::X86 &&
          rem.vendor == CpuVendor::Intel) {
        cp.intel_phb = true;
      }
      Hop h;
      h.id = static_cast<std::size_t>(link_base_[static_cast<std::size_t>(v)] + l);
      h.pci = link.type == TopoLinkType::Pci;
      h.net = vx(v).kind == TopoKind::Net || rem.kind == TopoKind::Net;
      const bool old_gpu = rem.kind == TopoKind::Gpu && rem.sm < 80 && !is_gpu(from);
      const bool power_nvl = rem.kind == TopoKind::Cpu && rem.arch == CpuArch::Power && link.type == TopoLinkType::Nvl;
      if (old_gpu || power_nvl) {
        const auto& rl = rem.links;
        for (std::size_t k = 0; k < rl.size(); ++k) {
          if (rl[k].to == v && rl[k].type == link.type) {
            h.rev_id = static_cast<std::size_t>(link_base_[static_cast<std::size_t>(link.to)]) + k;
            h.rev_share = old_gpu ? 0.125f : 1.0f;
            h.rev_net = h.net;
            break;
          }
        }
      }
      cp.hops.push_back(h);
    }
    for (Hop& h : cp.hops) h.plain = !h.net && h.rev_share == 0 && (!h.pci || !cp.intel_phb);
  }

  // followPath: take `bw` from every link, stopping at the first link that lacks it; returns how
  // many links were taken.
  int take(const CompiledPath& cp, int max_steps, float bw) {
    const float pci_bw = cp.intel_phb ? bw * 6 / 5 : bw;
    for (int step = 0; step < max_steps; ++step) {
      const Hop& h = cp.hops[static_cast<std::size_t>(step)];
      if (h.plain) {
        float& left = bw_[h.id];
        if (left < bw) return step;
        left = sub_round(left, bw);
        continue;
      }
      const float fw = h.pci ? pci_bw : bw;
      const float rev = h.rev_share == 0 ? 0.0f : h.rev_share == 1 ? fw : fw / 8;
      if (h.net) note_net_comparison(bw_[h.id], fw);
      if (h.rev_net && rev != 0) note_net_comparison(bw_[h.rev_id], rev);
      if (bw_[h.id] < fw || (rev != 0 && bw_[h.rev_id] < rev)) return step;
      bw_[h.id] = sub_round(bw_[h.id], fw);
      if (rev != 0) bw_[h.rev_id] = sub_round(bw_[h.rev_id], rev);
    }
    return max_steps;
  }

  // ncclTopoFollowPath between search endpoints (GPU s = s, NET n = ngpus + n, then the NVS): true
  // if from -> to fits the graph's type limit and bandwidth (taken, or given back for mult < 0).
  // from < 0 means "no previous vertex".
  bool follow(Graph& g, int from, int to, float mult) {
    if (from < 0) return true;
    const CompiledPath& cp = compiled_[static_cast<std::size_t>(from) * endpoints_ + static_cast<std::size_t>(to)];
    float bw = cp.intra ? g.bwIntra : g.bwInter;
    const int type = cp.intra ? g.typeIntra : g.typeInter;
    if (cp.type >= kPathDis) return false;
    if (mult == 1 && cp.type > type) return false;
    const bool tree = g.pattern == GraphPattern::BalancedTree || g.pattern == GraphPattern::Tree ||
                      g.pattern == GraphPattern::SplitTree;
    if (mult == 1 && tree && cp.rev_type > type) return false;
    bw *= mult;
    const int count = static_cast<int>(cp.hops.size());
    const int step = take(cp, count, bw);
    if (step < count) {
      take(cp, step, -bw);
      return false;
    }
    g.nHops = static_cast<int>(static_cast<float>(g.nHops) + mult * static_cast<float>(cp.nccl_hops));
    return true;
  }

  // gpuPciBw: the GPU's PCIe link bandwidth left in both directions (live, as NCCL reads it).
  int gpu_pci_bw(int s) const {
    const auto& [up, down] = pci_links_[static_cast<std::size_t>(s)];
    if (up < 0) return -1;
    return static_cast<int>(std::min(bw_[static_cast<std::size_t>(up)], bw_[static_cast<std::size_t>(down)]));
  }

  // ncclTopoSearchNextGpuSort.
  void next_gpus(const Graph& g, int s, int sort_net, std::vector<int>& out) {
    const std::uint64_t flag = 1ULL << g.nChannels;
    const auto usable = [&](int x) {
      return x != s &&
             !compiled_[static_cast<std::size_t>(s) * endpoints_ + static_cast<std::size_t>(x)].hops.empty() &&
             !(used_[static_cast<std::size_t>(x)] & flag);
    };
    out.clear();
    if (node_.nvswitch >= 0) {
      // NVSwitch: only the neighbours are tried; each found one is moved to the front in turn.
      const int prev = (s - 1 + ngpus_) % ngpus_, next = (s + 1) % ngpus_;
      int first[2] = {next, prev};
      int nfirst = 1;
      if (g.pattern == GraphPattern::Ring) nfirst = 2;
      if (g.pattern == GraphPattern::SplitTree || g.pattern == GraphPattern::BalancedTree) {
        first[0] = prev;
        first[1] = next;
        nfirst = 2;
      }
      if (next == prev) nfirst = 1;
      for (int i = 0; i < nfirst; ++i)
        if (usable(first[i])) out.insert(out.begin(), first[i]);
      return;
    }
    std::vector<Score>& scores = scores_;
    scores.clear();
    const int start_net = sort_net ? g.inter[static_cast<std::size_t>(g.nChannels * 2)] : -1;
    for (int i = 1; i < ngpus_; ++i) {
      const int x = (s + i) % ngpus_;
      if (!usable(x)) continue;
      const CompiledPath& p = compiled_[static_cast<std::size_t>(s) * endpoints_ + static_cast<std::size_t>(x)];
      Score sc{x, i, p.nccl_hops, p.int_bw, 0, 0, 0};
      if (start_net >= 0) {
        const CompiledPath& np =
            compiled_[static_cast<std::size_t>(net_ep(start_net)) * endpoints_ + static_cast<std::size_t>(x)];
        sc.inter_hops = np.nccl_hops;
        sc.inter_pci_bw = gpu_pci_bw(x);
        sc.inter_bw = np.int_bw;
      }
      scores.push_back(sc);
    }
    std::sort(scores.begin(), scores.end(), [](const Score& a, const Score& b) {
      if (a.inter_bw != b.inter_bw) return a.inter_bw > b.inter_bw;
      if (a.inter_pci_bw != b.inter_pci_bw) return a.inter_pci_bw > b.inter_pci_bw;
      if (a.inter_hops != b.inter_hops) return a.inter_hops < b.inter_hops;
      if (a.intra_bw != b.intra_bw) return a.intra_bw > b.intra_bw;
      if (a.intra_hops != b.intra_hops) return a.intra_hops < b.intra_hops;
      return a.start < b.start;
    });
    bool same_intra = true;
    for (const Score& sc : scores)
      if (sc.intra_bw != scores[0].intra_bw || sc.intra_hops != scores[0].intra_hops) same_intra = false;
    for (const Score& sc : scores) out.push_back(sc.g);
    if (sort_net == -1 && same_intra) std::reverse(out.begin(), out.end());
  }

  // ncclTopoSelectNets (single host, NCCL_NETDEVS_POLICY=AUTO): each GPU's NICs by channel, then every
  // NIC whose path type is at most type_inter, by type.
  const std::vector<int>& select_nets(int type_inter, int s) {
    const auto key = std::make_pair(type_inter, s);
    const auto it = select_cache_.find(key);
    if (it != select_cache_.end()) return it->second;
    std::vector<int> nets;
    std::vector<char> seen(static_cast<std::size_t>(nnets_), 0);
    const auto add = [&](int n) {
      if (!seen[static_cast<std::size_t>(n)]) {
        seen[static_cast<std::size_t>(n)] = 1;
        nets.push_back(n);
      }
    };
    for (int x = 0; x < ngpus_; ++x) {
      if (s != -1 && s != x) continue;
      for (int n : pref_nets_[static_cast<std::size_t>(x)]) add(n);
    }
    for (int t = 0; t <= type_inter; ++t) {
      for (int x = 0; x < ngpus_; ++x) {
        if (s != -1 && s != x) continue;
        for (int n = 0; n < nnets_ && n < kMaxChannels; ++n)
          if (pt(path(gv(x), nv(n)).type) == t) add(n);
      }
    }
    return select_cache_.emplace(key, std::move(nets)).first->second;
  }

  // ncclTopoSearchCheckNet.
  bool net_allowed(const Graph& g, int start, int n, int step) const {
    const TopoVertex& a = vx(nv(n));
    const TopoVertex& b = vx(nv(start));
    if (a.plane != -1 && b.plane != -1 && a.plane != b.plane) return false;
    if (g.pattern == GraphPattern::Tree && n != start) return false;
    if (g.pattern == GraphPattern::Ring && g.crossNic == 2) {
      if ((g.nChannels & 1) && n != g.inter[static_cast<std::size_t>((g.nChannels - 1) * 2)]) return false;
    } else if (g.crossNic == 0) {
      if (a.rail != -1 && b.rail != -1) {
        if (a.rail != b.rail) return false;
      } else if (a.guid != b.guid || a.port != b.port) {
        return false;
      }
    }
    if (g.pattern == GraphPattern::BalancedTree && step != 0 &&
        n != g.inter[static_cast<std::size_t>(g.nChannels * 2 + 1)]) {
      return false;
    }
    return true;
  }

  bool better(const Graph& g, const Graph& ref) const {
    if (g.nChannels < g.minChannels) return false;
    if (g.pattern == GraphPattern::Nvls) {
      // More heads pulling from NVLS are better, then more total inter bandwidth.
      if (g.nChannels > ref.nChannels && g.nChannels <= ngpus_) return true;
      return static_cast<float>(g.nChannels) * g.bwInter > static_cast<float>(ref.nChannels) * ref.bwInter;
    }
    const float mine = static_cast<float>(g.nChannels) * g.bwIntra;
    const float theirs = static_cast<float>(ref.nChannels) * ref.bwIntra;
    if (mine > theirs) return true;
    if (mine < theirs) return false;
    return g.pattern == ref.pattern && g.crossNic == ref.crossNic && g.nHops < ref.nHops;
  }

  void try_gpu(Graph& g, Graph& save, int step, int back_to_net, int back_to_first, int forced, int& time, int from,
               int s) {
    const std::uint64_t flag = 1ULL << g.nChannels;
    if (!follow(g, from, s, 1)) return;
    used_[static_cast<std::size_t>(s)] ^= flag;
    rec_gpu(g, save, s, step, back_to_net, back_to_first, forced, time);
    used_[static_cast<std::size_t>(s)] ^= flag;
    follow(g, from, s, -1);
  }

  void try_nvls(Graph& g, Graph& save, int head, int& time) {
    const int nvs = nvs_ep_;
    int d0 = 0;
    bool ok = true;
    // NVS -> every GPU (the head twice), then every GPU -> NVS.
    do {
      ok = follow(g, nvs, d0, d0 == head ? 2.0f : 1.0f);
      ++d0;
    } while (ok && d0 < ngpus_);
    if (!ok) {
      --d0;
    } else {
      int d1 = 0;
      do {
        ok = follow(g, d1, nvs, d1 == head ? 2.0f : 1.0f);
        ++d1;
      } while (ok && d1 < ngpus_);
      if (!ok)
        --d1;
      else
        rec_gpu(g, save, -1, ngpus_, -1, -1, kFreeOrder, time);
      while (d1) {
        --d1;
        follow(g, d1, nvs, d1 == head ? -2.0f : -1.0f);
      }
    }
    while (d0) {
      --d0;
      follow(g, nvs, d0, d0 == head ? -2.0f : -1.0f);
    }
  }

  void try_collnet_direct(Graph& g, Graph& save, int head, int& time) {
    const float mul = 1.0f / static_cast<float>(ngpus_ - 1);
    int fwd = 0, bwd = 0;
    bool ok = true;
    do { ok = follow(g, head, fwd, mul); } while (ok && ++fwd < ngpus_);
    if (ok) {
      do { ok = follow(g, bwd, head, mul); } while (ok && ++bwd < ngpus_);
      if (ok) {
        int step = 1;
        for (int x = 0; x < ngpus_; ++x) {
          if (x != head) g.intra[static_cast<std::size_t>(g.nChannels * ngpus_ + step++)] = x;
        }
        rec_gpu(g, save, -1, ngpus_, -1, -1, kFreeOrder, time);
      }
      while (bwd) {
        --bwd;
        follow(g, bwd, head, -mul);
      }
    }
    while (fwd) {
      --fwd;
      follow(g, head, fwd, -mul);
    }
  }

  // ncclTopoSearchRecGpu. s = current GPU (search index), -1 when the channel is complete.
  void rec_gpu(Graph& g, Graph& save, int s, int step, int back_to_net, int back_to_first, int forced, int& time) {
    if (time <= 0) return;
    --time;
    if (++total_steps_ > kHardStepCap) {
      time = 0;
      exhausted_ = true;
      return;
    }
    if (step == ngpus_) {
      ++g.nChannels;
      if (better(g, save)) {
        save = g;
        if (g.nChannels == g.maxChannels) time = -1;
      }
      if (g.nChannels < g.maxChannels) search_rec(g, save, time);
      --g.nChannels;
      return;
    }
    g.intra[static_cast<std::size_t>(g.nChannels * ngpus_ + step)] = s;
    if (step == back_to_net) {
      if (!inter_) return;
      const int start = g.inter[static_cast<std::size_t>(g.nChannels * 2)];
      const std::vector<int>& nets = select_nets(g.typeInter, s);  // std::map entries stay put
      for (int n : nets) {
        if (!net_allowed(g, start, n, step)) continue;
        int next_back = -1;
        const float saved = g.bwInter;
        if (g.pattern == GraphPattern::BalancedTree) {
          // The NIC traffic is split over the first two GPUs: half the bandwidth on each.
          if (step == 0) next_back = 1;
          g.bwInter /= 2;
        }
        const bool ok = follow(g, s, net_ep(n), 1);
        g.bwInter = saved;
        if (!ok) continue;
        g.inter[static_cast<std::size_t>(g.nChannels * 2 + 1)] = n;
        rec_gpu(g, save, s, step, next_back, back_to_first, forced, time);
        if (g.pattern == GraphPattern::BalancedTree) g.bwInter /= 2;
        follow(g, s, net_ep(n), -1);
        g.bwInter = saved;
      }
    } else if (g.pattern == GraphPattern::Nvls) {
      try_nvls(g, save, s, time);
    } else if (g.pattern == GraphPattern::CollNetDirect) {
      try_collnet_direct(g, save, s, time);
    } else if (step < ngpus_ - 1) {
      const std::size_t depth = static_cast<std::size_t>(g.nChannels * ngpus_ + step);
      std::vector<int>& next = next_pool_[depth];  // sized up front: outer frames hold references
      next.clear();
      if (forced == kPciOrder) {
        next.push_back(step + 1);
      } else if (forced == kReplayOrder) {
        next.push_back(g.intra[static_cast<std::size_t>((g.nChannels - 1) * ngpus_ + step + 1)]);
      } else {
        next_gpus(g, s, back_to_net == -1 ? 0 : back_to_net == step + 1 ? 1 : -1, next);
      }
      for (std::size_t i = 0; i < next.size(); ++i) {
        try_gpu(g, save, step + 1, back_to_net, back_to_first, forced, time, s, next[i]);
      }
    } else if (step == back_to_first) {
      const int first = g.intra[static_cast<std::size_t>(g.nChannels * ngpus_)];
      if (follow(g, s, first, 1)) {
        rec_gpu(g, save, first, step + 1, back_to_net, -1, forced, time);
        follow(g, s, first, -1);
      }
    } else {
      rec_gpu(g, save, s, ngpus_, -1, -1, forced, time);
    }
  }

  // ncclTopoSearchRecNet: start a channel from each candidate NET.
  void rec_net(Graph& g, Graph& save, int back_to_net, int back_to_first, int& time) {
    const int bw = static_cast<int>(g.bwInter);  // NCCL truncates here
    const std::vector<int>& nets = select_nets(g.typeInter, -1);
    const int count = static_cast<int>(nets.size());
    bool found = false;
    const bool heads = g.pattern == GraphPattern::Nvls || g.pattern == GraphPattern::CollNetDirect;
    for (int i = 0; i < count; ++i) {
      if (heads && found) break;
      const int n = nets[static_cast<std::size_t>((g.nChannels + i) % count)];
      note_net_comparison(net_bw_[static_cast<std::size_t>(n)], static_cast<float>(bw));
      if (net_bw_[static_cast<std::size_t>(n)] < static_cast<float>(bw)) continue;
      if (g.pattern == GraphPattern::Ring && g.crossNic == 2 && (g.nChannels & 1) &&
          n != g.inter[static_cast<std::size_t>((g.nChannels - 1) * 2 + 1)]) {
        continue;  // odd channels enter where the previous one left
      }
      g.inter[static_cast<std::size_t>(g.nChannels * 2)] = n;
      g.latencyInter = static_cast<float>(vx(nv(n)).latency_us);
      share_net_bw(n, -static_cast<float>(bw));
      if (heads) {
        if (g.nChannels < count) {
          const int s = net_local_gpu_[static_cast<std::size_t>(n)];
          if (s != -1) {
            bool duplicate = false;
            for (int c = 0; c < g.nChannels; ++c)
              if (g.intra[static_cast<std::size_t>(c * ngpus_)] == s) duplicate = true;
            if (!duplicate) {
              try_gpu(g, save, 0, back_to_net, back_to_first, kFreeOrder, time, net_ep(n), s);
              found = true;
            }
          }
        }
      } else if (g.nChannels > 0 && g.sameChannels == 1) {
        const int s = g.intra[static_cast<std::size_t>((g.nChannels - 1) * ngpus_)];
        try_gpu(g, save, 0, back_to_net, back_to_first, kReplayOrder, time, net_ep(n), s);
      } else {
        if (g.nChannels == 0 && node_.nvswitch < 0) {
          // PCI order first as a reference, on its own small budget.
          int t = kPciOrderBudget;
          try_gpu(g, save, 0, back_to_net, back_to_first, kPciOrder, t, net_ep(n), 0);
          if (t == -1) time = -1;
        }
        const int local = net_local_gpu_[static_cast<std::size_t>(n)];
        if (local != -1) try_gpu(g, save, 0, back_to_net, back_to_first, kFreeOrder, time, net_ep(n), local);
        for (int s : net_local_gpus_[static_cast<std::size_t>(n)]) {
          if (s != local) try_gpu(g, save, 0, back_to_net, back_to_first, kFreeOrder, time, net_ep(n), s);
        }
      }
      share_net_bw(n, static_cast<float>(bw));
    }
  }

  // Ports of one NIC ASIC share its bandwidth.
  void share_net_bw(int n, float delta) {
    for (int m : net_siblings_[static_cast<std::size_t>(n)]) net_bw_[static_cast<std::size_t>(m)] += delta;
  }

  void search_rec(Graph& g, Graph& save, int& time) {
    int back_to_net = -1, back_to_first = -1;
    if (inter_) {
      back_to_net = g.pattern == GraphPattern::Ring ? ngpus_ - 1 : g.pattern == GraphPattern::SplitTree ? 1 : 0;
    } else if (g.pattern == GraphPattern::Ring) {
      back_to_first = ngpus_ - 1;
    }
    if (inter_) {
      rec_net(g, save, back_to_net, back_to_first, time);
      return;
    }
    if (g.pattern == GraphPattern::Nvls) {
      try_gpu(g, save, 0, back_to_net, back_to_first, kFreeOrder, time, -1, g.nChannels);
      return;
    }
    if (g.nChannels == 0) {
      try_gpu(g, save, 0, back_to_net, back_to_first, kPciOrder, time, -1, 0);
    } else {
      const int s = g.intra[static_cast<std::size_t>((g.nChannels - 1) * ngpus_)];
      try_gpu(g, save, 0, back_to_net, back_to_first, kReplayOrder, time, -1, s);
    }
    if (g.sameChannels == 0 || g.nChannels == 0) {
      for (int s = 0; s < ngpus_; ++s) try_gpu(g, save, 0, back_to_net, back_to_first, kFreeOrder, time, -1, s);
    }
  }

  // Lowest / highest path type from any GPU to GPUs (others than itself) or NETs.
  std::pair<int, int> path_type_range(bool to_nets) const {
    int lo = kPathSys, hi = kPathLoc;
    for (int s = 0; s < ngpus_; ++s) {
      const int count = to_nets ? nnets_ : ngpus_;
      for (int t = 0; t < count; ++t) {
        if (!to_nets && t == s) continue;
        const int type = pt(path(gv(s), to_nets ? nv(t) : gv(t)).type);
        lo = std::min(lo, type);
        hi = std::max(hi, type);
      }
    }
    return {lo, hi};
  }

  // Two NVLink islands joined by something slower (e.g. QPI).
  bool split_nvlink() const {
    std::vector<int> domain(static_cast<std::size_t>(ngpus_));
    for (int s = 0; s < ngpus_; ++s) domain[static_cast<std::size_t>(s)] = s;
    for (int s = 0; s < ngpus_; ++s)
      for (int p = s + 1; p < ngpus_; ++p)
        if (path(gv(s), gv(p)).type == PathType::Nvl)
          domain[static_cast<std::size_t>(p)] = domain[static_cast<std::size_t>(s)];
    std::vector<int> size(static_cast<std::size_t>(ngpus_), 0);
    for (int d : domain) ++size[static_cast<std::size_t>(d)];
    return std::count_if(size.begin(), size.end(), [](int n) { return n > 1; }) == 2;
  }

  void dup_channels(Graph& g, int cc_min) const {
    if (g.nChannels == 0 || g.pattern == GraphPattern::Nvls) return;
    if (g.bwIntra < 25.0f) return;
    if (cc_min > 80 && g.bwIntra < 50.0f && g.nChannels > 4) return;
    const int dup = std::min(g.nChannels * 2, g.maxChannels);
    for (int c = g.nChannels; c < dup; ++c) {
      for (int i = 0; i < ngpus_; ++i) {
        g.intra[static_cast<std::size_t>(c * ngpus_ + i)] =
            g.intra[static_cast<std::size_t>((c - g.nChannels) * ngpus_ + i)];
      }
      g.inter[static_cast<std::size_t>(c * 2)] = g.inter[static_cast<std::size_t>((c - g.nChannels) * 2)];
      g.inter[static_cast<std::size_t>(c * 2 + 1)] = g.inter[static_cast<std::size_t>((c - g.nChannels) * 2 + 1)];
    }
    const int factor = (dup + g.nChannels - 1) / g.nChannels;
    g.bwIntra /= static_cast<float>(factor);
    g.bwInter /= static_cast<float>(factor);
    g.nChannels = dup;
  }

  // ---- compute(), step by step (ncclTopoCompute) ---------------------------------------------------------------

  // The ends of the relaxation ladder for one pattern: how far the path types may be relaxed, whether
  // NCCL_CROSS_NIC applies and whether channels are first tried as copies of the previous one.
  struct SearchBounds {
    int cc_min = 90;    // the node's compute capability (90 when unknown)
    int cross_nic = 0;  // NCCL_CROSS_NIC where it applies (several NICs, a ring or split/balanced tree), else 0
    int try_same = 1;   // 1: try sameChannels first (all patterns but NVLS)
    int min_type_intra = kPathLoc, max_type_intra = kPathSys;
    int min_type_inter = kPathPix, max_type_inter = kPathSys;
  };

  // What a try's outcome depends on when no solution is in hand (then better() compares with nothing): the trial's
  // pattern, bounds, speeds, NIC rule, the path types its limits allow, and its step budget.
  using FruitlessTry = std::tuple<int, int, float, float, int, int, int, int, int, int>;
  struct FruitlessOutcome {
    std::int64_t steps = 0;
    int time_left = 0;
  };
  FruitlessTry fruitless_key(const Graph& trial, int budget) const {
    return {static_cast<int>(trial.pattern),
            trial.sameChannels,
            trial.bwIntra,
            trial.bwInter,
            allowed_types(intra_types_present_, trial.typeIntra),
            allowed_types(inter_types_present_, trial.typeInter),
            trial.crossNic,
            trial.minChannels,
            trial.maxChannels,
            budget};
  }

  // One compute() in progress: the best graph so far (NCCL's `graph`), the one being searched (`tmpGraph`), where
  // the walk stands on the speed array, the pass and the global step budget.
  struct SearchRun {
    Graph best, trial;
    SearchBounds bounds;
    const std::vector<float>* speeds = nullptr;
    int speed_index = 0;
    int pass = 1;
    std::int64_t global_timeout = kGlobalTimeout;
    // Tries that found nothing while no solution was in hand, by what they depend on: a try with the same inputs
    // walks the same steps and finds nothing again, so its outcome (steps taken, budget left) is replayed.
    std::map<FruitlessTry, FruitlessOutcome> fruitless;
    float speed(int i) const { return (*speeds)[static_cast<std::size_t>(i)]; }
    int last_speed_index() const { return static_cast<int>(speeds->size()) - 1; }
  };

  // One try (ncclTopoSearchRec from the trial with an empty channel list); `time` is its budget in, what is left
  // out (-1: maxChannels reached). A try known to find nothing is not walked again.
  void search_try(SearchRun& run, int& time) {
    if (run.best.nChannels != 0) {
      search_rec(run.trial, run.best, time);
      return;
    }
    const FruitlessTry key = fruitless_key(run.trial, time);
    const auto known = run.fruitless.find(key);
    if (options_.replay_fruitless_tries && known != run.fruitless.end() &&
        total_steps_ + known->second.steps <= kHardStepCap) {
      total_steps_ += known->second.steps;
      replayed_steps_ += known->second.steps;
      time = known->second.time_left;
      return;
    }
    const std::int64_t steps_before = total_steps_;
    search_rec(run.trial, run.best, time);
    if (run.best.nChannels == 0 && !exhausted_) run.fruitless[key] = {total_steps_ - steps_before, time};
  }

  // The result before any search: the channel bounds clamped, no channel, no NET.
  Graph empty_graph(GraphPattern pattern, int min_channels, int max_channels) const {
    Graph graph;
    graph.pattern = pattern;
    graph.minChannels = std::max(0, min_channels);
    graph.maxChannels = std::clamp(max_channels, 1, kMaxChannels);
    graph.collNet = pattern == GraphPattern::CollNetDirect;
    graph.intra.assign(static_cast<std::size_t>(kMaxChannels * std::max(1, ngpus_)), 0);
    graph.inter.assign(static_cast<std::size_t>(kMaxChannels * 2), -1);
    return graph;
  }

  // The ladder's ends from the node's paths, and the graph set to its strictest rung (best path types, no
  // cross-NIC unless forced, same channels).
  SearchBounds search_bounds(Graph& graph) const {
    SearchBounds b;
    b.cc_min = node_.sm > 0 ? node_.sm : 90;
    const bool cross_pattern = graph.pattern == GraphPattern::Ring || graph.pattern == GraphPattern::BalancedTree ||
                               graph.pattern == GraphPattern::SplitTree;
    b.cross_nic = (nnets_ > 1 && cross_pattern) ? options_.cross_nic : 0;
    graph.crossNic = b.cross_nic == 1 ? 1 : 0;
    if (ngpus_ > 1) std::tie(b.min_type_intra, b.max_type_intra) = path_type_range(false);
    if (inter_) {
      std::tie(b.min_type_inter, b.max_type_inter) = path_type_range(true);
      b.max_type_intra = b.max_type_inter;
    }
    // Ampere relies on BALANCED_TREE which sometimes has to come back through SYS or PHB.
    if (b.cc_min < 90) b.max_type_inter = kPathSys;
    graph.typeIntra = b.min_type_intra;
    graph.typeInter = b.min_type_inter;
    b.try_same = graph.pattern == GraphPattern::Nvls ? 0 : 1;
    graph.sameChannels = b.try_same;
    return b;
  }

  // Channel bounds and shape that depend on the requested pattern: NVLS and CollNetDirect search one channel per
  // head GPU, a single GPU has no tree shape to choose, and a ring over two NVLink islands needs 2 channels.
  void set_pattern_channel_bounds(Graph& graph, GraphPattern requested) const {
    if (requested == GraphPattern::Nvls) graph.maxChannels = std::min(kMaxNvlsArity, ngpus_);
    if (requested == GraphPattern::CollNetDirect) graph.maxChannels = std::min(kMaxDirectArity + 1, ngpus_);
    if (ngpus_ == 1 && requested != GraphPattern::Ring) graph.pattern = GraphPattern::Tree;
    if (!inter_ && requested == GraphPattern::Nvls) graph.minChannels = graph.maxChannels;
    if (requested == GraphPattern::Ring && split_nvlink() && graph.maxChannels >= 2 && graph.minChannels == 1) {
      graph.minChannels = 2;  // Tree will want 2 channels and must match the ring's count
    }
  }

  // The first speed worth trying: no faster than the node's fastest path, and with the minimum channel count no
  // more than the node's total bandwidth.
  int first_speed_index(const SearchRun& run) const {
    float total_bw = sys_total_bw_;
    // Non-ring patterns need not close back to the starting NET: count the NVLink bandwidth larger.
    if (ngpus_ > 1 && run.best.pattern != GraphPattern::Ring) {
      total_bw = static_cast<float>(total_bw * (ngpus_ * 1.0 / (ngpus_ - 1)));
    }
    int idx = 0;
    while ((note_max_bw_comparison(run.speed(idx)) > sys_max_bw_ ||
            run.speed(idx) * static_cast<float>(run.best.minChannels) > total_bw) &&
           idx < run.last_speed_index()) {
      ++idx;
    }
    return idx;
  }

  // NCCL's step budget for one try: small while channels must copy the previous one, else per pattern.
  static int try_budget(const Graph& trial) {
    return trial.sameChannels ? kTimeoutSameChannels : trial.pattern == GraphPattern::Tree ? kTimeoutTree : kTimeout;
  }

  // NCCL's two passes. Pass 1 searches, relaxing one constraint after each unsatisfying try, until a solution
  // satisfies or the ladder or the global budget ends; pass 2 then walks back up the speed array keeping at
  // least the channels found. trainsim's hard step cap ends both with what was found.
  void search_passes(SearchRun& run) {
    while (true) {
      int time = try_budget(run.trial);
      run.trial.nChannels = 0;
      run.global_timeout -= time;
      search_try(run, time);
      if (exhausted_) {
        if (run.pass == 1) dup_channels(run.best, run.bounds.cc_min);
        return;
      }
      // time == -1: the try reached maxChannels. Satisfied also when the channels cover the node's bandwidth.
      const bool satisfied = time == -1 || static_cast<float>(run.best.nChannels) * run.best.bwInter >= sys_total_bw_;
      if (!satisfied && run.pass == 1 && relax_one_constraint(run, time)) continue;
      if (run.pass == 1) {
        time = -1;
        start_pass_two(run);
      }
      // time == 0: the last try ran out of steps; NCCL tries no higher speed then.
      if (time != 0 && run.speed_index > 0 && raise_speed(run)) continue;
      return;
    }
  }

  // Pass 1 without a satisfying solution: relax one constraint, innermost first, resetting the inner ones to their
  // strictest as an outer one moves (an odometer): same channels, tree shape, intra path type, inter path type,
  // cross-NIC, speed. False when pass 1 is over: the global budget is spent with a solution in hand, or every
  // rung has been tried (the speed then restarts at the top, as in NCCL, before pass 2 sets its own).
  bool relax_one_constraint(SearchRun& run, int time) {
    if (relax_same_channels(run.trial)) return true;
    run.trial.sameChannels = run.bounds.try_same;
    // The try's unused steps go back to the global budget.
    if (time != -1)
      run.global_timeout += time;
    else
      run.global_timeout = kGlobalTimeout;
    if (run.global_timeout < 0 && run.best.nChannels) return false;
    if (relax_tree_shape(run)) return true;
    if (relax_intra_path_type(run)) return true;
    if (relax_inter_path_type(run)) return true;
    if (relax_cross_nic(run)) return true;
    if (lower_speed(run)) return true;
    restart_at_top_speed(run);
    return false;
  }

  // Channels need not copy the previous one (except on AMD x86 CPUs over SYS paths, as in NCCL).
  bool relax_same_channels(Graph& trial) const {
    if (trial.sameChannels == 1 &&
        !(node_.arch == CpuArch::X86 && node_.vendor == CpuVendor::Amd && trial.typeIntra == kPathSys)) {
      trial.sameChannels = 0;
      return true;
    }
    return false;
  }

  // Hopper and later: a balanced tree that does not fit may be a plain tree.
  static bool relax_tree_shape(SearchRun& run) {
    if (run.bounds.cc_min >= 90 && run.trial.pattern == GraphPattern::BalancedTree) {
      run.trial.pattern = GraphPattern::Tree;
      return true;
    }
    run.trial.pattern = run.best.pattern;
    return false;
  }

  // A slower path type inside the node, up to the ladder's end (multi-node: the inter type reached so far), and
  // only while stricter than the type of a solution in hand.
  bool relax_intra_path_type(SearchRun& run) const {
    Graph& trial = run.trial;
    const int max_intra = inter_ ? trial.typeInter : run.bounds.max_type_intra;
    if (trial.typeIntra < max_intra && (run.best.nChannels == 0 || trial.typeIntra < run.best.typeIntra)) {
      trial.typeIntra += 1;
      if (trial.typeIntra < kPathDis) return true;
    }
    trial.typeIntra = run.bounds.min_type_intra;
    return false;
  }

  // A slower path type to the NETs (multi-node only), tried up to PXN even with a solution in hand.
  bool relax_inter_path_type(SearchRun& run) const {
    Graph& trial = run.trial;
    if (inter_ && trial.typeInter < run.bounds.max_type_inter &&
        (run.best.nChannels == 0 || trial.typeInter < run.best.typeInter || trial.typeInter < kPathPxn)) {
      trial.typeInter += 1;
      if (trial.typeInter < kPathDis) return true;
    }
    trial.typeInter = run.bounds.min_type_inter;
    return false;
  }

  // NCCL_CROSS_NIC=2 (allowed, not forced): rings and balanced trees may leave on another NIC than they entered.
  static bool relax_cross_nic(SearchRun& run) {
    Graph& trial = run.trial;
    if (run.bounds.cross_nic == 2 && trial.crossNic == 0 &&
        (run.best.pattern == GraphPattern::Ring || run.best.pattern == GraphPattern::BalancedTree)) {
      trial.crossNic = 2;
      return true;
    }
    trial.crossNic = run.bounds.cross_nic == 1 ? 1 : 0;
    return false;
  }

  // The next slower speed, unless it is under 0.49 of the speed of a solution in hand.
  static bool lower_speed(SearchRun& run) {
    const int next = run.speed_index + 1;
    if (run.speed_index < run.last_speed_index() &&
        (run.best.nChannels == 0 || run.speed(next) / run.best.bwInter > .49)) {
      run.trial.bwInter = run.trial.bwIntra = run.speed(++run.speed_index);
      return true;
    }
    return false;
  }

  // The ladder is exhausted: back to the fastest speed the node allows.
  void restart_at_top_speed(SearchRun& run) const {
    run.speed_index = 0;
    while (note_max_bw_comparison(run.speed(run.speed_index)) > sys_max_bw_ &&
           run.speed_index < run.last_speed_index()) {
      ++run.speed_index;
    }
    run.trial.bwIntra = run.trial.bwInter = run.speed(run.speed_index);
  }

  // Pass 1 is over: duplicate the channels found, then search again from the speed they run at, with at least
  // as many channels.
  void start_pass_two(SearchRun& run) const {
    dup_channels(run.best, run.bounds.cc_min);
    run.trial = run.best;
    run.speed_index = 0;
    while (run.speed(run.speed_index) > run.best.bwInter && run.speed_index < run.last_speed_index()) ++run.speed_index;
    run.trial.bwIntra = run.trial.bwInter = run.speed(run.speed_index);
    run.trial.minChannels = run.best.nChannels;
    run.pass = 2;
  }

  // Pass 2: one step up the speed array. Rings raise both bandwidths; NVLS raises the inter bandwidth (same heads)
  // while it stays under twice the intra; trees raise the intra bandwidth while it stays under twice the inter.
  // False when no step applies: the search is done.
  static bool raise_speed(SearchRun& run) {
    Graph& trial = run.trial;
    const Graph& best = run.best;
    if (best.pattern == GraphPattern::Ring) {
      trial.bwIntra = trial.bwInter = run.speed(--run.speed_index);
      return true;
    }
    if (best.pattern == GraphPattern::Nvls && trial.bwInter == best.bwInter && trial.bwInter < trial.bwIntra * 2) {
      trial.minChannels = trial.maxChannels = best.nChannels;
      trial.bwInter = run.speed(--run.speed_index);
      return true;
    }
    if (trial.bwIntra == best.bwIntra && trial.bwIntra < trial.bwInter * 2) {
      trial.bwIntra = run.speed(--run.speed_index);
      return true;
    }
    return false;
  }

  // Nothing fits: one channel in PCI order at 0.1 GB/s over SYS, through the first and the last GPU's NICs when
  // both have one.
  void fall_back_to_pci_order(Graph& graph) {
    for (int s = 0; s < ngpus_; ++s) graph.intra[static_cast<std::size_t>(s)] = s;
    graph.bwIntra = 0.1f;
    graph.typeIntra = kPathSys;
    const std::vector<int>& first = select_nets(-1, 0);
    const std::vector<int>& last = select_nets(-1, ngpus_ - 1);
    graph.inter[0] = first.empty() ? -1 : first.front();
    graph.inter[1] = last.empty() ? -1 : last.front();
    if (graph.inter[0] != -1 && graph.inter[1] != -1) {
      graph.bwInter = 0.1f;
      graph.typeInter = kPathSys;
    } else {
      graph.inter[0] = graph.inter[1] = -1;
      graph.bwInter = 0;
      graph.typeInter = kPathDis;
    }
    graph.nChannels = 1;
  }

  const NodeTopology& node_;
  SearchOptions options_;
  bool inter_ = false;
  int ngpus_ = 0, nnets_ = 0;
  std::vector<int> gpu_vertex_, gpu_rank_;
  std::vector<int> link_base_;
  std::size_t endpoints_ = 0;
  int nvs_ep_ = -1;
  std::vector<CompiledPath> compiled_;
  std::vector<std::vector<int>> next_pool_;  // candidate lists, one per recursion depth
  struct Score {
    int g, start, intra_hops, intra_bw, inter_hops, inter_pci_bw, inter_bw;
  };
  std::vector<Score> scores_;
  std::vector<std::pair<int, int>> pci_links_;  // per GPU: its PCIe up link and the link back down
  std::vector<float> bw_, net_bw_;
  std::vector<std::vector<int>> net_siblings_;  // by NET: the NETs whose bandwidth it shares, in NET order
  std::vector<std::uint64_t> used_;
  std::vector<int> net_local_gpu_;
  std::vector<std::vector<int>> net_local_gpus_, pref_nets_;
  std::map<std::pair<int, int>, std::vector<int>> select_cache_;
  float sys_max_bw_ = 0, sys_total_bw_ = 0;
  // The moves of every NET-dependent bandwidth that keep each comparison the search made (net_moves()).
  mutable float net_low_ = -std::numeric_limits<float>::infinity();
  mutable float net_high_ = std::numeric_limits<float>::infinity();
  std::int64_t total_steps_ = 0, replayed_steps_ = 0;
  bool exhausted_ = false;
  std::array<bool, kPathDis> intra_types_present_{}, inter_types_present_{};

 public:
  int ngpus() const { return ngpus_; }
  std::int64_t total_steps() const { return total_steps_; }
  std::int64_t replayed_steps() const { return replayed_steps_; }
  int rank_of(int s) const { return gpu_rank_[static_cast<std::size_t>(s)]; }
  bool inter() const { return inter_; }
  const SearchOptions& options() const { return options_; }
};

Graph Searcher::compute(GraphPattern pattern, int min_channels, int max_channels) {
  SearchRun run;
  run.best = empty_graph(pattern, min_channels, max_channels);
  if (ngpus_ == 0) return std::move(run.best);
  run.bounds = search_bounds(run.best);
  // NVLS needs an NVSwitch and Hopper or later.
  if (pattern == GraphPattern::Nvls && (node_.nvswitch < 0 || run.bounds.cc_min < 90)) return std::move(run.best);
  set_pattern_channel_bounds(run.best, pattern);
  run.trial = run.best;
  run.speeds = &ladder(run.bounds.cc_min, inter_);
  run.speed_index = first_speed_index(run);
  run.trial.bwIntra = run.trial.bwInter = run.speed(run.speed_index);
  search_passes(run);
  if (run.best.nChannels == 0 && !run.best.collNet && run.best.pattern != GraphPattern::Nvls) {
    fall_back_to_pci_order(run.best);
  }
  return std::move(run.best);
}

double tidy(float bw) { return std::round(static_cast<double>(bw) * 1e4) / 1e4; }

SearchGraph to_search_graph(const Searcher& s, const Graph& g) {
  SearchGraph out;
  out.pattern = g.pattern;
  out.nchannels = g.nChannels;
  out.bw_intra = tidy(g.bwIntra);
  out.bw_inter = tidy(g.bwInter);
  out.type_intra = static_cast<PathType>(std::clamp(g.typeIntra, 0, kPathDis));
  out.type_inter = static_cast<PathType>(std::clamp(g.typeInter, 0, kPathDis));
  out.same_channels = g.sameChannels != 0;
  out.cross_nic = g.crossNic;
  out.latency_inter = tidy(g.latencyInter);
  const int n = s.ngpus();
  for (int c = 0; c < g.nChannels; ++c) {
    std::vector<int> chain;
    // NVLS channels only name their head GPU.
    const int len = g.pattern == GraphPattern::Nvls ? std::min(1, n) : n;
    for (int i = 0; i < len; ++i) chain.push_back(s.rank_of(g.intra[static_cast<std::size_t>(c * n + i)]));
    out.intra.push_back(std::move(chain));
    out.net_in.push_back(s.inter() ? g.inter[static_cast<std::size_t>(c * 2)] : -1);
    out.net_out.push_back(s.inter() ? g.inter[static_cast<std::size_t>(c * 2 + 1)] : -1);
  }
  return out;
}

// One search of `pattern` between the channel bounds (NVLS always searches 1..MAXCHANNELS). Every search
// leaves the searcher's bandwidths as it found them, so one searcher serves all the patterns of a node.
SearchGraph run_search(Searcher& searcher, GraphPattern pattern, int min_channels, int max_channels) {
  if (pattern == GraphPattern::Nvls) {
    min_channels = 1;
    max_channels = kMaxChannels;
  }
  const std::int64_t steps = searcher.total_steps(), replayed = searcher.replayed_steps();
  SearchGraph out = to_search_graph(searcher, searcher.compute(pattern, min_channels, max_channels));
  out.steps = searcher.total_steps() - steps;
  out.steps_walked = out.steps - (searcher.replayed_steps() - replayed);
  return out;
}

}  // namespace

const char* to_string(GraphPattern p) {
  switch (p) {
    case GraphPattern::BalancedTree: return "BALANCED_TREE";
    case GraphPattern::SplitTree: return "SPLIT_TREE";
    case GraphPattern::Tree: return "TREE";
    case GraphPattern::Ring: return "RING";
    case GraphPattern::Nvls: return "NVLS";
    case GraphPattern::CollNetDirect: return "COLLNET_DIRECT";
  }
  return "?";
}

SearchGraph search_graph(const NodeTopology& node, GraphPattern pattern, const SearchOptions& options) {
  Searcher searcher(node, options);
  return run_search(searcher, pattern, options.min_channels, options.max_channels);
}

struct NodeGraphSearch::Impl {
  virtual ~Impl() = default;
};

namespace {
// The searcher behind a NodeGraphSearch (a subclass, since the searcher's type is private to this file).
struct HeldSearcher final : NodeGraphSearch::Impl {
  HeldSearcher(const NodeTopology& node, const SearchOptions& options) : searcher(node, options) {}
  Searcher searcher;
};
Searcher& held(const std::unique_ptr<NodeGraphSearch::Impl>& impl) {
  return static_cast<HeldSearcher&>(*impl).searcher;
}
}  // namespace

NodeGraphSearch::NodeGraphSearch(const NodeTopology& node, const SearchOptions& options)
    : impl_(std::make_unique<HeldSearcher>(node, options)) {}
NodeGraphSearch::~NodeGraphSearch() = default;

CanonicalSearchInputs NodeGraphSearch::canonical_inputs() const { return held(impl_).canonical_inputs(); }

NetBandwidthMoves NodeGraphSearch::net_moves() const {
  const auto [low, high] = held(impl_).net_moves();
  return {static_cast<double>(low) + kNetMarginSlack, static_cast<double>(high) - kNetMarginSlack};
}

NodeGraphs NodeGraphSearch::search(bool search_nvls, bool search_collnet) {
  // The searcher's set-up (every endpoint pair's path compiled, each NET's local GPU) is the same for every
  // pattern; only the channel bounds differ.
  Searcher& searcher = held(impl_);
  const SearchOptions& options = searcher.options();
  NodeGraphs out;
  out.ring = run_search(searcher, GraphPattern::Ring, options.min_channels, options.max_channels);
  const int ring_channels = out.ring.nchannels;
  out.tree = run_search(searcher, GraphPattern::BalancedTree, ring_channels, ring_channels);
  // init.cc order (initTransportsRank): CollNetChain (TREE, the ring's count) and CollNetDirect (1..MAXCHANNELS,
  // clamped to NCCL_MAX_DIRECT_ARITY + 1 heads inside the search) before NVLS.
  out.collnet_chain.pattern = GraphPattern::Tree;
  out.collnet_direct.pattern = GraphPattern::CollNetDirect;
  if (search_collnet && options.multi_node) {
    out.collnet_chain = run_search(searcher, GraphPattern::Tree, ring_channels, ring_channels);
    out.collnet_direct = run_search(searcher, GraphPattern::CollNetDirect, 1, kMaxChannels);
  }
  if (search_nvls) out.nvls = run_search(searcher, GraphPattern::Nvls, options.min_channels, options.max_channels);
  out.nvls.pattern = GraphPattern::Nvls;
  return out;
}

NodeGraphs search_node_graphs(const NodeTopology& node, const SearchOptions& options, bool search_nvls,
                              bool search_collnet) {
  return NodeGraphSearch(node, options).search(search_nvls, search_collnet);
}

}  // namespace trainsim
