// Reduction server AllReduce as a flow DAG (model and source in reduction_server.cpp). A worker node
// of q GPUs reduces inside itself first, so its NICs carry the gradient to the reducers once:
//   1. intra-node reduce-scatter ring on each node (NVLink), aggregated like hierarchical_flows: one
//      flow per hop carrying every block that hop moves; GPU l ends with block l (S/q bytes);
//   2. GPU l of every node sends block l, split into R sub-shards (one per reducer), to the reducers
//      over its rail NIC and receives the reduced sub-shard back; reducer r returns sub-shard (l, r)
//      piece c once the m GPUs of local index l (one per node) have delivered their piece c;
//   3. intra-node all-gather ring on each node, waiting for every return flow into that node.
// With one GPU per node (or a group whose nodes hold different numbers of its ranks) phases 1 and 3
// vanish and every GPU is a worker sending its whole buffer: the original single-GPU design.
//
// Pipelining: one flow per direction and sub-shard, with the return depending on all sends, would
// serialise the two directions (2·S/q/bw) where the real system streams them (S/q/bw, see the
// estimate). So each sub-shard moves in kPipelineChunks pieces: a GPU's piece c to reducer r starts
// after its piece c-1 to r, and the reducer returns piece c once all m pieces c have arrived. The
// network phase then takes (1 + 1/kPipelineChunks)·max(S/q/worker_bw, m·S/R/reducer_bw); latency_us
// adds the fixed round trip plus NCCL's ring latency of the two intra-node phases.
//
// Sizes: 2·kPipelineChunks·n·R network flows plus 2·n ring flows. Each reducer piece's m incoming
// flows are stored once as a dependency list that its m return flows share (FlowDag's CSR allows
// shared ranges), so dependency storage stays O(n·R·kPipelineChunks), not O(n·m·R).
#include <vector>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "collective/algorithms/custom_flow_builder.hpp"
#include "collective/algorithms/custom_step_latency.hpp"

