#include "collective/nccl/nccl_tuning.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "collective/nccl/nccl_constants.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

using namespace nccl;

int log2i(double x) {  // floor(log2(x)) for x >= 1, NCCL's log2i
  int r = 0;
  while (x >= 2.0) {
    x /= 2.0;
    ++r;
  }
  return r;
}

bool is_ag_rs(NcclFunction f) { return f == NcclFunction::AllGather || f == NcclFunction::ReduceScatter; }

}  // namespace

NcclTuningModel::NcclTuningModel(const NcclTopology& topo, const NcclEnv& env) : topo_(topo), env_(env) {
  for (int f = 0; f < kF; ++f)
    for (int a = 0; a < kA; ++a)
      for (int p = 0; p < kP; ++p) fill(static_cast<NcclFunction>(f), a, p);
}

// One entry of ncclTopoTuneModel (bandwidth, latency) plus its default enable rules.
void NcclTuningModel::fill(NcclFunction f, int a, int p) {
  const auto fi = static_cast<std::size_t>(f);
  NcclCostEntry& e = hw_[fi][a][p];
  enabled_[fi][a][p] = false;
  const NcclTopology& t = topo_;
  const int n = t.nranks;
  const int nnodes = t.nnodes;
  const bool multi = nnodes > 1;

  // Which (function, algorithm, protocol) exist at all (ncclTopoTuneModel's skip rules).
  const bool bcast_reduce = f == NcclFunction::Broadcast || f == NcclFunction::Reduce;
  if (bcast_reduce && a != kAlgoRing) return;
  if (is_ag_rs(f) && !(a == kAlgoPat || a == kAlgoRing || a == kAlgoNvls || a == kAlgoCollNetDirect)) return;
  if (f == NcclFunction::AllReduce && a == kAlgoPat) return;
  if ((a == kAlgoNvls || a == kAlgoNvlsTree || a == kAlgoPat) && p != kProtoSimple) return;
  // Hardware / configuration support (ncclTopoTuneModel, topoGetAlgoInfo): CollNet needs the plugin, ≥ 2 nodes
  // and ≤ 8 local ranks (Direct also NVSwitch), and is Simple only; the plugin offers all-reduce only (see
  // NcclTopology), which also keeps AG/RS off multi-node NVLS. NVLS needs multicast and, across nodes, CollNet;
  // NVLSTree needs several nodes; PAT one rank per node.
  const bool collnet = a == kAlgoCollNetDirect || a == kAlgoCollNetChain;
  if (collnet && (!t.collnet_supported || p != kProtoSimple || f != NcclFunction::AllReduce)) return;
  if (a == kAlgoCollNetDirect && !t.collnet_direct_supported) return;
  if (a == kAlgoNvls && (!t.nvls_supported || (multi && (!t.collnet_supported || f != NcclFunction::AllReduce))))
    return;
  if (a == kAlgoNvlsTree && (!t.nvls_supported || !multi || f != NcclFunction::AllReduce)) return;
  // NVLS all-gather / reduce-scatter has one NVLS head per local rank: not with more than NCCL_MAX_NVLS_ARITY (32)
  // local ranks (enqueue.cc:topoGetAlgoInfo), e.g. a 64- or 72-rank group in one NVL72 domain.
  if (a == kAlgoNvls && f != NcclFunction::AllReduce && t.max_per_node > nccl::kMaxNvlsArity) return;
  if (a == kAlgoPat && !t.pat_supported) return;

  const int nsteps = f == NcclFunction::AllReduce ? 2 * (n - 1) : is_ag_rs(f) ? n - 1 : n;
  const int index2 = nnodes <= 2 ? nnodes - 1 : 2;
  const int cc = t.cc_index;
  // Across nodes the row is the CPU's: 1 for AMD hosts, 0 otherwise (tuning.cc: index1 = nNodes > 1 ? cpuVendor ==
  // AMD : compCapIndex).
  const double ll_max_bw = kLLMaxBw[multi ? (t.cpu_amd ? 1 : 0) : cc][index2];
  const NcclGraph& g = (a == kAlgoRing)                         ? t.ring
                       : (a == kAlgoNvls || a == kAlgoNvlsTree) ? t.nvls
                       : a == kAlgoCollNetChain                 ? t.collnet_chain
                       : a == kAlgoCollNetDirect                ? t.collnet_direct
                                                                : t.tree;
  if (g.channels <= 0) return;
  // LL128 "auto" is decided per algorithm on its own graph (tuning.cc:ncclTopoTuneModel, graphs[a]).
  if (p == kProtoLL128 && !g.ll128) return;

  // --- bandwidth ---
  double bw = (nnodes <= 2 || collnet) ? g.bw_intra : g.bw_inter;
  if (a == kAlgoNvls || a == kAlgoNvlsTree) {
    if (g.channels < 2) return;
    double intra_bw = g.bw_intra * kNvlsEfficiency[cc] * (g.channels - 1) / g.channels;
    intra_bw *= f == NcclFunction::AllReduce ? 2.0 : (t.ppn - 1) / t.ppn;
    const double inter_bw = g.bw_inter * ((a == kAlgoNvlsTree && nnodes <= 2) ? 2.0 : 1.0);
    bw = std::min(intra_bw, inter_bw);
    if (a == kAlgoNvlsTree) bw = std::min(bw, kPerChMaxNvlsTreeBw[cc][index2]);
  }
  double bus_bw = g.channels * bw;
  const double nch = g.channels;
  if (a == kAlgoRing && p == kProtoLL) bus_bw = std::min(ll_max_bw, kRingLLFactor * bus_bw);
  if (a == kAlgoRing && p == kProtoLL128)
    bus_bw = std::min(kRingLL128Factor * bus_bw, nch * kPerChMaxRingLL128Bw[cc][index2]);
  if (a == kAlgoTree && f == NcclFunction::AllReduce)
    bus_bw = std::min(kTreeFactor * bus_bw, nch * kPerChMaxTreeBw[cc][index2]);
  if (a == kAlgoTree && p == kProtoLL) bus_bw = std::min(bus_bw / kTreeLLDivisor, ll_max_bw);
  if (a == kAlgoTree && p == kProtoLL128)
    bus_bw = std::min(bus_bw * (nnodes == 1 ? kTreeLL128SingleNode : kTreeLL128MultiNode),
                      nch * kPerChMaxTreeLL128Bw[cc][index2]);
  if (a == kAlgoTree && t.tree_pattern_tree) bus_bw *= kTreePatternTreeFactor;
  if (a == kAlgoPat) bus_bw *= kPatFactor;
  if (a == kAlgoCollNetDirect) {  // AllReduce (AG/RS are off, see above)
    double factor = t.ppn / nch;
    factor -= (factor - 1) / 2;
    bus_bw /= factor;
    if (t.sm >= 90) bus_bw *= kCollNetDirectSm90Factor;
  }
  // NCCL_MAX_NCHANNELS below NCCL's own count: fewer CTAs drive the rings/trees (see NcclTopology).
  if (a == kAlgoRing || a == kAlgoTree || a == kAlgoPat) bus_bw *= t.channel_bw_scale;

  // Bus bandwidth -> algorithm bandwidth.
  double ratio = 0.5;  // Tree (and CollNet)
  if (is_ag_rs(f) && a != kAlgoRing)
    ratio = 1.0;  // no conversion for non-ring AG/RS (NVLS, PAT)
  else if (a == kAlgoRing || a == kAlgoNvls || a == kAlgoNvlsTree)
    ratio = static_cast<double>(n) / nsteps;
  e.algbw_GBps = bus_bw * ratio;

  // --- latency ---
  const int intra_hw = g.nvlink_intra ? kHwNvlink : kHwPci;
  const int hw = multi ? kHwNet : intra_hw;
  double intra_lat = kHwLat[intra_hw][a][p];
  // latencyInter (NIC latency property) is 0 for InfiniBand, so the Simple flush term adds nothing.
  const double inter_lat = (t.ppn == 1.0 ? kHwLat[kHwNet][kAlgoTree][p] : kHwLat[kHwNet][a][p]);
  const int log_nodes = log2i(nnodes);
  double lat = kBaseLat[a][p];
  if (a == kAlgoRing) {
    if (bcast_reduce) {
      lat += g.same_channels
                 ? kHwLat[hw][kAlgoRing][p]
                 : nsteps * (p == kProtoSimple ? kHwLat[hw][kAlgoTree][kProtoSimple] : kHwLat[hw][kAlgoRing][p]);
    } else {
      if (multi) intra_lat = std::max(intra_lat, t.net_overhead_us * (p == kProtoSimple ? 3.0 : 1.0));
      const int inter_steps = !multi ? 0 : f == NcclFunction::AllReduce ? 2 * (nnodes - 1) : nnodes - 1;
      lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
    }
  } else if (a == kAlgoTree) {
    lat += 2 * ((t.ppn - 1) * intra_lat + log_nodes * inter_lat);
  } else if (a == kAlgoNvls) {
    lat = intra_lat + (multi ? inter_lat : 0.0);  // base latency not added
  } else if (a == kAlgoNvlsTree) {
    lat += intra_lat + 2 * log_nodes * inter_lat;
  } else if (a == kAlgoPat) {
    lat += log_nodes * inter_lat / 3.5 + 2.8 * n;
  } else if (a == kAlgoCollNetDirect) {
    lat += 2 * (std::min(1.0, t.ppn - 1) * intra_lat + (t.ppn - 1) * kCollNetDirectPerPeerLatUs) + inter_lat;
  } else if (a == kAlgoCollNetChain) {
    lat += 2 * (t.ppn - 1) * intra_lat + inter_lat;
  }
  e.latency_us = lat;

  if (e.algbw_GBps <= 0) {
    e = NcclCostEntry{};
    return;
  }
  enabled_[fi][a][p] = env_.user_allows(f, static_cast<NcclAlgorithm>(a), static_cast<NcclProtocol>(p));
}

