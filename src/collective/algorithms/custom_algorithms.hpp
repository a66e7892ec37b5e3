#pragma once
// Collective algorithms NCCL does not have but users want to evaluate, selectable per collective in
// the scenario's `algorithms:` block: halving-doubling (Rabenseifner: reduce-scatter by recursive
// halving, all-gather by recursive doubling), hierarchical (intra-node reduce-scatter, inter-node
// all-reduce among same-local-index GPUs, intra-node all-gather), and a reduction server (Google
// Vertex AI: each worker sends each gradient shard once to CPU reducer nodes and receives the reduced
// shard). Each gives an analytical time and a flow DAG; the registry (algorithm_registry.hpp) names them and says
// what each supports, and the functions below dispatch through it.
#include <cstdint>
#include <functional>
#include <string>

#include "collective/algorithm_registry.hpp"
#include "collective/collective_model.hpp"
#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_communicator.hpp"

namespace trainsim {

// What the analytical estimates need about the cluster and the group.
struct CustomAlgoContext {
  int nranks = 0, nnodes = 0, ppn = 0;      // ppn = ranks per node (uniform groups)
  double intra_bw_GBps = 0;                 // per GPU, one direction, inside a node (NCCL's count)
  double net_bw_GBps = 0;                   // per GPU, one direction, to the network
  double intra_lat_us = 0, net_lat_us = 0;  // per message
  // Prices a sub-collective with NCCL (hierarchical uses it for its three phases): kind, nBytes
  // (NCCL convention), ranks per node and nodes of the sub-group.
  std::function<CollectiveEstimate(CollKind, std::int64_t, int ppn, int nnodes)> nccl;
  ReductionServerSpec reduction_server;
};

// Which (collective, algorithm) pairs exist (the registry entry's `supports`): halving-doubling for
// AllReduce/ReduceScatter/AllGather (any n; non-powers of two fold the extra ranks first), hierarchical for
// AllReduce/ReduceScatter/AllGather on several nodes, reduction server for AllReduce.
bool custom_algorithm_supports(CollectiveAlgorithm a, CollKind kind);
// Why `a` cannot run `kind` on a group of `nranks` ranks over `nnodes` nodes (empty when it can):
// the collective is not supported, or the entry's `group_problem` (hierarchical on a single node / uneven
// nodes; ppn = ranks per node, 0 when unknown). Lets callers fall back or report before estimating;
// estimate_custom and custom_flows throw trainsim::Error with the first part of this message.
std::string custom_algorithm_unsupported_reason(CollectiveAlgorithm a, CollKind kind, int nranks, int nnodes, int ppn);

CollectiveEstimate estimate_custom(CollectiveAlgorithm a, CollKind kind, std::int64_t bytes,
                                   const CustomAlgoContext& ctx);

FlowDag custom_flows(CollectiveAlgorithm a, CollKind kind, std::int64_t bytes, const NcclCommunicator& comm,
                     const ReductionServerSpec& rs);

}  // namespace trainsim
