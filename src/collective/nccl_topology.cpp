#include "collective/nccl_topology.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "collective/nccl_constants.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

// Speed ladders of the graph search, GB/s per channel (nccl.md §6.5).
const std::vector<double>& intra_ladder(int sm) {
  static const std::vector<double> sm90{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<double> sm100{90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  static const std::vector<double> older{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  return sm >= 100 ? sm100 : sm >= 90 ? sm90 : older;
}
const std::vector<double>& inter_ladder(int sm) {
  static const std::vector<double> sm90{48, 45, 42, 40, 30, 24, 22, 20, 17.5, 15, 12, 6, 3, 2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> sm100{96, 86, 80, 48, 45.1, 42, 40, 30, 24, 22,  20,
                                         17.5, 15, 12, 6, 3,   2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> older{48, 30, 28, 24, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3, 2.4, 1.2, 0.24, 0.12};
  return sm >= 100 ? sm100 : sm >= 90 ? sm90 : older;
}

// Highest ladder speed not above `limit`; below the ladder's floor the limit itself.
double ladder_speed_at_most(const std::vector<double>& ladder, double limit) {
  for (double s : ladder)
    if (s <= limit + 1e-9) return s;
  return limit;
}

// The next lower ladder step below `speed`, or 0 when there is none.
double ladder_step_down(const std::vector<double>& ladder, double speed) {
  for (double s : ladder)
    if (s < speed - 1e-9) return s;
  return 0;
}

int tuning_sm(const GpuSpec& gpu) {
  // sm_version 0 = AMD or a custom gpu_spec. AMD GPUs have no NCCL tables of their own (RCCL tunes
  // separately); we use the Hopper rows, the closest generation to MI300-class parts, and the same
  // for custom specs (most are Hopper/Blackwell-class parts described by their datasheet numbers).
  return gpu.sm_version > 0 ? gpu.sm_version : 90;
}

int cc_index_of(int sm) { return sm < 80 ? 0 : sm < 90 ? 1 : sm < 100 ? 2 : 3; }

// AMD parts (RCCL has no NVLS). A custom `gpu_spec` also has sm_version 0 but no vendor: it is tuned
// as Hopper (tuning_sm) and keeps NVLS when it sits on an NVSwitch.
bool is_amd(const ClusterSpec& c) {
  return c.gpu.vendor == "AMD" || c.gpu.vendor == "amd" || c.scale_up.kind == ScaleUpKind::InfinityFabric;
}

// ncclTopoDupChannels (§6.5): rings/trees with fast channels are split into twice as many at half the
// speed, except on SM>80 with 25 <= bw < 50 and more than 4 channels.
void dup_channels(NcclGraph& g, int sm) {
  const double bw = g.bw_intra;
  if (bw < 25 || (sm > 80 && bw < 50 && g.channels > 4)) return;
  const int doubled = std::min(2 * g.channels, nccl::kMaxChannels / 2);
  const double factor = static_cast<double>(g.channels) / doubled;
  g.channels = doubled;
  g.bw_intra *= factor;
  g.bw_inter *= factor;
}

// Single-node ring search: walk down the intra ladder and keep the speed that gives the largest
// nChannels·speed, where every channel takes one outgoing NVLink share of every GPU (on an NVSwitch
// ring every GPU sends to its successor on every channel), stopping like NCCL once the next speed is
// below 0.49× the best one or the solution saturates the GPU's bandwidth.
NcclGraph single_node_ring(double intra_bw, int sm, bool nvlink) {
  const auto& ladder = intra_ladder(sm);
  NcclGraph best;
  double best_speed = 0;
  for (double s : ladder) {
    if (s > intra_bw + 1e-9) continue;
    if (best_speed > 0 && s <= 0.49 * best_speed) break;
    const int n = std::min(static_cast<int>(std::floor(intra_bw / s + 1e-9)), nccl::kMaxChannels / 2);
    if (n >= 1 && n * s > best.channels * best_speed + 1e-9) {
      best.channels = n;
      best_speed = s;
    }
    if (n == nccl::kMaxChannels / 2 || n * s >= intra_bw - 1e-9) break;
  }
  if (best.channels == 0) {  // slower than the ladder's floor: one channel at whatever there is
    best.channels = 1;
    best_speed = intra_bw;
  }
  best.bw_intra = best.bw_inter = best_speed;
  best.nvlink_intra = nvlink;
  return best;
}

}  // namespace

double nccl_intra_bw_per_gpu(const ClusterSpec& cluster) {
  const double nominal = cluster.scale_up.bandwidth_GBps > 0 ? cluster.scale_up.bandwidth_GBps : cluster.gpu.scale_up_GBps;
  if (cluster.scale_up.kind == ScaleUpKind::PCIe) return nominal * 0.75;
  const int sm = cluster.gpu.sm_version;
  // NCCL per-link constant (topo.h, §1) / nominal NVLink per-link bandwidth of that generation.
  if (sm >= 100) return nominal * 40.1 / 50.0;
  if (sm >= 90) return nominal * 20.6 / 25.0;
  if (sm >= 70) return nominal * 20.0 / 25.0;
  return nominal * 20.6 / 25.0;  // AMD / unknown: the SM90 ratio
}

double nccl_nic_bw(const ClusterSpec& cluster) {
  const int sm = tuning_sm(cluster.gpu);
  const double pcie = sm >= 90 ? 48.0 : sm >= 80 ? 24.0 : 12.0;  // Gen5 / Gen4 / Gen3 x16 (§6.2)
  return std::min(cluster.nic_gbps / 8.0, pcie);
}

NcclTopology derive_nccl_topology(const ClusterSpec& cluster, const GroupPlacement& where, const NcclEnv& env) {
  NcclTopology t;
  t.nranks = where.size;
  t.nnodes = std::max(1, where.nodes);
  t.ppn = static_cast<double>(where.size) / t.nnodes;
  t.max_per_node = std::max(1, where.max_per_node);
  t.sm = tuning_sm(cluster.gpu);
  t.cc_index = cc_index_of(t.sm);
  t.net_overhead_us = env.net_overhead_us.value_or(nccl::kNetOverheadIntel);  // Intel CPUs assumed

  // Intra-node fabric: the scale-up links when the group's ranks on a node fit in one scale-up domain,
  // PCIe otherwise (e.g. 8 PCIe GPUs bridged in NVLink pairs).
  const bool spans_domains = cluster.scale_up.domain_size < cluster.gpus_per_node &&
                             t.max_per_node > cluster.scale_up.domain_size;
  const bool pcie_intra = cluster.scale_up.kind == ScaleUpKind::PCIe || spans_domains;
  const double pcie_bw = t.sm >= 90 ? 48.0 : t.sm >= 80 ? 24.0 : 12.0;
  t.intra_bw_per_gpu = spans_domains ? pcie_bw : nccl_intra_bw_per_gpu(cluster);
  // One GPU per node has no intra-node path: typeIntra = LOC, which NCCL's tuning maps to the PCI row.
  const bool nvlink_intra = !pcie_intra && t.max_per_node > 1;

  // NICs: all GPUs of a node run their own groups concurrently during training, so a group gets the
  // fraction of the node's NICs that its ranks stand for (at least one NIC's worth of channels).
  const double nic_raw = cluster.nic_gbps / 8.0;
  const double nic_bw = nccl_nic_bw(cluster);
  const double nics_per_gpu = cluster.gpus_per_node > 0 ? static_cast<double>(cluster.nics_per_node) / cluster.gpus_per_node : 0;
  const double nic_share = t.max_per_node * nics_per_gpu;
  t.net_bw_per_gpu = std::min(pcie_bw, nic_raw * nics_per_gpu);
  if (t.nnodes > 1 && (nic_share <= 0 || nic_raw <= 0))
    throw Error("collective: a group spans " + std::to_string(t.nnodes) +
                " nodes but the cluster has no NICs (cluster.nics_per_node / cluster.nic_gbps)");

  // Ring graph (§6.5, checked against §9.2).
  if (t.nnodes == 1) {
    t.ring = single_node_ring(t.intra_bw_per_gpu, t.sm, nvlink_intra);
  } else {
    // One channel per available NIC per direction (§9.2: 8 NICs -> 8 ring channels × 48 GB/s), at the
    // highest inter-ladder speed the NIC (or the group's fraction of one NIC) sustains.
    const int nics = std::max(1, static_cast<int>(std::floor(nic_share + 1e-9)));
    const double per_nic = nic_bw * std::min(1.0, nic_share);
    const auto& ladder = inter_ladder(t.sm);
    double speed = ladder_speed_at_most(ladder, per_nic);
    t.ring.channels = std::min(nics, nccl::kMaxChannels / 2);
    // Inside a node every channel crosses ppn-1 NVLink hops, spread over the ppn GPUs (§9.2: 8 × 48
    // puts 7 × 48 = 336 GB/s on each H100's 370.8). Slow down the ladder until that fits.
    if (t.max_per_node > 1) {
      const double hop_share = static_cast<double>(t.max_per_node - 1) / t.max_per_node;
      while (t.ring.channels * speed * hop_share > t.intra_bw_per_gpu + 1e-9) {
        const double lower = ladder_step_down(ladder, speed);
        if (lower <= 0) break;
        speed = lower;
      }
    }
    t.ring.bw_intra = t.ring.bw_inter = speed;
    t.ring.nvlink_intra = nvlink_intra;
  }
  dup_channels(t.ring, t.sm);

  // Tree graph: searched with the ring's channel count (§6.5); we give it the ring's bandwidths too
  // (true of the §9.2 example). On SM90 several nodes, the BALANCED_TREE pattern falls back to TREE
  // (all NIC traffic on one GPU), which costs Tree ×0.85 in tuning.
  t.tree = t.ring;
  t.tree_pattern_tree = t.sm >= 90 && t.sm < 100 && t.nnodes > 1;

  // NVLS (§3.3, §3.4, §6.5): Hopper+ NVSwitch systems with multicast; one head per local GPU.
  const int heads = std::min(t.max_per_node, nccl::kMaxNvlsArity);
  t.nvls_supported = env.nvls_enable != 0 && t.sm >= 90 && !is_amd(cluster) &&
                     cluster.scale_up.kind == ScaleUpKind::NVSwitch && !pcie_intra && heads >= 2;
  if (t.nvls_supported) {
    const auto& intra = intra_ladder(t.sm);
    // bwIntra: each head's channel takes its share of the GPU's NVLink to the switch (§9.2: 8 heads on
    // 370.8 GB/s -> 40 GB/s, since 8 × 50 > 370.8).
    t.nvls.channels = heads;
    t.nvls.bw_intra = ladder_speed_at_most(intra, t.intra_bw_per_gpu / heads);
    if (t.nnodes > 1) {
      // bwInter: head h leaves through NIC h; fewer NICs than heads share them.
      const double per_head = std::min(pcie_bw, nic_raw * nic_share / heads);
      t.nvls.bw_inter = ladder_speed_at_most(inter_ladder(t.sm), per_head);
    } else {
      // Single node: search pass 2 raises bwInter while it stays below 2·bwIntra (§6.5).
      double inter = t.nvls.bw_intra;
      for (double s : intra)
        if (s > inter && s < 2 * t.nvls.bw_intra) inter = s;
      t.nvls.bw_inter = inter;
    }
    t.nvls.nvlink_intra = true;
  }
  // nvlsChannels (§1): 16 on SM90; SM100 32 with several nodes, 24 on one.
  t.nvls_channels = t.sm >= 100 ? (t.nnodes > 1 ? 32 : 24) : 16;

  // LL128 (isLL128Enabled): SM >= 70 and an intra-node path no worse than NVB; NET paths on rail-local
  // NICs (PIX) are within the PXN/PXB limits.
  t.ll128_supported = t.sm >= 70 && !(pcie_intra && t.max_per_node > 1);
  // PAT (§3.6): only with one rank per node on several nodes.
  t.pat_supported = t.nnodes > 1 && t.nnodes == t.nranks;

  // comm->nChannels (§6.7): ×2 for the tree duplicates, ×2 again on SM90+ multi-node with fast rings
  // while that stays <= 16 (nccl.md §11: 2.30 no longer doubles beyond 16), then the user clamps.
  int channels = std::min(2 * std::min(t.ring.channels, t.tree.channels), nccl::kMaxChannels);
  if (t.sm >= 90 && t.nnodes > 1 && t.ring.bw_intra > 45 && 2 * channels <= 16) channels *= 2;
  const int default_channels = channels;
  if (env.max_nchannels) channels = std::min(channels, *env.max_nchannels);
  if (env.min_nchannels) channels = std::max(channels, std::min(*env.min_nchannels, nccl::kMaxChannels));
  t.comm_channels = std::max(1, channels);
  t.channel_bw_scale = std::min(1.0, static_cast<double>(t.comm_channels) / default_channels);

  t.ring_simple_threads = t.ring.bw_intra * t.ring.channels <= nccl::kPciBw ? nccl::kSimplePcieThreads
                                                                             : nccl::kMaxThreadsSimple;
  return t;
}

}  // namespace trainsim
