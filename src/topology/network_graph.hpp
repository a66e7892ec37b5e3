#pragma once
// The cluster's network as a directed graph: GPUs, scale-up switches (one per scale-up domain),
// NICs and scale-out switches are nodes; every cable is two links, one per direction, each with its
// own capacity and latency. Ids are dense ints so that the flow backend can keep per-link state in
// plain vectors indexed by LinkId and carry paths as std::vector<LinkId>.
//
// Names (docs/topologies.md, "Names"): gpu<rank>, nvswitch<domain>, node<n>.nic<k>, leaf<i>,
// spine<i>, core<i>, router<i>, xbar; a link is "<from>><to>" ("node12.nic3>leaf5"). Users name
// links in `faults:`: "a>b" is one direction, "a-b" both.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

using NodeId = std::int32_t;
using LinkId = std::int32_t;

enum class NodeKind : std::uint8_t { Gpu, NVSwitch, Nic, Switch };

// What a scale-out switch is in its fabric. Leaves are tier 0 (ToR), spines tier 1 (aggregation),
// cores tier 2 (super-spine); dragonfly routers and the ideal crossbar are tier 0.
enum class SwitchRole : std::uint8_t { None, Leaf, Spine, Core, Router, Crossbar };

// Link classes, for summaries and for backends that treat scale-up traffic apart.
enum class LinkKind : std::uint8_t {
  ScaleUp,          // GPU <-> its domain's NVSwitch
  Pcie,             // GPU <-> a NIC local to it
  Access,           // NIC <-> leaf / router / crossbar
  LeafSpine,        // tier 0 <-> tier 1
  SpineCore,        // tier 1 <-> tier 2
  DragonflyLocal,   // router <-> router in one group
  DragonflyGlobal,  // router <-> router in different groups
};
inline constexpr int kLinkKindCount = 7;

const char* to_string(NodeKind k);
const char* to_string(SwitchRole r);
const char* to_string(LinkKind k);  // "nvlink", "pcie", "nic-leaf", "leaf-spine", ...

struct Node {
  NodeKind kind = NodeKind::Gpu;
  SwitchRole role = SwitchRole::None;
  std::int8_t tier = -1;   // switches: 0, 1, 2; others -1
  std::int8_t plane = 0;   // hpn: the aggregation plane a switch belongs to (0 or 1)
  std::int32_t index = 0;  // rank, domain, node*nics_per_node+nic, or index among its role
  std::int32_t pod = -1;   // switches: tree pod or dragonfly group; -1 when it has none
};

struct Link {
  NodeId from = 0, to = 0;
  LinkKind kind = LinkKind::Access;
  bool up = true;
  double capacity_Bps = 0;          // now, after faults: 0 when down, nominal * factor when degraded
  double nominal_capacity_Bps = 0;  // as built
  double latency_ns = 0;            // propagation, plus the forwarding latency of a switch it enters
};

// A parameter a generator derived (from the radix, oversubscription, pod_size), for summaries.
struct DerivedParameter {
  std::string name;
  double value = 0;
};

class NetworkGraphBuilder;

class NetworkGraph {
 public:
  // --- size and raw access (what the flow backend reads) ---
  const std::vector<Node>& nodes() const { return nodes_; }
  const std::vector<Link>& links() const { return links_; }
  const Node& node(NodeId id) const { return nodes_[static_cast<std::size_t>(id)]; }
  const Link& link(LinkId id) const { return links_[static_cast<std::size_t>(id)]; }
  int node_count() const { return static_cast<int>(nodes_.size()); }
  int link_count() const { return static_cast<int>(links_.size()); }
  // Links come in pairs: the reverse direction of link l is l ^ 1.
  static LinkId reverse(LinkId l) { return l ^ 1; }

  // CSR adjacency, in the order links were created (deterministic).
  std::span<const LinkId> out_links(NodeId n) const;
  std::span<const LinkId> in_links(NodeId n) const;
  std::optional<LinkId> link_between(NodeId from, NodeId to) const;