NcclCostEntry NcclTuningModel::hardware_entry(NcclFunction f, NcclAlgorithm a, NcclProtocol p) const {
  const auto ai = static_cast<std::size_t>(a);
  if (ai >= kA) return {};
  return hw_[static_cast<std::size_t>(f)][ai][static_cast<std::size_t>(p)];
}

NcclCostEntry NcclTuningModel::entry(NcclFunction f, NcclAlgorithm a, NcclProtocol p) const {
  const auto ai = static_cast<std::size_t>(a);
  if (ai >= kA || !enabled_[static_cast<std::size_t>(f)][ai][static_cast<std::size_t>(p)]) return {};
  return hardware_entry(f, a, p);
}

double NcclTuningModel::time_for(NcclFunction f, int a, int p, const NcclCostEntry& e, double nbytes,
                                 int num_pipe_ops) const {
  double bw = e.algbw_GBps;
  double lat = e.latency_us;
  if (f == NcclFunction::AllReduce && nbytes >= 64) {
    const int idx = log2i(nbytes / 64);
    if (a == kAlgoTree && idx < kTreeCorrectionEntries - 1) bw *= kTreeCorrectionFactor[p][idx];
    // NVLSTree gets the same factor only on SM >= 100 with x86 CPUs (not on Grace-hosted GB200 / GB300).
    if (a == kAlgoNvlsTree && topo_.sm >= 100 && topo_.cpu_x86 && idx < kTreeCorrectionEntries)
      bw *= kTreeCorrectionFactor[p][idx];
  }
  if (a == kAlgoRing && p == kProtoSimple && f == NcclFunction::AllReduce && topo_.nnodes > 1 &&
      nbytes / (static_cast<double>(topo_.comm_channels) * topo_.nranks) >= kRingPlateauMinBytesPerChannelRank)
    lat *= topo_.sm < 80 ? kRingPlateauFactorPreAmpere : kRingPlateauFactor;
  // Aggregated calls share the tree/NVLS latency: latCount = numPipeOps for Ring, else
  // ceil(numPipeOps / NCCL_MAX_DEV_WORK_BATCH_COLLS) (ncclTopoGetAlgoTime).
  const int ops = std::max(1, num_pipe_ops);
  const int lat_count = a == kAlgoRing ? ops : (ops + kMaxDevWorkBatchColls - 1) / kMaxDevWorkBatchColls;
  return lat * lat_count + nbytes / (1000.0 * bw);
}

