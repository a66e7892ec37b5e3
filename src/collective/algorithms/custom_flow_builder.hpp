#pragma once
// Shared plumbing for the flow DAGs of the custom algorithms (custom_algorithms.hpp): appending
// flows with their dependencies in FlowDag's CSR layout, which NIC a GPU's network flows use, which
// link class joins two GPUs of one node, and exact byte partitions (so byte totals are conserved).
#include <cstdint>
#include <span>
#include <vector>

#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_communicator.hpp"

namespace trainsim {

class CustomFlowBuilder {
 public:
  // Appends a flow depending on `deps` (indices of earlier flows); returns its index.
  std::uint32_t add(Flow flow, std::span<const std::uint32_t> deps);
  // Records a dependency list once so that many flows can share it (add_sharing): a reducer's
  // return flows all wait on the same n incoming flows, stored once instead of once per flow.
  std::pair<std::uint32_t, std::uint32_t> add_dep_list(std::span<const std::uint32_t> deps);
  std::uint32_t add_sharing(Flow flow, std::pair<std::uint32_t, std::uint32_t> dep_range);
  FlowDag& dag() { return dag_; }
  FlowDag take() { return std::move(dag_); }

 private:
  FlowDag dag_;
};

// NIC (index into the node's nets) a rank's network flows use: the GPU's rail - among its closest
// NICs the one its device id selects - when the node topology has paths (rail-optimised: GPU i on
// NIC i whatever the group's other members); else local % nics. Without node topologies, one NIC
// per GPU.
int custom_nic_of(const NcclCommunicator& comm, int rank);

// Link class between two ranks of one node: NVLink when the node topology says the GPUs are joined
// by NVLink (directly or through NVSwitch/another GPU), PCIe otherwise; NVLink when no topology or
// no computed paths are available.
LinkClass custom_intra_link(const NcclCommunicator& comm, int a, int b);

// A GPU-to-GPU flow of `bytes` (Simple protocol: wire bytes = payload) on the right link class:
// Network with rail NICs when the ranks sit on different nodes.
Flow custom_gpu_flow(const NcclCommunicator& comm, int src_rank, int dst_rank, std::int64_t bytes);

// Exact partition of `total` bytes into `parts` near-equal pieces (the first total % parts pieces
// one byte larger): bytes of pieces [first, last).
std::int64_t partition_bytes(std::int64_t total, std::int64_t parts, std::int64_t first, std::int64_t last);

// Bytes one member at `position` of a ring of `members` ranks sends over a ring phase on `total` bytes
// (blocks = exact partition of total): every block but one (reduce-scatter: the one it keeps;
// all-gather: its successor's, which it never forwards); all-reduce = both.
std::int64_t ring_send_bytes(CollKind phase, std::int64_t total, int members, int position);

// Rejects communicators whose per-rank tables disagree with nranks (never index out of range).
void check_communicator_shape(const NcclCommunicator& comm, const char* algorithm);

}  // namespace trainsim
