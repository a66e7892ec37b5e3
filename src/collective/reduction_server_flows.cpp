// Reduction server AllReduce as a flow DAG (model and source in reduction_server.cpp). Worker w sends
// shard r (bytes: exact partition of S into R shards) to reducer r over its rail NIC and receives the
// reduced shard back; the reducer can return a piece only once every worker's piece has arrived.
//
// Pipelining: one flow per direction and shard, with the return depending on all sends, would
// serialise the two directions (2·S/bw) where the real system streams them (S/bw, see the estimate).
// So each shard moves in kPipelineChunks pieces: worker w's piece c to reducer r starts after its
// piece c-1 to r, and reducer r returns piece c to every worker once all n workers' piece c has
// arrived. The makespan is then (1 + 1/kPipelineChunks)·max(S/worker_bw, n·S/R/reducer_bw), the
// last piece's return being the unhidden tail; `latency_us` adds the fixed round trip.
//
// Sizes: 2·kPipelineChunks·n·R flows. Each reducer piece's n incoming flows are stored once as a
// dependency list that its n return flows share (FlowDag's CSR allows shared ranges), so the
// dependency storage is O(n·R·kPipelineChunks) too, not O(n²·R).
#include <vector>

#include "collective/custom_algorithm_parts.hpp"
#include "collective/custom_flow_builder.hpp"

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

}  // namespace

FlowDag reduction_server_flows(std::int64_t bytes, const NcclCommunicator& comm, const ReductionServerSpec& rs) {
  check_communicator_shape(comm, "reduction_server");
  const int servers = reduction_servers_used(rs, comm.nnodes);
  CustomFlowBuilder builder;
  FlowDag& dag = builder.dag();
  dag.algorithm = NcclAlgorithm::ReductionServer;
  dag.protocol = NcclProtocol::Simple;
  dag.channels = 1;
  dag.note = "reduction server: each shard in 4 pipelined pieces, worker->reducer then reducer->worker; "
             "return flows share one dependency list per reducer piece";
  const int n = comm.nranks;
  if (n <= 1 || bytes <= 0) return builder.take();
  dag.latency_us = rs.latency_us;

  std::vector<std::uint32_t> previous_piece(static_cast<std::size_t>(n) * static_cast<std::size_t>(servers), 0);
  std::vector<std::uint32_t> arrivals;
  arrivals.reserve(static_cast<std::size_t>(n));
  for (int c = 0; c < kPipelineChunks; ++c) {
    for (int r = 0; r < servers; ++r) {
      const std::int64_t shard = partition_bytes(bytes, servers, r, r + 1);
      const std::int64_t piece = partition_bytes(shard, kPipelineChunks, c, c + 1);
      if (piece == 0) continue;  // same size for every worker: the whole piece is absent
      arrivals.clear();
      for (int w = 0; w < n; ++w) {
        std::uint32_t& prev = previous_piece[static_cast<std::size_t>(w) * static_cast<std::size_t>(servers) +
                                             static_cast<std::size_t>(r)];
        const Flow f = worker_reducer_flow(comm, w, r, piece, true);
        // Pieces of a shard are zero only at the tail (partition puts the larger ones first), so a
        // nonzero piece c > 0 always has a nonzero predecessor.
        prev = c == 0 ? builder.add(f, {}) : builder.add(f, std::span<const std::uint32_t>(&prev, 1));
        arrivals.push_back(prev);
      }
      const auto all_arrived = builder.add_dep_list(arrivals);
      for (int w = 0; w < n; ++w) builder.add_sharing(worker_reducer_flow(comm, w, r, piece, false), all_arrived);
    }
  }
  return builder.take();
}

}  // namespace trainsim
