#pragma once
// A simplified stand-in for NCCL's topology detection and graph search (../shared/reference/nccl.md
// §6): from the cluster description and where a group's ranks sit, derive what NCCL's cost model
// reads from its search results — per-channel bwIntra/bwInter and channel counts of the ring, tree
// and NVLS graphs, the final communicator channel count (§6.7), and which algorithms the hardware
// supports. The real search (DFS over the node's PCIe/NVLink graph) is a later issue; everything
// the cost model needs goes through NcclTopology so that the search can replace derive_nccl_topology
// without touching the tuning code. Each approximation is documented here and in docs/collectives.md.
#include "collective/collective_model.hpp"
#include "collective/nccl_env.hpp"
#include "hardware/cluster_spec.hpp"

namespace trainsim {

// One search result (NCCL's struct ncclTopoGraph, reduced to what tuning reads).
struct NcclGraph {
  int channels = 0;           // search channel count (after ncclTopoDupChannels)
  double bw_intra = 0;        // GB/s per channel inside a node
  double bw_inter = 0;        // GB/s per channel across nodes
  bool nvlink_intra = true;   // typeIntra == NVL (picks the NVLINK or PCI latency row)
  bool same_channels = false; // every channel replays the same GPU order (Broadcast/Reduce latency)
};

struct NcclTopology {
  int nranks = 0;
  int nnodes = 0;             // NCCL nodes (hosts, or scale-up domains that span hosts)
  double ppn = 0;             // nranks / nnodes, as NCCL computes it (float)
  int max_per_node = 0;
  int sm = 0;                 // compute capability ×10 used for tuning (AMD: treated as 90)
  int cc_index = 0;           // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell
  NcclGraph ring, tree, nvls;
  bool tree_pattern_tree = false;  // comm->maxTreePattern == TREE (SM90 multi-node fallback pattern)
  bool nvls_supported = false;     // NVLS multicast usable for this group (and not disabled by env)
  bool ll128_supported = false;    // isLL128Enabled() for this topology
  bool pat_supported = false;      // PAT: one rank per node, several nodes (§3.6)
  int comm_channels = 0;           // comm->nChannels after §6.7 incl. NCCL_MIN/MAX_NCHANNELS
  int nvls_channels = 0;           // comm->nvlsChannels
  int ring_simple_threads = 512;   // 256 on PCIe-only systems (§1)
  // Bandwidth factor for Ring/Tree/PAT when NCCL_MAX_NCHANNELS leaves fewer channels than NCCL would
  // use: channels used / default channels (NCCL 2.18's time formula did the same, nccl.md §11).
  double channel_bw_scale = 1.0;
  double net_overhead_us = 1.0;    // per network step (§5.1)
  // Physical per-GPU bandwidths, for the p2p path (GB/s, one direction).
  double intra_bw_per_gpu = 0;     // NVLink/PCIe as NCCL counts it
  double net_bw_per_gpu = 0;       // this GPU's share of its node's NICs, capped by PCIe
};

// NVLink bandwidth per GPU as NCCL counts it: NCCL multiplies a per-link constant by the link count;
// the scenario gives the nominal per-GPU bandwidth, so we scale it by (NCCL per-link / nominal
// per-link): SM70/SM80 20/25, SM90 20.6/25 (450 -> 370.8), SM100 40.1/50 (900 -> 721.8); other or
// non-NVIDIA GPUs use the SM90 ratio. PCIe scale-up: NCCL counts width × 120/80 per Gen4 lane
// (24 GB/s for a nominal 32), so 0.75.
double nccl_intra_bw_per_gpu(const ClusterSpec& cluster);
// GPU -> NIC bandwidth of one NIC: the NIC rate capped by the GPU's PCIe link (§6.1, §9.2: Gen3 12,
// Gen4 24 on SM80 systems, Gen5 48 on SM90+/AMD MI300 systems).
double nccl_nic_bw(const ClusterSpec& cluster);

NcclTopology derive_nccl_topology(const ClusterSpec& cluster, const GroupPlacement& where, const NcclEnv& env);

}  // namespace trainsim
