#pragma once
// Which family of measured kernel-efficiency curves a GPU uses. The catalog's `architecture`
// decides; a scenario's hand-written gpu_spec may leave it empty, then sm_version and vendor do.
#include "hardware/gpu_spec.hpp"

namespace trainsim {

enum class ArchFamily { Volta, Ampere, Hopper, Blackwell, Cdna2, Cdna3 };

// Unknown GPUs get the Hopper curves (the best-measured generation); docs/compute-model.md says so.
ArchFamily classify_arch(const GpuSpec& gpu);

const char* to_string(ArchFamily f);

}  // namespace trainsim
