// Hierarchical collectives as a flow DAG (phases and byte conventions in hierarchical.cpp). Each phase
// is a ring, aggregated like NCCL's ring channels (flow_dag.hpp): one flow per hop carrying every
// block that hop moves over the whole phase.
//   intra-node phase on each node: local l -> l+1, RS sends S minus the block it keeps, AG sends S
//     minus the block it receives last ((q-1)/q·S each when q divides S);
//   inter-node phase for each local index l: node j -> j+1 among the GPUs of local index l (rail
//     NIC l), on shard T_l = block l of S over ppn: AR sends 2(m-1)/m·T_l, RS/AG (m-1)/m·T_l.
// Dependencies between phases: a GPU's inter-node flow waits for the intra-node RS flow into it (its
// node-reduced shard is complete when that last hop lands); a node's intra-node AG flows wait for all
// inter-node flows into that node's GPUs (the AG ring forwards every GPU's shard, so it needs them
// all; the list is stored once per node and shared). Latency: each phase is an NCCL ring, charged as
// NCCL's cost model charges a Ring/Simple collective (ncclTopoTuneModel: baseLat + steps·hwLat).
#include <string>
#include <vector>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "collective/algorithms/custom_flow_builder.hpp"
#include "collective/algorithms/custom_step_latency.hpp"
#include "core/error.hpp"

namespace trainsim {

FlowDag hierarchical_flows(CollKind kind, std::int64_t bytes, const NcclCommunicator& comm) {
  check_communicator_shape(comm, "hierarchical");
  CustomFlowBuilder builder;
  FlowDag& dag = builder.dag();
  dag.algorithm = NcclAlgorithm::Hierarchical;
  dag.protocol = NcclProtocol::Simple;
  dag.channels = 1;
  dag.note =
      "hierarchical: intra-node ring, inter-node ring per local index, intra-node ring; one flow per hop and phase";
  const int n = comm.nranks, m = comm.nnodes;
  if (n <= 1 || bytes <= 0) return builder.take();
  if (m < 2) {
    throw Error("hierarchical " + std::string(to_string(kind)) + ": the group's " + std::to_string(n) +
                " ranks sit on one node; hierarchical needs several nodes");
  }
  const int ppn = static_cast<int>(comm.node_ranks[0].size());
  for (const auto& ranks : comm.node_ranks) {
    if (static_cast<int>(ranks.size()) != ppn) {
      throw Error("hierarchical " + std::string(to_string(kind)) +
                  ": needs the same number of ranks on every node (found " + std::to_string(ppn) + " and " +
                  std::to_string(ranks.size()) + ")");
    }
  }
  const bool intra_first = kind == CollKind::AllReduce || kind == CollKind::ReduceScatter;
  const bool intra_last = kind == CollKind::AllReduce || kind == CollKind::AllGather;
  const CollKind inter_kind = kind;  // AR across nodes for AR, RS for RS, AG for AG
  const std::vector<std::uint32_t> no_deps;

  // Phase 1: intra-node reduce-scatter rings (AR, RS). rs_into[rank] = the flow into rank.
  std::vector<std::uint32_t> rs_into(static_cast<std::size_t>(n), 0);
  double latency_us = 0;
  if (intra_first && ppn > 1) {
    LinkClass slowest = LinkClass::NVLink;
    for (const auto& ranks : comm.node_ranks) {
      for (int l = 0; l < ppn; ++l) {
        const int src = ranks[l], dst = ranks[(l + 1) % ppn];
        const Flow f = custom_gpu_flow(comm, src, dst, ring_send_bytes(CollKind::ReduceScatter, bytes, ppn, l));
        slowest = slower_link(slowest, f.link);
        rs_into[dst] = builder.add(f, no_deps);
      }
    }
    latency_us += ring_phase_latency_us(ppn - 1, slowest);
  }

  // Phase 2: inter-node rings among same-local-index GPUs, on shard l of the buffer.
  std::vector<std::vector<std::uint32_t>> inter_into_node(static_cast<std::size_t>(m));
  for (int l = 0; l < ppn; ++l) {
    const std::int64_t shard = partition_bytes(bytes, ppn, l, l + 1);
    for (int j = 0; j < m; ++j) {
      const int src = comm.node_ranks[j][l], dst = comm.node_ranks[(j + 1) % m][l];
      const Flow f = custom_gpu_flow(comm, src, dst, ring_send_bytes(inter_kind, shard, m, j));
      const std::uint32_t dep = rs_into[src];
      const std::uint32_t id =
          (intra_first && ppn > 1) ? builder.add(f, std::span<const std::uint32_t>(&dep, 1)) : builder.add(f, no_deps);
      inter_into_node[(j + 1) % m].push_back(id);
    }
  }
  latency_us += ring_phase_latency_us(kind == CollKind::AllReduce ? 2 * (m - 1) : m - 1, LinkClass::Network);

  // Phase 3: intra-node all-gather rings (AR, AG), each node's waiting on its inter-node arrivals.
  if (intra_last && ppn > 1) {
    LinkClass slowest = LinkClass::NVLink;
    for (int j = 0; j < m; ++j) {
      const auto& ranks = comm.node_ranks[j];
      const auto node_deps = builder.add_dep_list(inter_into_node[j]);
      for (int l = 0; l < ppn; ++l) {
        const Flow f =
            custom_gpu_flow(comm, ranks[l], ranks[(l + 1) % ppn], ring_send_bytes(CollKind::AllGather, bytes, ppn, l));
        slowest = slower_link(slowest, f.link);
        builder.add_sharing(f, node_deps);
      }
    }
    latency_us += ring_phase_latency_us(ppn - 1, slowest);
  }
  dag.latency_us = latency_us;
  return builder.take();
}

}  // namespace trainsim
