#pragma once
// Achievable HBM bandwidth of memory-bound kernels (norms, pointwise, softmax, optimizer, memset).
#include "compute/arch_family.hpp"
#include "core/kernel_desc.hpp"

namespace trainsim {

// Fraction of the HBM spec a large (>> 1 MB) kernel of this kind reaches (QuACK memory-bound SOL blog, torchao
// roofline_utils.py; docs/compute-model.md).
double memory_bandwidth_fraction(ArchFamily arch, KernelKind kind);

// Size ramp bytes / (bytes + B_half), B_half = bandwidth * DRAM latency (Little's law), so that
// bytes / (bandwidth * ramp) = bytes / bandwidth + latency. 1 for an unknown (<= 0) bandwidth.
double memory_size_ramp(double bytes, double bandwidth_Bps);

}  // namespace trainsim
