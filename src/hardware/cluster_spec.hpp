#pragma once
// The cluster block of a scenario: GPUs, nodes, scale-up domains, NICs and the scale-out network.
#include <optional>
#include <string>
#include <vector>

#include "hardware/gpu_spec.hpp"

namespace trainsim {

enum class ScaleUpKind { NVSwitch, NVLinkMesh, PCIe, InfinityFabric };
enum class NetworkTopology { RailOptimized, FatTree, HPN, Dragonfly, Ideal };

struct ScaleUpSpec {
  ScaleUpKind kind = ScaleUpKind::NVSwitch;
  double bandwidth_GBps = 0;  // per GPU, per direction
  int domain_size = 8;        // GPUs sharing the scale-up fabric
};

struct NetworkSpec {
  NetworkTopology topology = NetworkTopology::RailOptimized;
  int tiers = 2;
  std::vector<double> oversubscription{1.0};  // per tier from the leaves up; one value = at the leaves
  std::optional<int> pod_size;
  int switch_radix = 64;
  double link_latency_ns = 500;
  double switch_latency_ns = 300;
  // Keys this implementation adds (docs/topologies.md):
  bool dual_tor = false;     // fat-tree: each NIC's two ports go to a pair of ToRs (hpn always is)
  double pcie_GBps = 64;     // GPU <-> NIC, per direction (PCIe Gen5 x16)
  enum class Routing { Ecmp, Adaptive };
  Routing routing = Routing::Ecmp;  // ecmp: hash over equal-cost paths; adaptive: least-loaded one
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

const char* to_string(ScaleUpKind k);
const char* to_string(NetworkTopology t);

}  // namespace trainsim
