#pragma once
// The cluster block of a scenario: GPUs, nodes, scale-up domains, NICs and the scale-out network.
#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"

namespace trainsim {

enum class ScaleUpKind { NVSwitch, NVLinkMesh, PCIe, InfinityFabric };
// SimaiFile: the fabric of a SimAI topology file (cluster.network.simai_topology), not a generator's.
enum class NetworkTopology { RailOptimized, FatTree, HPN, Dragonfly, Ideal, SimaiFile };

struct ScaleUpSpec {
  ScaleUpKind kind = ScaleUpKind::NVSwitch;
  double bandwidth_GBps = 0;  // per GPU, per direction
  // GPUs of one domain the job's ranks fill before the next domain starts; the simulation places ranks by it
  // (domain_of). It is hardware_domain_size unless the job leaves part of each domain idle, as a batch
  // scheduler's segment placement does on NVL72 racks (cluster.scale_up.job_gpus_per_domain).
  int domain_size = 8;
  int hardware_domain_size = 8;    // GPUs the fabric connects (cluster.scale_up.domain_size)
  bool job_placement_auto = true;  // job_gpus_per_domain was auto (the report says what it chose)
};

struct NetworkSpec {
  NetworkTopology topology = NetworkTopology::RailOptimized;
  // With topology SimaiFile: the file (resolved next to the scenario) whose nodes and links are the fabric.
  std::string simai_topology;
  int tiers = 2;
  std::vector<double> oversubscription{1.0};  // per tier from the leaves up; one value = at the leaves
  std::optional<int> pod_size;
  int switch_radix = 64;
  double link_latency_ns = 500;
  double switch_latency_ns = 300;
  // Keys this implementation adds (docs/topologies.md):
  bool dual_tor = false;  // fat-tree: each NIC's two ports go to a pair of ToRs (hpn always is)
  double pcie_GBps = 64;  // GPU <-> NIC, per direction (PCIe Gen5 x16)
  enum class Routing { Ecmp, Adaptive, Spray };
  // ecmp: hash over equal-cost paths; adaptive: the least-loaded one per flow (flow level), the least-queued port at
  // each switch per packet (packet level); spray: each packet takes the flow's equal-cost paths in turn (packet level)
  Routing routing = Routing::Ecmp;
  // RoCE as the packet-level network runs it (simulation.network_model: packet; docs/packet-network.md).
  // Defaults and their sources: src/network/packet/packet_config.hpp.
  struct Roce {
    int mtu_bytes = 4096;  // RoCE path MTU (payload per packet)
    bool lossless = true;  // PFC on; false: lossy RoCE, drops recovered by go-back-N
    // Congestion control at the sender NICs: DCQCN (ECN marks), TIMELY (round-trip times) or none (PFC alone).
    enum class CongestionControl { None, Dcqcn, Timely };
    CongestionControl congestion_control = CongestionControl::Dcqcn;
    double ecn_kmin_kb = 100, ecn_kmax_kb = 400, ecn_pmax = 0.2;  // RED marking at switch egress queues
    double pfc_xoff_kb = 256, pfc_xon_kb = 240;                   // per ingress: PAUSE above, RESUME at or below
    double port_buffer_mb = 1;                                    // egress queue limit (lossy: drops beyond it)
    // Each switch's buffer shared by its ports with dynamic thresholds (0: none, the per-port limits above),
    // their alpha, and the PFC headroom per lossless ingress (nullopt: 2 x the link's bandwidth-delay + 2 packets).
    double switch_buffer_mb = 0, buffer_alpha = 0.125;
    std::optional<double> pfc_headroom_kb;
    // DCQCN's additive and hyper rate-increase steps, Mb/s; nullopt = scaled to the NIC: the paper's steps are
    // 40 and 400 Mb/s on 40 Gb/s ports, 0.1% and 1% of the line rate, which the same share of nic_gbps keeps.
    std::optional<double> dcqcn_ai_mbps, dcqcn_hai_mbps;
    // TIMELY's additive step (nullopt: 0.1% of nic_gbps, the paper's 10 Mb/s on 10 Gb/s) and its RTT thresholds.
    std::optional<double> timely_ai_mbps;
    double timely_tlow_us = 50, timely_thigh_us = 500;
  };
  Roce roce;
};

struct ClusterSpec {
  GpuSpec gpu;  // resolved from the catalog or from cluster.gpu_spec
  int num_gpus = 0;
  int gpus_per_node = 8;
  ScaleUpSpec scale_up;
  int nics_per_node = 8;
  double nic_gbps = 400;  // per NIC, per direction
  NetworkSpec network;

  int num_nodes() const { return num_gpus / gpus_per_node; }
  int node_of(int rank) const { return rank / gpus_per_node; }
  // Scale-up domain of a rank (domains may span nodes, e.g. NVL72).
  int domain_of(int rank) const { return rank / scale_up.domain_size; }
};

// The GPUs per scale-up domain a job of num_gpus occupies when the placement is left to the scheduler (auto):
// a domain spanning several nodes (NVL72) holds the largest whole divisor of the job's nodes that fits in it,
// as NVIDIA's launch scripts ask Slurm for (`--segment`, scripts/performance slurm_executor), so every domain
// holds the same number of the job's nodes; a job that fits in one domain, or domains within a node, keep
// the hardware domain.
inline int segment_gpus_per_domain(int num_gpus, int gpus_per_node, int hardware_domain_size) {
  if (gpus_per_node <= 0 || hardware_domain_size <= gpus_per_node) return hardware_domain_size;
  const int nodes_per_domain = hardware_domain_size / gpus_per_node, job_nodes = num_gpus / gpus_per_node;
  if (job_nodes <= nodes_per_domain) return hardware_domain_size;
  int segment = nodes_per_domain;
  while (job_nodes % segment != 0) --segment;
  return segment * gpus_per_node;
}

const char* to_string(ScaleUpKind k);
const char* to_string(NetworkTopology t);

}  // namespace trainsim
