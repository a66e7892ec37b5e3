#pragma once
// `trainsim run --explain`: the longest compute ops and collectives of one simulated rank, grouped
// by name and shape, with their share of the iteration and where their time came from.
#include <cstddef>
#include <string>

#include "engine/engine.hpp"
#include "report/result.hpp"
#include "workload/workload.hpp"

namespace trainsim {

// "gemm 2048x12288x6144 bf16", "flash_attn_fwd 64 heads*batch, q 4096 kv 4096 d 128 causal bf16",
// "layernorm 48.0 MiB": a kernel as reports show it.
std::string kernel_detail(const KernelDesc& k);

// `collective_source` says how collective times were obtained ("nccl-model" or "flow").
Explanation explain_rank(const Workload& wl, const SimulationOutput& out, std::size_t ri, double iteration_s,
                         const std::string& collective_source, std::size_t top = 10);

}  // namespace trainsim
