#pragma once
// Shared plumbing of the per-algorithm flow generators (flows_*.cpp): the DAG builder that keeps
// dependencies in CSR form, link classes and NICs derived from the communicator, and the per-call
// context (channel parts from CBD, options). Private to src/collective.
#include <cstdint>
#include <limits>
#include <vector>

#include "collective/nccl/nccl_chunking.hpp"
#include "collective/flows/nccl_flows.hpp"

namespace trainsim::flows {

inline constexpr std::uint32_t kNoFlow = std::numeric_limits<std::uint32_t>::max();

// The GPU of `rank` as a flow's end.
inline FlowEndpoint gpu(int rank) { return FlowEndpoint{FlowEndpoint::Kind::Gpu, rank}; }

// Appends flows; dependencies declared with depend_on() before add() belong to the added flow.
class DagBuilder {
 public:
  explicit DagBuilder(FlowDag& dag) : dag_(dag), pending_(static_cast<std::uint32_t>(dag.dep_index.size())) {}
  void depend_on(std::uint32_t flow) {
    if (flow != kNoFlow) dag_.dep_index.push_back(flow);
  }
  std::uint32_t add(Flow flow) {
    flow.dep_begin = pending_;
    flow.dep_end = static_cast<std::uint32_t>(dag_.dep_index.size());
    pending_ = flow.dep_end;
    dag_.flows.push_back(flow);
    return static_cast<std::uint32_t>(dag_.flows.size() - 1);
  }
  FlowDag& dag() { return dag_; }

 private:
  FlowDag& dag_;
  std::uint32_t pending_;
};

// What every generator needs about the call.
struct CallContext {
  const NcclCommunicator& comm;
  CollKind kind;
  std::int64_t bytes;  // nBytes convention of generate_collective_flows
  CallPlan plan;
  FlowOptions options;
  int root = 0;
  bool per_step() const { return options.granularity == FlowGranularity::PerStep; }
};

// GPU-to-GPU link class: Network across nodes; inside a node NVLink, or PCIe when the node's
// topology says the GPUs' path is PCIe-class (PIX..SYS).
LinkClass gpu_link(const NcclCommunicator& comm, int src, int dst);
// NIC (index into the node's nets) a rank's traffic leaves/enters through when nothing more specific
// is known: its closest NIC from the node topology's paths, else its local index (1 NIC per GPU).
int local_nic(const NcclCommunicator& comm, int rank);
// How a rank spreads its p2p channels over its local NICs (ncclTopoGetLocalNet, as p2p connections without a graph
// pick their NIC per channel); `at(c)` is the NIC of channel c. Without a node topology: its local index.
struct RankChannelNics {
  NodeTopology::ChannelNets nets;
  int fallback = 0;
  int at(int channel) const { return nets.nets.empty() ? fallback : nets.at(channel); }
};
// Every rank's, worked out once per (node topology, local index): nodes usually share one topology.
std::vector<RankChannelNics> channel_nics_by_rank(const NcclCommunicator& comm);
// Ranks of each node by local index (from node_ranks, or rebuilt from node_of/local_of).
std::vector<std::vector<int>> ranks_by_node(const NcclCommunicator& comm);
// NIC of NVLS head `head_local` (local rank): the NVLS graph channel it heads, else local_nic.
int nvls_head_nic(const NcclCommunicator& comm, int rank);

// A GPU->GPU flow of `payload` bytes (wire = `wire`) with link class filled in.
Flow gpu_flow(const NcclCommunicator& comm, int src, int dst, std::int64_t payload, std::int64_t wire, int channel,
              int step);

// The channel parts of the call (CBD) for collectives; `kind_max_channels` = comm budget of the kind.
std::vector<ChannelPart> collective_parts(const CallContext& ctx, int kind_max_channels);
// Global bytes calcCollChunking sees for a part (part × nranks for AG/RS).
std::int64_t chunking_bytes(const CallContext& ctx, const ChannelPart& part);
CollChunking chunking_for(const CallContext& ctx, const ChannelPart& part, int nvls_heads);

void ring_flows(const CallContext& ctx, FlowDag& dag);
void tree_flows(const CallContext& ctx, FlowDag& dag);
void nvls_flows(const CallContext& ctx, FlowDag& dag);
void nvls_tree_flows(const CallContext& ctx, FlowDag& dag);
void pat_flows(const CallContext& ctx, FlowDag& dag);
void collnet_chain_flows(const CallContext& ctx, FlowDag& dag);
void collnet_direct_flows(const CallContext& ctx, FlowDag& dag);
// AllToAll (bytes = one rank's send buffer) and SendRecv (each rank to rank+1).
void p2p_collective_flows(const CallContext& ctx, FlowDag& dag);
void p2p_send_flows(const NcclCommunicator& comm, int src, int dst, std::int64_t bytes, const FlowOptions& options,
                    FlowDag& dag);
// A DeepEP token exchange (bytes = one copy of each of a rank's tokens).
void token_exchange_flows(const NcclCommunicator& comm, std::int64_t bytes, const TokenExchange& exchange,
                          FlowDag& dag);

}  // namespace trainsim::flows