  // --- the cluster ---
  const std::string& topology() const { return topology_; }  // "rail-optimized", ...
  int gpu_count() const { return gpus_; }
  int node_machine_count() const { return machines_; }  // hosts ("node" in names)
  int gpus_per_node() const { return gpus_per_node_; }
  int nics_per_node() const { return nics_per_node_; }
  int nic_count() const { return machines_ * nics_per_node_; }
  int domain_count() const { return domains_; }
  int domain_size() const { return domain_size_; }
  int switch_count() const { return node_count() - switch_base_; }
  int role_count(SwitchRole r) const;
  const std::vector<DerivedParameter>& derived() const { return derived_; }
  double nic_Bps() const { return nic_Bps_; }
  // The node's id in the file the fabric was read from (cluster.network.simai_topology); nullopt for a generated
  // fabric and for nodes the file has no id for (trainsim's NICs: the file's GPUs are their own NICs).
  std::optional<int> source_id(NodeId n) const;

  // --- lookups (throw trainsim::Error for out-of-range arguments) ---
  NodeId gpu(int rank) const;
  NodeId nvswitch(int domain) const;
  NodeId nic(int node, int k) const;
  NodeId switch_node(SwitchRole role, int index) const;
  NodeId first_switch() const { return switch_base_; }
  bool is_switch(NodeId n) const { return n >= switch_base_; }
  // The GPU's link to its scale-up switch (the reverse is the way back).
  LinkId scale_up_link(int rank) const;
  // NICs on the PCIe switch of a GPU (node-local indices), and GPUs local to a NIC (ranks).
  std::vector<int> local_nics(int rank) const;
  std::vector<int> local_gpus(int node, int k) const;

  // --- names ---
  std::string node_name(NodeId n) const;
  std::string link_name(LinkId l) const;  // "from>to"
  std::optional<NodeId> find_node(std::string_view name) const;
  // "a>b": that link; "a-b": both directions. Throws Error naming what is wrong and giving
  // examples of valid names.
  std::vector<LinkId> links_by_name(std::string_view name) const;
  LinkId link_by_name(std::string_view directed_name) const;  // "a>b" only

  // --- faults (faults.cpp): routing avoids down links; capacities change in links() ---
  // Both directions for "a-b", one for "a>b". Returns the links changed.
  std::vector<LinkId> set_link_down(std::string_view name);
  // capacity = nominal * factor, factor in (0, 1]; sets (does not compound) the factor.
  std::vector<LinkId> set_link_degraded(std::string_view name, double factor);
  std::vector<LinkId> set_nic_down(int node, int k);  // every link to or from the NIC
  std::vector<LinkId> set_node_down(int node);        // its NICs, and its GPUs' links
  void set_link_state(LinkId l, bool up, double factor = 1.0);
  void clear_faults();
  // Changes whenever a fault is applied; routers drop their caches when it moves.
  std::uint64_t version() const { return version_; }

 private:
  friend class NetworkGraphBuilder;
  std::vector<Node> nodes_;
  std::vector<Link> links_;
  std::vector<std::int32_t> out_offsets_, out_list_, in_offsets_, in_list_;
  std::vector<LinkId> gpu_scale_up_;
  std::vector<std::int32_t> source_ids_;  // empty unless read from a file; -1 = none
  std::string topology_;
  std::vector<DerivedParameter> derived_;
  int gpus_ = 0, machines_ = 0, gpus_per_node_ = 1, nics_per_node_ = 1, domains_ = 0, domain_size_ = 1;
  NodeId nvswitch_base_ = 0, nic_base_ = 0, switch_base_ = 0;
  // First node id and count of each switch role (indexed by SwitchRole).
  std::vector<NodeId> role_base_ = std::vector<NodeId>(6, 0);
  std::vector<int> role_count_ = std::vector<int>(6, 0);
  double nic_Bps_ = 0;
  std::uint64_t version_ = 0;
};

}  // namespace trainsim