std::optional<double> NcclTuningModel::time_us(NcclFunction f, NcclAlgorithm a, NcclProtocol p, double nbytes) const {
  const NcclCostEntry e = entry(f, a, p);
  if (e.algbw_GBps <= 0) return std::nullopt;
  return time_for(f, static_cast<int>(a), static_cast<int>(p), e, nbytes);
}

int NcclTuningModel::channels_for(NcclAlgorithm a, NcclProtocol p, double nbytes) const {
  const int ai = static_cast<int>(a), pi = static_cast<int>(p);
  if (ai == kAlgoNvls)
    return topo_.nnodes > 1 ? std::min(topo_.nvls_channels, topo_.comm_channels) : topo_.nvls_channels;
  if (ai == kAlgoNvlsTree) return topo_.nvls_channels;
  if (ai == kAlgoCollNetDirect) return collnet_direct_channels(nbytes);
  // comm->maxThreads (init.cc): NCCL_NTHREADS replaces the LL and Simple defaults, NCCL_LL128_NTHREADS
  // the LL128 one; fewer threads per channel mean more channels stay busy for a given size.
  const bool chain = ai == kAlgoCollNetChain;
  const int nt = chain            ? kMaxThreadsCollNet
                 : pi == kProtoLL ? env_.nthreads.value_or(kMaxThreadsLL)
                 : pi == kProtoLL128
                     ? env_.ll128_nthreads.value_or(kMaxThreadsLL128)
                     : env_.nthreads.value_or(ai == kAlgoRing ? topo_.ring_simple_threads : kMaxThreadsSimple);
  double thr = chain               ? kThresholdCollNetSimple
               : pi == kProtoLL    ? kThresholdLL
               : pi == kProtoLL128 ? kThresholdLL128
                                   : kThresholdSimple;
  if (ai == kAlgoRing && pi == kProtoLL) thr *= topo_.nranks;
  int nc = topo_.comm_channels;
  while (nc >= 2 && nbytes < static_cast<double>(nc) * nt * thr) --nc;
  return nc;
}

