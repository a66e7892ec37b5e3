// Entry points of the flow generator: validation, dispatch per (collective, algorithm), and the
// helpers every algorithm shares (link classes, NICs, channel parts).
#include "collective/flows/nccl_flows.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "collective/flows/flows_internal.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {
namespace flows {
namespace {

const NodeTopology* topology_of(const NcclCommunicator& comm, int node) {
  if (comm.node_topology.empty()) return nullptr;
  const auto& t = comm.node_topology[static_cast<std::size_t>(node) < comm.node_topology.size() ? node : 0];
  return t && !t->paths.empty() ? t.get() : nullptr;
}

// The flows name NICs by their index in the communicator's node, which may hold only some of the NCCL node's NICs
// (MNNVL: the hosts with a rank); the network layer numbers the NCCL node's NICs. Renumbers each network flow's NICs
// on the side that uses them: the sender (or its PXN relay) and the receiver.
void number_nics_as_the_network_does(const NcclCommunicator& comm, FlowDag& dag) {
  const auto original = [&](int rank, int net) {
    const NodeTopology* topo = topology_of(comm, comm.node_of[static_cast<std::size_t>(rank)]);
    return topo ? topo->original_net(net) : net;
  };
  for (Flow& f : dag.flows) {
    if (f.src_net >= 0 && f.src.kind == FlowEndpoint::Kind::Gpu)
      f.src_net = original(f.relay >= 0 ? f.relay : f.src.index, f.src_net);
    if (f.dst_net >= 0 && f.dst.kind == FlowEndpoint::Kind::Gpu) f.dst_net = original(f.dst.index, f.dst_net);
  }
}

}  // namespace

std::vector<std::vector<int>> ranks_by_node(const NcclCommunicator& comm) {
  if (static_cast<int>(comm.node_ranks.size()) == comm.nnodes) return comm.node_ranks;
  std::vector<std::vector<int>> out(static_cast<std::size_t>(comm.nnodes));
  for (int r = 0; r < comm.nranks; ++r) {
    auto& v = out[static_cast<std::size_t>(comm.node_of[static_cast<std::size_t>(r)])];
    const auto l = static_cast<std::size_t>(comm.local_of[static_cast<std::size_t>(r)]);
    if (v.size() <= l) v.resize(l + 1, -1);
    v[l] = r;
  }
  return out;
}

LinkClass gpu_link(const NcclCommunicator& comm, int src, int dst) {
  const int node = comm.node_of[src];
  if (node != comm.node_of[dst]) return LinkClass::Network;
  if (const NodeTopology* topo = topology_of(comm, node)) {
    const int a = comm.local_of[src], b = comm.local_of[dst];
    if (a < static_cast<int>(topo->gpus.size()) && b < static_cast<int>(topo->gpus.size())) {
      const PathType t = topo->gpu_to_gpu(a, b).type;
      if (t >= PathType::Pix) return LinkClass::PCIe;  // PIX..SYS: through PCIe switches / the CPU
    }
  }
  return LinkClass::NVLink;
}

int local_nic(const NcclCommunicator& comm, int rank) {
  const int local = comm.local_of[rank];
  if (const NodeTopology* topo = topology_of(comm, comm.node_of[rank])) {
    if (local < static_cast<int>(topo->gpus.size()) && !topo->nets.empty()) {
      // ncclTopoComputePaths: local NICs = maximum path bandwidth, ties broken by the lowest path type.
      int best = 0;
      for (int n = 1; n < static_cast<int>(topo->nets.size()); ++n) {
        const TopoPath& p = topo->gpu_to_net(local, n);
        const TopoPath& b = topo->gpu_to_net(local, best);
        if (p.bw > b.bw || (p.bw == b.bw && p.type < b.type)) best = n;
      }
      return best;
    }
  }
  return local;  // rail-optimised default: GPU i uses NIC i
}

std::vector<RankChannelNics> channel_nics_by_rank(const NcclCommunicator& comm) {
  std::map<std::pair<const NodeTopology*, int>, NodeTopology::ChannelNets> worked_out;
  std::vector<RankChannelNics> out(static_cast<std::size_t>(comm.nranks));
  for (int rank = 0; rank < comm.nranks; ++rank) {
    RankChannelNics& r = out[static_cast<std::size_t>(rank)];
    const int local = comm.local_of[static_cast<std::size_t>(rank)];
    r.fallback = local;
    const NodeTopology* topo = topology_of(comm, comm.node_of[static_cast<std::size_t>(rank)]);
    if (!topo || local >= static_cast<int>(topo->gpus.size()) || topo->nets.empty()) continue;
    auto [it, fresh] = worked_out.try_emplace({topo, local});
    if (fresh) it->second = topo->channel_nets(local);
    r.nets = it->second;
  }
  return out;
}

int nvls_head_nic(const NcclCommunicator& comm, int rank) {
  const int local = comm.local_of[rank];
  const SearchGraph& g = comm.nvls_graph;
  for (std::size_t c = 0; c < g.intra.size(); ++c) {
    if (g.intra[c].empty() || g.intra[c][0] != local) continue;
    if (c < g.net_out.size() && g.net_out[c] >= 0) return g.net_out[c];
    if (c < g.net_in.size() && g.net_in[c] >= 0) return g.net_in[c];
  }
  return local_nic(comm, rank);
}

Flow gpu_flow(const NcclCommunicator& comm, int src, int dst, std::int64_t payload, std::int64_t wire, int channel,
              int step) {
  Flow f;
  f.src = FlowEndpoint{FlowEndpoint::Kind::Gpu, src};
  f.dst = FlowEndpoint{FlowEndpoint::Kind::Gpu, dst};
  f.payload = payload;
  f.bytes = wire;
  f.link = gpu_link(comm, src, dst);
  f.channel = channel;
  f.step = step;
  return f;
}

std::vector<ChannelPart> collective_parts(const CallContext& ctx, int kind_max_channels) {
  const int n = ctx.comm.nranks;
  // AllGather and Broadcast run on bytes (int8, as NCCL's enqueue.cc runs them); the others on elements of
  // element_size.
  const bool as_bytes = ctx.kind == CollKind::AllGather || ctx.kind == CollKind::Broadcast;
  const int elt = as_bytes ? 1 : ctx.options.element_size;
  const bool per_rank = ctx.kind == CollKind::AllGather || ctx.kind == CollKind::ReduceScatter;
  const std::int64_t count_bytes = per_rank ? ctx.bytes / n : ctx.bytes;
  std::int64_t tpb = traffic_per_byte(ctx.kind, n);
  if (ctx.plan.protocol == NcclProtocol::LL) tpb *= 4;  // LL tasks count 4× for balancing (enqueue.cc)
  return split_channels_cbd(count_bytes, elt, tpb, ctx.plan.channels, std::max(1, kind_max_channels));
}

std::int64_t chunking_bytes(const CallContext& ctx, const ChannelPart& part) {
  const bool per_rank = ctx.kind == CollKind::AllGather || ctx.kind == CollKind::ReduceScatter;
  return per_rank ? part.bytes * ctx.comm.nranks : part.bytes;
}

CollChunking chunking_for(const CallContext& ctx, const ChannelPart& part, int nvls_heads) {
  ChunkingInput in;
  in.kind = ctx.kind;
  in.algorithm = ctx.plan.algorithm;
  in.protocol = ctx.plan.protocol;
  in.nbytes = chunking_bytes(ctx, part);
  in.nranks = ctx.comm.nranks;
  in.nnodes = ctx.comm.nnodes;
  in.nvls_heads = nvls_heads;
  in.simple_buffsize = ctx.options.buffsize;
  return calc_coll_chunking(in);
}

}  // namespace flows

