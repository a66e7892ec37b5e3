#pragma once
// Cluster descriptions shared by the collective tests, written out by hand (not from the catalog) so
// the tests only depend on this layer.
#include <numeric>
#include <vector>

#include "hardware/cluster_spec.hpp"

namespace trainsim::testing {

inline GpuSpec h100_gpu() {
  GpuSpec g;
  g.name = "H100-SXM";
  g.architecture = "hopper";
  g.sm_version = 90;
  g.vendor = "NVIDIA";
  g.scale_up_GBps = 450;
  return g;
}

inline GpuSpec a100_gpu() {
  GpuSpec g;
  g.name = "A100-SXM-80GB";
  g.architecture = "ampere";
  g.sm_version = 80;
  g.vendor = "NVIDIA";
  g.scale_up_GBps = 300;
  return g;
}

inline GpuSpec b200_gpu() {
  GpuSpec g;
  g.name = "B200";
  g.architecture = "blackwell";
  g.sm_version = 100;
  g.vendor = "NVIDIA";
  g.scale_up_GBps = 900;
  return g;
}

// The NCCL example of docs/collectives.md: DGX-H100-like nodes, NVSwitch 450 GB/s per GPU, 8 × 400 Gb/s
// rail-optimised NICs.
inline ClusterSpec h100_cluster(int nodes) {
  ClusterSpec c;
  c.gpu = h100_gpu();
  c.gpus_per_node = 8;
  c.num_gpus = 8 * nodes;
  c.scale_up = {ScaleUpKind::NVSwitch, 450, 8};
  c.nics_per_node = 8;
  c.nic_gbps = 400;
  return c;
}

inline ClusterSpec a100_cluster(int nodes) {
  ClusterSpec c;
  c.gpu = a100_gpu();
  c.gpus_per_node = 8;
  c.num_gpus = 8 * nodes;
  c.scale_up = {ScaleUpKind::NVSwitch, 300, 8};
  c.nics_per_node = 8;
  c.nic_gbps = 200;
  return c;
}

inline std::vector<int> first_ranks(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

}  // namespace trainsim::testing
