// The fabric of a SimAI topology file (cluster.network.simai_topology; docs/topologies.md, "SimAI topology files"):
// its switches and cables instead of a generator's. Each GPU of the file is also its NIC there; here NIC k of a
// server is GPU k's, on its PCIe switch as in the generated fabrics, and the GPU's links to switches are that NIC's
// cables at the file's rates and delays. A server's NVSwitches become its one scale-up node, each GPU's NVLink the sum
// of its links to them (SimAI's routing spreads a GPU's NVLink traffic over all of them). Switches keep their file
// order within a tier: leaf i is the i-th switch (by id) that GPUs link to.
#include <algorithm>

#include "core/error.hpp"
#include "topology/generators.hpp"
#include "topology/graph_builder.hpp"
#include "topology/simai_fabric.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_simai_file(const ClusterSpec& c) {
  if (c.network.simai_topology.empty())
    cluster_error("network.simai_topology", "the topology is a SimAI file but no file is named");
  SimaiFabric f;
  try {
    f = read_simai_fabric(c.network.simai_topology);
  } catch (const ScenarioError&) { throw; } catch (const Error& e) {
    cluster_error("network.simai_topology", e.what());
  }
  check_cluster_matches(f, c);
  const SimaiTopology& t = f.file;
  // The file's rates exactly, not the scenario's round trip through GB/s.
  ClusterSpec exact = c;
  exact.scale_up.bandwidth_GBps = static_cast<double>(f.nvlink_bps) / 8e9;
  if (f.nic_bps > 0) exact.nic_gbps = static_cast<double>(f.nic_bps) / 1e9;

  NetworkGraphBuilder b(exact);
  for (int g = 0; g < f.gpus; ++g) b.set_source_id(g, g);
  const NodeId first_nvswitch = f.gpus;
  for (int d = 0; d < f.servers; ++d) b.set_source_id(first_nvswitch + d, f.gpus + d * f.nvswitches_per_server);

  const int base = f.first_switch_id(), switches = static_cast<int>(f.switch_tier.size());
  std::vector<NodeId> node_of(static_cast<std::size_t>(switches), -1);
  constexpr SwitchRole kRoles[] = {SwitchRole::Leaf, SwitchRole::Spine, SwitchRole::Core};
  for (int tier = 0; tier < 3; ++tier) {
    std::vector<int> members;
    for (int s = 0; s < switches; ++s)
      if (f.switch_tier[static_cast<std::size_t>(s)] == tier) members.push_back(s);
    if (members.empty()) continue;
    const NodeId first = b.add_switches(kRoles[tier], tier, static_cast<int>(members.size()));
    for (std::size_t i = 0; i < members.size(); ++i) {
      node_of[static_cast<std::size_t>(members[i])] = first + static_cast<NodeId>(i);
      b.set_source_id(first + static_cast<NodeId>(i), base + members[i]);
    }
  }

  const int per_server = t.gpus_per_server;
  for (const SimaiLink& l : t.links) {
    int a = std::min(l.src, l.dst), z = std::max(l.src, l.dst);  // GPUs, then NVSwitches, then switches
    if (z < base) continue;                                      // GPU - NVSwitch: the builder's scale-up cable
    const double Bps = static_cast<double>(l.rate_bps) / 8, latency_ns = static_cast<double>(l.delay_ps) / 1e3;
    if (a < f.gpus) {
      b.add_cable(b.nic(a / per_server, a % per_server), node_of[static_cast<std::size_t>(z - base)], LinkKind::Access,
                  Bps, latency_ns);
      continue;
    }
    // Lower tier first, as the generators add leaf-spine and spine-core cables.
    if (f.switch_tier[static_cast<std::size_t>(a - base)] > f.switch_tier[static_cast<std::size_t>(z - base)])
      std::swap(a, z);
    const LinkKind kind =
        f.switch_tier[static_cast<std::size_t>(a - base)] == 0 ? LinkKind::LeafSpine : LinkKind::SpineCore;
    b.add_cable(node_of[static_cast<std::size_t>(a - base)], node_of[static_cast<std::size_t>(z - base)], kind, Bps,
                latency_ns);
  }
  b.add_derived("nvswitches_per_server", f.nvswitches_per_server);
  b.add_derived("file_links", static_cast<double>(t.links.size()));
  return std::move(b).finish();
}

}  // namespace trainsim::topology_detail