namespace {

void validate_comm(const NcclCommunicator& comm) {
  const auto n = static_cast<std::size_t>(comm.nranks);
  if (comm.nranks <= 0 || comm.node_of.size() != n || comm.local_of.size() != n)
    throw Error("flow generation: communicator has " + std::to_string(comm.nranks) +
                " ranks but node_of/local_of of another size");
  for (std::size_t r = 0; r < n; ++r)
    if (comm.node_of[r] < 0 || comm.node_of[r] >= comm.nnodes || comm.local_of[r] < 0)
      throw Error("flow generation: rank " + std::to_string(r) + " has an invalid node or local index");
}

void validate_options(const FlowOptions& o) {
  if (o.buffsize < 4096 || o.buffsize % 8 != 0)
    throw Error("flow generation: NCCL_BUFFSIZE must be a positive multiple of 8 >= 4096");
  if (o.p2p_net_chunksize <= 0) throw Error("flow generation: NCCL_P2P_NET_CHUNKSIZE must be positive");
  if (o.element_size <= 0 || 16 % o.element_size != 0) throw Error("flow generation: element size must divide 16");
}

[[noreturn]] void unsupported(CollKind kind, NcclAlgorithm algo, const std::string& why) {
  throw Error(std::string("flow generation: ") + to_string(kind) + " with algorithm " + to_string(algo) +
              " is not possible: " + why);
}

bool is_p2p(CollKind k) { return k == CollKind::AllToAll || k == CollKind::SendRecv; }

}  // namespace