namespace trainsim {

namespace {

constexpr int kPipelineChunks = 4;

Flow worker_reducer_flow(const NcclCommunicator& comm, int worker, int reducer, std::int64_t bytes, bool to_reducer) {
  Flow f;
  const FlowEndpoint gpu{FlowEndpoint::Kind::Gpu, worker}, cpu{FlowEndpoint::Kind::Reducer, reducer};
  f.src = to_reducer ? gpu : cpu;
  f.dst = to_reducer ? cpu : gpu;
  f.bytes = bytes;
  f.payload = bytes;
  f.link = LinkClass::Network;
  const int worker_nic = custom_nic_of(comm, worker);
  f.src_net = to_reducer ? worker_nic : 0;  // a reducer node has one NIC of nic_gbps
  f.dst_net = to_reducer ? 0 : worker_nic;
  return f;
}

// GPUs per node when every node holds the same number of the group's ranks, else 1 (every GPU a worker).
int uniform_ppn(const NcclCommunicator& comm) {
  if (comm.nnodes < 1 || comm.node_ranks.empty()) return 1;
  const auto q = comm.node_ranks.front().size();
  for (const auto& ranks : comm.node_ranks)
    if (ranks.size() != q) return 1;
  return static_cast<int>(q);
}

}  // namespace

FlowDag reduction_server_flows(std::int64_t bytes, const NcclCommunicator& comm, const ReductionServerSpec& rs) {
  check_communicator_shape(comm, "reduction_server");
  const int servers = reduction_servers_used(rs, comm.nnodes);
  CustomFlowBuilder builder;
  FlowDag& dag = builder.dag();
  dag.algorithm = NcclAlgorithm::ReductionServer;
  dag.protocol = NcclProtocol::Simple;
  dag.channels = 1;
  dag.note =
      "reduction server: intra-node reduce-scatter ring, each GPU's shard to the reducers in 4 pipelined "
      "pieces and back, intra-node all-gather ring; return flows share one dependency list per reducer piece";
  const int n = comm.nranks;
  if (n <= 1 || bytes <= 0) return builder.take();
  const int q = uniform_ppn(comm);
  const bool intra = q > 1;
  // Workers sharing one reducer piece: the GPUs of one local index (one per node), or all n GPUs.
  const int groups = intra ? q : 1;
  const int members = intra ? comm.nnodes : n;
  const auto member = [&](int group, int i) { return intra ? comm.node_ranks[i][group] : i; };
  double latency_us = rs.latency_us;

  // Phase 1: intra-node reduce-scatter rings. rs_into[rank] = the flow into rank (its block is then reduced).
  std::vector<std::uint32_t> rs_into(static_cast<std::size_t>(n), 0);
  if (intra) {
    LinkClass slowest = LinkClass::NVLink;
    for (const auto& ranks : comm.node_ranks) {
      for (int l = 0; l < q; ++l) {
        const int src = ranks[l], dst = ranks[(l + 1) % q];
        const Flow f = custom_gpu_flow(comm, src, dst, ring_send_bytes(CollKind::ReduceScatter, bytes, q, l));
        slowest = slower_link(slowest, f.link);
        rs_into[dst] = builder.add(f, {});
      }
    }
    latency_us += ring_phase_latency_us(q - 1, slowest);
  }

  // Phase 2: shard `group` (block of S, or all of S) -> R sub-shards -> kPipelineChunks pieces.
  std::vector<std::uint32_t> previous(static_cast<std::size_t>(n) * static_cast<std::size_t>(servers), 0);
  std::vector<std::vector<std::uint32_t>> returns_into_node(static_cast<std::size_t>(comm.nnodes));
  std::vector<std::uint32_t> arrivals;
  arrivals.reserve(static_cast<std::size_t>(members));
  for (int group = 0; group < groups; ++group) {
    const std::int64_t shard = intra ? partition_bytes(bytes, q, group, group + 1) : bytes;
    for (int c = 0; c < kPipelineChunks; ++c) {
      for (int r = 0; r < servers; ++r) {
        const std::int64_t sub = partition_bytes(shard, servers, r, r + 1);
        const std::int64_t piece = partition_bytes(sub, kPipelineChunks, c, c + 1);
        if (piece == 0) continue;  // same size for every member: the whole piece is absent
        arrivals.clear();
        for (int i = 0; i < members; ++i) {
          const int w = member(group, i);
          std::uint32_t& prev =
              previous[static_cast<std::size_t>(w) * static_cast<std::size_t>(servers) + static_cast<std::size_t>(r)];
          const Flow f = worker_reducer_flow(comm, w, r, piece, true);
          // A GPU's first piece waits for its reduced block (phase 1); later pieces follow the previous
          // one (pieces are zero only at the tail, so a nonzero piece c > 0 has a nonzero predecessor).
          if (c > 0) {
            prev = builder.add(f, std::span<const std::uint32_t>(&prev, 1));
          } else if (intra) {
            prev = builder.add(f, std::span<const std::uint32_t>(&rs_into[static_cast<std::size_t>(w)], 1));
          } else {
            prev = builder.add(f, {});
          }
          arrivals.push_back(prev);
        }
        const auto all_arrived = builder.add_dep_list(arrivals);
        for (int i = 0; i < members; ++i) {
          const int w = member(group, i);
          const std::uint32_t back = builder.add_sharing(worker_reducer_flow(comm, w, r, piece, false), all_arrived);
          returns_into_node[static_cast<std::size_t>(comm.node_of[w])].push_back(back);
        }
      }
    }
  }

  // Phase 3: intra-node all-gather rings, each node's waiting for every return flow into it.
  if (intra) {
    LinkClass slowest = LinkClass::NVLink;
    for (int j = 0; j < comm.nnodes; ++j) {
      const auto& ranks = comm.node_ranks[j];
      const auto node_deps = builder.add_dep_list(returns_into_node[static_cast<std::size_t>(j)]);
      for (int l = 0; l < q; ++l) {
        const Flow f =
            custom_gpu_flow(comm, ranks[l], ranks[(l + 1) % q], ring_send_bytes(CollKind::AllGather, bytes, q, l));
        slowest = slower_link(slowest, f.link);
        builder.add_sharing(f, node_deps);
      }
    }
    latency_us += ring_phase_latency_us(q - 1, slowest);
  }
  dag.latency_us = latency_us;
  return builder.take();
}

}  // namespace trainsim
