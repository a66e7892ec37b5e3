#pragma once
// Fixed per-message latency the custom algorithms' flow DAGs charge for each sequential step
// (FlowDag::latency_us). No NCCL constant exists for them; NCCL's own per-hop hardware latency of a
// Ring/Simple step on the same link class (NCCL's hwLat table: NVLink 3.4, PCI 5.7, NET 14 µs) is
// the closest measured figure for "one message between two GPUs", so each step costs that.
#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_constants.hpp"

namespace trainsim {

inline double custom_step_latency_us(LinkClass link) {
  switch (link) {
    case LinkClass::Network: return nccl::kHwLat[nccl::kHwNet][nccl::kAlgoRing][nccl::kProtoSimple];
    case LinkClass::PCIe: return nccl::kHwLat[nccl::kHwPci][nccl::kAlgoRing][nccl::kProtoSimple];
    case LinkClass::NVLink:
    case LinkClass::NVLinkSharp: return nccl::kHwLat[nccl::kHwNvlink][nccl::kAlgoRing][nccl::kProtoSimple];
  }
  return 0.0;
}

// Latency of one ring phase of `steps` sequential hops on `link`, charged as NCCL's cost model charges a
// Ring/Simple collective (NCCL ncclTopoTuneModel: baseLat + steps·hwLat).
inline double ring_phase_latency_us(int steps, LinkClass link) {
  return nccl::kBaseLat[nccl::kAlgoRing][nccl::kProtoSimple] + steps * custom_step_latency_us(link);
}

// The slower of two link classes for a step's latency (Network > PCIe > NVLink).
inline LinkClass slower_link(LinkClass a, LinkClass b) {
  return custom_step_latency_us(a) >= custom_step_latency_us(b) ? a : b;
}

}  // namespace trainsim
