#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"

namespace trainsim {

const char* to_string(ScaleUpKind k) {
  switch (k) {
    case ScaleUpKind::NVSwitch: return "nvswitch";
    case ScaleUpKind::NVLinkMesh: return "nvlink-mesh";
    case ScaleUpKind::PCIe: return "pcie";
    case ScaleUpKind::InfinityFabric: return "infinity-fabric";
  }
  return "?";
}

const char* to_string(NetworkTopology t) {
  switch (t) {
    case NetworkTopology::RailOptimized: return "rail-optimized";
    case NetworkTopology::FatTree: return "fat-tree";
    case NetworkTopology::HPN: return "hpn";
    case NetworkTopology::Dragonfly: return "dragonfly";
    case NetworkTopology::Ideal: return "ideal";
    case NetworkTopology::SimaiFile: return "simai-topology";
  }
  return "?";
}

}  // namespace trainsim