FlowDag generate_collective_flows(const NcclCommunicator& comm, CollKind kind, std::int64_t bytes, const CallPlan& plan,
                                  const FlowOptions& options, int root) {
  validate_comm(comm);
  validate_options(options);
  TRAINSIM_CHECK(bytes >= 0, "flow generation: negative byte count");
  TRAINSIM_CHECK(root >= 0 && root < comm.nranks, "flow generation: root " + std::to_string(root) + " out of range");
  FlowDag dag;
  dag.algorithm = is_p2p(kind) ? NcclAlgorithm::P2P : plan.algorithm;
  dag.protocol = plan.protocol;
  if (comm.nranks == 1 || bytes == 0) {
    dag.note = "nothing to move (one rank or zero bytes)";
    return dag;
  }
  const flows::CallContext ctx{comm, kind, bytes, plan, options, root};
  if (is_p2p(kind)) {
    flows::p2p_collective_flows(ctx, dag);
    flows::number_nics_as_the_network_does(comm, dag);
    return dag;
  }
  TRAINSIM_CHECK(plan.channels >= 1, "flow generation: plan needs at least one channel");
  const bool simple_only = plan.algorithm == NcclAlgorithm::NVLS || plan.algorithm == NcclAlgorithm::NVLSTree ||
                           plan.algorithm == NcclAlgorithm::PAT || plan.algorithm == NcclAlgorithm::CollNetChain ||
                           plan.algorithm == NcclAlgorithm::CollNetDirect;
  if (simple_only && plan.protocol != NcclProtocol::Simple)
    unsupported(kind, plan.algorithm, "it only runs with the Simple protocol");
  switch (plan.algorithm) {
    case NcclAlgorithm::Ring:
      if (comm.rings.empty()) unsupported(kind, plan.algorithm, "the communicator has no rings");
      flows::ring_flows(ctx, dag);
      break;
    case NcclAlgorithm::Tree:
      if (kind != CollKind::AllReduce) unsupported(kind, plan.algorithm, "Tree only implements AllReduce");
      if (comm.trees.empty()) unsupported(kind, plan.algorithm, "the communicator has no trees");
      flows::tree_flows(ctx, dag);
      break;
    case NcclAlgorithm::NVLS:
      if (comm.nvls_heads <= 0 || comm.nvls_head_local.empty())
        unsupported(kind, plan.algorithm, "the communicator has no NVLS heads (no NVLink SHARP)");
      if (comm.nnodes > 1 && !comm.collnet)
        unsupported(kind, plan.algorithm, "multi-node NVLS needs CollNet (SHARP, NCCL_COLLNET_ENABLE=1)");
      if (comm.nnodes > 1 && kind != CollKind::AllReduce)
        unsupported(kind, plan.algorithm, "multi-node NVLS runs AllReduce only (the CollNet plugin has no allgather)");
      if (kind != CollKind::AllReduce && kind != CollKind::AllGather && kind != CollKind::ReduceScatter)
        unsupported(kind, plan.algorithm, "NVLS runs AllReduce, AllGather and ReduceScatter only");
      flows::nvls_flows(ctx, dag);
      break;
    case NcclAlgorithm::NVLSTree:
      if (comm.nvls_heads <= 0 || comm.nvls_head_local.empty())
        unsupported(kind, plan.algorithm, "the communicator has no NVLS heads (no NVLink SHARP)");
      if (kind != CollKind::AllReduce) unsupported(kind, plan.algorithm, "NVLSTree only implements AllReduce");
      if (comm.nnodes < 2) unsupported(kind, plan.algorithm, "NVLSTree needs more than one node");
      flows::nvls_tree_flows(ctx, dag);
      break;
    case NcclAlgorithm::PAT:
      if (kind != CollKind::AllGather && kind != CollKind::ReduceScatter)
        unsupported(kind, plan.algorithm, "PAT runs AllGather and ReduceScatter only");
      if (comm.nnodes != comm.nranks) unsupported(kind, plan.algorithm, "PAT needs exactly one rank per node");
      flows::pat_flows(ctx, dag);
      break;
    case NcclAlgorithm::CollNetChain:
    case NcclAlgorithm::CollNetDirect:
      if (!comm.collnet) unsupported(kind, plan.algorithm, "CollNet needs NCCL_COLLNET_ENABLE=1 and at least 2 nodes");
      if (kind != CollKind::AllReduce) unsupported(kind, plan.algorithm, "CollNet runs AllReduce only");
      if (plan.algorithm == NcclAlgorithm::CollNetChain)
        flows::collnet_chain_flows(ctx, dag);
      else
        flows::collnet_direct_flows(ctx, dag);
      break;
    default: unsupported(kind, plan.algorithm, "no flow generator for this algorithm");
  }
  flows::number_nics_as_the_network_does(comm, dag);
  return dag;
}

