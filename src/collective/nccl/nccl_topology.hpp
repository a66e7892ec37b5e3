#pragma once
// What NCCL's cost model reads from a communicator (NCCL src/tuning, ncclTopoTuneModel): per-channel
// bwIntra/bwInter and channel counts of the ring, tree and NVLS graphs, the final communicator
// channel count (comm->nChannels after src/graph/connect.cc ncclTopoPostset), and which algorithms and
// protocols the hardware supports. Filled from a built communicator by tuning_inputs (nccl_comm_builder.hpp).
#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_env.hpp"
#include "hardware/cluster_spec.hpp"

namespace trainsim {

// One search result (NCCL's struct ncclTopoGraph, reduced to what tuning reads).
struct NcclGraph {
  int channels = 0;            // search channel count (after ncclTopoDupChannels)
  double bw_intra = 0;         // GB/s per channel inside a node
  double bw_inter = 0;         // GB/s per channel across nodes
  bool nvlink_intra = true;    // typeIntra == NVL (picks the NVLINK or PCI latency row)
  bool same_channels = false;  // every channel replays the same GPU order (Broadcast/Reduce latency)
  // LL128 enabled by default on this graph (tuning.cc:ncclTopoTuneModel reads graphs[a]->typeIntra /
  // typeInter per algorithm): see ll128_enabled_by_default in nccl_comm_builder.cpp.
  bool ll128 = false;
};

struct NcclTopology {
  int nranks = 0;
  int nnodes = 0;  // NCCL nodes (hosts, or scale-up domains that span hosts)
  double ppn = 0;  // nranks / nnodes, as NCCL computes it (float)
  int max_per_node = 0;
  int sm = 0;        // compute capability ×10 used for tuning (AMD: treated as 90)
  int cc_index = 0;  // 0 Volta, 1 Ampere, 2 Hopper, 3 Blackwell
  NcclGraph ring, tree, nvls;
  NcclGraph collnet_chain, collnet_direct;  // CollNet graphs (channels 0 when CollNet is off)
  bool tree_pattern_tree = false;           // comm->maxTreePattern == TREE (SM90 multi-node fallback pattern)
  bool nvls_supported = false;              // NVLS multicast usable for this group (and not disabled by env)
  bool ll128_supported = false;             // LL128 enabled on the ring graph (per algorithm: NcclGraph::ll128)
  bool pat_supported = false;               // PAT: one rank per node, several nodes (NCCL_PAT_ENABLE)
  // CollNet (SHARP): NCCL_COLLNET_ENABLE with a plugin, ≥ 2 nodes, ≤ 8 local ranks; Direct also
  // needs an NVSwitch node. The plugin is taken to offer in-network all-reduce only (no
  // iallgather/ireducescatter), so AllGather/ReduceScatter never use CollNet or multi-node NVLS.
  bool collnet_supported = false;
  bool collnet_direct_supported = false;
  int collnet_heads = 0;          // CollNetDirect heads per node
  int comm_channels = 0;          // comm->nChannels after ncclTopoPostset incl. NCCL_MIN/MAX_NCHANNELS
  int nvls_channels = 0;          // comm->nvlsChannels
  int ring_simple_threads = 512;  // 256 on PCIe-only systems (NCCL_SIMPLE_MAX_NTHREADS)
  // Bandwidth factor for Ring/Tree/PAT when NCCL_MAX_NCHANNELS leaves fewer channels than NCCL would
  // use: channels used / default channels (NCCL 2.18's ncclTopoGetAlgoTime did the same).
  double channel_bw_scale = 1.0;
  double net_overhead_us = 1.0;  // per network step (NCCL_NET_OVERHEAD)
  // The host CPU (the first node's, as NCCL reads comm->cpuArch / cpuVendor): the multi-node llMaxBw row (1 for AMD,
  // nccl.md §5.1) and NVLSTree's tree correction factor (SM >= 100 with x86 only, §5.4) depend on it.
  bool cpu_x86 = true;
  bool cpu_amd = false;
  // Physical per-GPU bandwidths, for the p2p path (GB/s, one direction).
  double intra_bw_per_gpu = 0;  // NVLink/PCIe as NCCL counts it
  double net_bw_per_gpu = 0;    // this GPU's share of its node's NICs, capped by PCIe
};

}  // namespace trainsim
