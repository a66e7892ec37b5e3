#pragma once
// The per-algorithm entry points behind custom_algorithms.hpp's dispatch, one source file each, and
// what they share. Callers outside src/collective use custom_algorithms.hpp only.
#include <cstdint>
#include <string>

#include "collective/algorithms/custom_algorithms.hpp"

namespace trainsim {

// halving_doubling.cpp / halving_doubling_flows.cpp
CollectiveEstimate estimate_halving_doubling(CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx);
FlowDag halving_doubling_flows(CollKind kind, std::int64_t bytes, const NcclCommunicator& comm);

// hierarchical.cpp / hierarchical_flows.cpp
CollectiveEstimate estimate_hierarchical(CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx);
// Why a group cannot run hierarchically (empty when it can): one node, or nodes with different rank counts.
std::string hierarchical_group_problem(CollKind kind, int nranks, int nnodes, int ppn);
FlowDag hierarchical_flows(CollKind kind, std::int64_t bytes, const NcclCommunicator& comm);

// reduction_server.cpp / reduction_server_flows.cpp (AllReduce only)
CollectiveEstimate estimate_reduction_server(std::int64_t bytes, const CustomAlgoContext& ctx);
FlowDag reduction_server_flows(std::int64_t bytes, const NcclCommunicator& comm, const ReductionServerSpec& rs);
// Reducers actually used: `servers`, or one per worker node when 0.
int reduction_servers_used(const ReductionServerSpec& rs, int nnodes);

// Fills algbw/busbw (nccl-tests convention over `nranks`) from a time in µs.
CollectiveEstimate make_custom_estimate(NcclAlgorithm algorithm, CollKind kind, std::int64_t bytes, int nranks,
                                        double time_us);

// Time of one message of `bytes` over a link of `bw_GBps` after `lat_us` (1 GB/s = 1000 B/µs).
inline double message_us(double bytes, double lat_us, double bw_GBps) { return lat_us + bytes / (1000.0 * bw_GBps); }

}  // namespace trainsim
