#include "collective/algorithms/custom_flow_builder.hpp"

#include <algorithm>
#include <string>

#include "core/error.hpp"

namespace trainsim {

std::uint32_t CustomFlowBuilder::add(Flow flow, std::span<const std::uint32_t> deps) {
  return add_sharing(flow, add_dep_list(deps));
}

std::pair<std::uint32_t, std::uint32_t> CustomFlowBuilder::add_dep_list(std::span<const std::uint32_t> deps) {
  const auto begin = static_cast<std::uint32_t>(dag_.dep_index.size());
  dag_.dep_index.insert(dag_.dep_index.end(), deps.begin(), deps.end());
  return {begin, static_cast<std::uint32_t>(dag_.dep_index.size())};
}

std::uint32_t CustomFlowBuilder::add_sharing(Flow flow, std::pair<std::uint32_t, std::uint32_t> dep_range) {
  flow.dep_begin = dep_range.first;
  flow.dep_end = dep_range.second;
  dag_.flows.push_back(flow);
  return static_cast<std::uint32_t>(dag_.flows.size() - 1);
}

int custom_nic_of(const NcclCommunicator& comm, int rank) {
  const int local = comm.local_of[rank];
  const int node = comm.node_of[rank];
  if (comm.node_topology.empty() || node >= static_cast<int>(comm.node_topology.size()) || !comm.node_topology[node] ||
      comm.node_topology[node]->nets.empty()) {
    return local;  // one NIC per GPU
  }
  const NodeTopology& topo = *comm.node_topology[node];
  // With computed paths: the GPU's rail, i.e. among its closest NICs the one its device id selects
  // (dev mod their count), decided by the physical GPU and not by its position in the group. A group
  // holding GPUs 1, 3, 5, 7 of each node thus uses NICs 1, 3, 5, 7 - not 0..3, which the node's other
  // groups use at the same time - and GPU 1 of a DGX-A100 pair uses the pair's second NIC.
  if (!topo.paths.empty() && local < static_cast<int>(topo.gpus.size())) {
    const std::vector<int> mine = topo.local_nets(local);
    if (!mine.empty()) {
      const int dev =
          std::max(0, topo.vertices[static_cast<std::size_t>(topo.gpus[static_cast<std::size_t>(local)])].dev);
      return topo.original_net(mine[static_cast<std::size_t>(dev) % mine.size()]);
    }
  }
  // Numbered as the network layer numbers the NCCL node's NICs (the communicator's node may hold fewer: MNNVL).
  return topo.original_net(local % static_cast<int>(topo.nets.size()));
}

LinkClass custom_intra_link(const NcclCommunicator& comm, int a, int b) {
  const int node = comm.node_of[a];
  if (node >= static_cast<int>(comm.node_topology.size()) || !comm.node_topology[node]) return LinkClass::NVLink;
  const NodeTopology& topo = *comm.node_topology[node];
  const int la = comm.local_of[a], lb = comm.local_of[b];
  const int gpus = static_cast<int>(topo.gpus.size());
  if (la >= gpus || lb >= gpus) return LinkClass::NVLink;
  const auto va = static_cast<std::size_t>(topo.gpus[la]), vb = static_cast<std::size_t>(topo.gpus[lb]);
  if (va >= topo.paths.size() || vb >= topo.paths[va].size()) return LinkClass::NVLink;
  // NCCL's path types (src/graph/topo.h): NVL (direct NVLink or via NVSwitch) and NVB (through another GPU's
  // NVLink) ride NVLink; everything else between two GPUs of a node crosses PCIe / the CPU.
  const PathType t = topo.paths[va][vb].type;
  return (t == PathType::Loc || t == PathType::Nvl || t == PathType::Nvb) ? LinkClass::NVLink : LinkClass::PCIe;
}

Flow custom_gpu_flow(const NcclCommunicator& comm, int src_rank, int dst_rank, std::int64_t bytes) {
  Flow f;
  f.src = {FlowEndpoint::Kind::Gpu, src_rank};
  f.dst = {FlowEndpoint::Kind::Gpu, dst_rank};
  f.bytes = bytes;
  f.payload = bytes;
  if (comm.node_of[src_rank] == comm.node_of[dst_rank]) {
    f.link = custom_intra_link(comm, src_rank, dst_rank);
  } else {
    f.link = LinkClass::Network;
    f.src_net = custom_nic_of(comm, src_rank);
    f.dst_net = custom_nic_of(comm, dst_rank);
  }
  return f;
}

std::int64_t partition_bytes(std::int64_t total, std::int64_t parts, std::int64_t first, std::int64_t last) {
  if (parts <= 0 || last <= first) return 0;
  const std::int64_t base = total / parts, extra = total % parts;
  const auto larger_in = [extra](std::int64_t i) { return i < extra ? i : extra; };  // larger pieces before i
  return (last - first) * base + (larger_in(last) - larger_in(first));
}

std::int64_t ring_send_bytes(CollKind phase, std::int64_t total, int members, int position) {
  const std::int64_t m = members;
  const auto block = [&](std::int64_t i) { return partition_bytes(total, m, i % m, i % m + 1); };
  switch (phase) {
    case CollKind::ReduceScatter: return total - block(position);
    case CollKind::AllGather: return total - block(position + 1);
    default: return 2 * total - block(position) - block(position + 1);  // AllReduce = RS + AG
  }
}

void check_communicator_shape(const NcclCommunicator& comm, const char* algorithm) {
  const auto n = static_cast<std::size_t>(comm.nranks);
  if (comm.nranks < 0 || comm.node_of.size() != n || comm.local_of.size() != n ||
      comm.node_ranks.size() != static_cast<std::size_t>(comm.nnodes)) {
    throw Error(std::string(algorithm) + " flows: inconsistent communicator (" + std::to_string(comm.nranks) +
                " ranks, " + std::to_string(comm.node_of.size()) + " node entries, " +
                std::to_string(comm.node_ranks.size()) + " node rank lists for " + std::to_string(comm.nnodes) +
                " nodes)");
  }
  for (std::size_t r = 0; r < n; ++r) {
    const int node = comm.node_of[r];
    if (node < 0 || node >= comm.nnodes || comm.local_of[r] < 0 ||
        comm.local_of[r] >= static_cast<int>(comm.node_ranks[node].size())) {
      throw Error(std::string(algorithm) + " flows: rank " + std::to_string(r) + " has node " + std::to_string(node) +
                  " / local index " + std::to_string(comm.local_of[r]) + " outside the communicator");
    }
  }
}

}  // namespace trainsim
