#include "compute/memory_efficiency.hpp"

#include "compute/roofline_constants.hpp"

namespace trainsim {

namespace rl = roofline;

double memory_bandwidth_fraction(ArchFamily arch, KernelKind kind) {
  if (kind == KernelKind::Softmax) return rl::kMemFractionUnfusedSoftmax;
  if (kind == KernelKind::TorchLayerNorm) return rl::kMemFractionTorchLayerNorm;
  return arch == ArchFamily::Blackwell ? rl::kMemFractionBlackwell : rl::kMemFractionDefault;
}

double memory_size_ramp(double bytes, double bandwidth_Bps) {
  if (!(bytes > 0) || !(bandwidth_Bps > 0)) return 1.0;
  const double half = bandwidth_Bps * rl::kDramLatencyS;
  return bytes / (bytes + half);
}

}  // namespace trainsim