// CollNetDirect (topoGetAlgoInfo): starting from the communicator's channels, drop channels while the
// call is below nc·nt·nHeads·threshold, but not below the current switch point (16, 8, 4, 2, 1); the
// threshold halves when nc passes 1.5× the switch point.
int NcclTuningModel::collnet_direct_channels(double nbytes) const {
  int nc = topo_.comm_channels;
  const double nt = kMaxThreadsCollNet;
  const double heads = std::max(1, topo_.collnet_heads);
  double thr = kThresholdCollNetSimple;
  bool below = true;
  for (int sw = 16; sw >= 1 && below; sw /= 2) {
    while ((below = nbytes < nc * nt * heads * thr) && nc > sw) {
      if (nc == sw + sw / 2) thr /= 2;
      --nc;
    }
  }
  return std::max(1, nc);
}

NcclChoice NcclTuningModel::choose(NcclFunction f, double nbytes, int num_pipe_ops) const {
  const auto fi = static_cast<std::size_t>(f);
  NcclChoice best;
  double best_time = std::numeric_limits<double>::infinity();
  auto consider = [&](int a, int p, const NcclCostEntry& e) {
    if (e.algbw_GBps <= 0) return;
    const double t = time_for(f, a, p, e, nbytes, num_pipe_ops);
    if (t < best_time) {  // strict: ties keep the first in NCCL's loop order
      best_time = t;
      best.algorithm = static_cast<NcclAlgorithm>(a);
      best.protocol = static_cast<NcclProtocol>(p);
    }
  };
  for (int a = 0; a < kA; ++a)
    for (int p = 0; p < kP; ++p)
      if (enabled_[fi][a][p]) consider(a, p, hw_[fi][a][p]);
  if (!std::isfinite(best_time)) {
    // NCCL_ALGO/NCCL_PROTO left nothing for this function: Ring with the protocols still allowed.
    for (int p = 0; p < kP; ++p)
      if (env_.user_allows_proto(f, static_cast<NcclProtocol>(p))) consider(kAlgoRing, p, hw_[fi][kAlgoRing][p]);
  }
  if (!std::isfinite(best_time)) {
    const bool proto_set = !env_.proto_string.empty();
    throw ScenarioError("", proto_set ? "nccl.NCCL_PROTO" : "nccl.NCCL_ALGO",
                        std::string("no algorithm/protocol available for ") + to_string(f) +
                            " on this group (NCCL_ALGO='" + env_.algo_string + "', NCCL_PROTO='" + env_.proto_string +
                            "')");
  }
  best.time_us = best_time;
  best.channels = channels_for(best.algorithm, best.protocol, nbytes);
  return best;
}

}  // namespace trainsim
