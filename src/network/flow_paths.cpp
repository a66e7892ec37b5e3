#include "network/flow_paths.hpp"

#include <string>

#include "core/error.hpp"

namespace trainsim {

FlowPaths::FlowPaths(const ClusterSpec& cluster, Router& router, bool adaptive)
    : cluster_(cluster), router_(router), graph_(router.graph()), adaptive_(adaptive) {}

// NCCL's "node" is a host, or the whole scale-up domain when it spans hosts (MNNVL); its nets are
// then the NICs of all the domain's hosts in host order.
FlowPaths::NicRef FlowPaths::nic_of(int rank, int net) const {
  const int per_host = std::max(1, cluster_.nics_per_node);
  const int host = cluster_.node_of(rank);
  if (net < 0) {
    const auto local = graph_.local_nics(rank);
    return {host, local.empty() ? 0 : local.front()};
  }
  if (cluster_.scale_up.domain_size > cluster_.gpus_per_node) {
    const int first_host = cluster_.domain_of(rank) * cluster_.scale_up.domain_size / cluster_.gpus_per_node;
    return {first_host + net / per_host, net % per_host};
  }
  return {host, net % per_host};
}

bool FlowPaths::nic_up(NicRef nic) const {
  const NodeId n = graph_.nic(nic.host, nic.nic);
  for (LinkId l : graph_.out_links(n))
    if (graph_.link(l).kind == LinkKind::Access && graph_.link(l).up) return true;
  return false;
}

FlowPaths::NicRef FlowPaths::working_nic(NicRef want) const {
  const int n = graph_.nics_per_node();
  for (int k = 0; k < n; ++k) {
    const NicRef c{want.host, (want.nic + k) % n};
    if (nic_up(c)) return c;
  }
  throw Error("network: every NIC of node " + std::to_string(want.host) +
              " is down; its GPUs cannot reach the network");
}

LinkId FlowPaths::nic_uplink(NicRef nic) const {
  for (LinkId l : graph_.out_links(graph_.nic(nic.host, nic.nic)))
    if (graph_.link(l).kind == LinkKind::Access && graph_.link(l).up) return l;
  throw Error("network: NIC " + std::to_string(nic.nic) + " of node " + std::to_string(nic.host) +
              " has no working uplink");
}

void FlowPaths::scale_up(int src, int dst, std::vector<LinkId>& out) const {
  if (src == dst) return;
  const auto p = router_.scale_up_path(src, dst);
  out.insert(out.end(), p.begin(), p.end());
}

// PCIe from the GPU when the NIC is local to it, else over the scale-up fabric to a GPU the NIC is
// local to (PXN).
void FlowPaths::gpu_to_nic(int rank, NicRef nic, std::vector<LinkId>& out) const {
  const auto local = graph_.local_nics(rank);
  if (cluster_.node_of(rank) == nic.host && std::find(local.begin(), local.end(), nic.nic) != local.end()) {
    out.push_back(router_.gpu_to_nic(rank, nic.nic));
    return;
  }
  const auto gpus = graph_.local_gpus(nic.host, nic.nic);
  if (gpus.empty())
    throw Error("network: NIC " + std::to_string(nic.nic) + " of node " + std::to_string(nic.host) +
                " has no local GPU");
  scale_up(rank, gpus.front(), out);
  out.push_back(router_.gpu_to_nic(gpus.front(), nic.nic));
}

void FlowPaths::nic_to_gpu(NicRef nic, int rank, std::vector<LinkId>& out) const {
  const auto local = graph_.local_nics(rank);
  if (cluster_.node_of(rank) == nic.host && std::find(local.begin(), local.end(), nic.nic) != local.end()) {
    out.push_back(router_.nic_to_gpu(nic.nic, rank));
    return;
  }
  const auto gpus = graph_.local_gpus(nic.host, nic.nic);
  if (gpus.empty())
    throw Error("network: NIC " + std::to_string(nic.nic) + " of node " + std::to_string(nic.host) +
                " has no local GPU");
  out.push_back(router_.nic_to_gpu(nic.nic, gpus.front()));
  scale_up(gpus.front(), rank, out);
}

void FlowPaths::append(const Flow& flow, std::span<const int> members, std::uint64_t flow_key,
                       std::span<const double> link_load, std::vector<LinkId>& out) {
  using K = FlowEndpoint::Kind;
  auto global = [&](int comm_rank) {
    if (comm_rank < 0 || comm_rank >= static_cast<int>(members.size()))
      throw Error("network: flow endpoint rank " + std::to_string(comm_rank) + " is outside its group of " +
                  std::to_string(members.size()));
    return members[static_cast<std::size_t>(comm_rank)];
  };
  switch (flow.link) {
    case LinkClass::NVLink:
    case LinkClass::PCIe: scale_up(global(flow.src.index), global(flow.dst.index), out); return;
    case LinkClass::NVLinkSharp:
      if (flow.src.kind == K::Gpu) out.push_back(graph_.scale_up_link(global(flow.src.index)));
      if (flow.dst.kind == K::Gpu) out.push_back(NetworkGraph::reverse(graph_.scale_up_link(global(flow.dst.index))));
      return;
    case LinkClass::Network: break;
  }
  // Network: the sending side (a GPU, possibly through a PXN relay), the fabric, the receiving side.
  const bool from_gpu = flow.src.kind == K::Gpu, to_gpu = flow.dst.kind == K::Gpu;
  if (!from_gpu && !to_gpu) throw Error("network: a network flow needs a GPU at one end");
  NicRef src{}, dst{};
  if (from_gpu) {
    const int s = global(flow.src.index);
    const int sender = flow.relay >= 0 ? global(flow.relay) : s;
    src = working_nic(nic_of(sender, flow.src_net));
    if (flow.relay >= 0) scale_up(s, sender, out);
    gpu_to_nic(sender, src, out);
  }
  if (to_gpu) dst = working_nic(nic_of(global(flow.dst.index), flow.dst_net));
  if (from_gpu && to_gpu) {
    scratch_.clear();
    if (adaptive_)
      router_.adaptive_path({src.host, src.nic}, {dst.host, dst.nic}, link_load, flow_key, scratch_);
    else
      router_.ecmp_path({src.host, src.nic}, {dst.host, dst.nic}, flow_key, scratch_);
    out.insert(out.end(), scratch_.begin(), scratch_.end());
  } else if (from_gpu) {
    out.push_back(nic_uplink(src));  // into the fabric's reduction (or to a reduction server)
  } else {
    out.push_back(NetworkGraph::reverse(nic_uplink(dst)));
  }
  if (to_gpu) nic_to_gpu(dst, global(flow.dst.index), out);
}

}  // namespace trainsim
