#include "hardware/cluster_spec.hpp"
#include "hardware/gpu_spec.hpp"

namespace trainsim {

const char* to_string(Precision p) {
  switch (p) {
    case Precision::FP32: return "fp32";
    case Precision::TF32: return "tf32";
    case Precision::BF16: return "bf16";
    case Precision::FP16: return "fp16";
    case Precision::FP8: return "fp8";
  }
  return "?";
}

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
  }
  return "?";
}

}  // namespace trainsim