FlowDag generate_exchange_flows(const NcclCommunicator& comm, std::int64_t bytes, const TokenExchange& exchange) {
  validate_comm(comm);
  TRAINSIM_CHECK(bytes >= 0, "flow generation: negative byte count");
  FlowDag dag;
  dag.algorithm = NcclAlgorithm::P2P;
  if (bytes == 0 || !exchange.on()) {
    dag.note = "nothing to move (zero bytes)";
    return dag;
  }
  flows::token_exchange_flows(comm, bytes, exchange, dag);
  flows::number_nics_as_the_network_does(comm, dag);
  return dag;
}

FlowDag generate_send_flows(const NcclCommunicator& comm, int src, int dst, std::int64_t bytes,
                            const FlowOptions& options) {
  validate_comm(comm);
  validate_options(options);
  TRAINSIM_CHECK(bytes >= 0, "flow generation: negative byte count");
  TRAINSIM_CHECK(
      src >= 0 && src < comm.nranks && dst >= 0 && dst < comm.nranks,
      "flow generation: send " + std::to_string(src) + " -> " + std::to_string(dst) + " outside the communicator");
  FlowDag dag;
  dag.algorithm = NcclAlgorithm::P2P;
  if (src == dst || bytes == 0) {
    dag.note = "nothing to move (self send or zero bytes)";
    return dag;
  }
  flows::p2p_send_flows(comm, src, dst, bytes, options, dag);
  flows::number_nics_as_the_network_does(comm, dag);
  return dag;
}

}  // namespace trainsim
