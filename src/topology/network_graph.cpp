#include "topology/network_graph.hpp"

#include "core/error.hpp"

namespace trainsim {

const char* to_string(NodeKind k) {
  switch (k) {
    case NodeKind::Gpu: return "gpu";
    case NodeKind::NVSwitch: return "nvswitch";
    case NodeKind::Nic: return "nic";
    case NodeKind::Switch: return "switch";
  }
  return "?";
}

const char* to_string(SwitchRole r) {
  switch (r) {
    case SwitchRole::None: return "none";
    case SwitchRole::Leaf: return "leaf";
    case SwitchRole::Spine: return "spine";
    case SwitchRole::Core: return "core";
    case SwitchRole::Router: return "router";
    case SwitchRole::Crossbar: return "xbar";
  }
  return "?";
}

const char* to_string(LinkKind k) {
  switch (k) {
    case LinkKind::ScaleUp: return "nvlink";
    case LinkKind::Pcie: return "pcie";
    case LinkKind::Access: return "nic-switch";
    case LinkKind::LeafSpine: return "leaf-spine";
    case LinkKind::SpineCore: return "spine-core";
    case LinkKind::DragonflyLocal: return "local";
    case LinkKind::DragonflyGlobal: return "global";
  }
  return "?";
}

std::span<const LinkId> NetworkGraph::out_links(NodeId n) const {
  const auto i = static_cast<std::size_t>(n);
  return {out_list_.data() + out_offsets_[i], static_cast<std::size_t>(out_offsets_[i + 1] - out_offsets_[i])};
}

std::span<const LinkId> NetworkGraph::in_links(NodeId n) const {
  const auto i = static_cast<std::size_t>(n);
  return {in_list_.data() + in_offsets_[i], static_cast<std::size_t>(in_offsets_[i + 1] - in_offsets_[i])};
}

std::optional<LinkId> NetworkGraph::link_between(NodeId from, NodeId to) const {
  for (LinkId l : out_links(from))
    if (link(l).to == to) return l;
  return std::nullopt;
}

std::optional<int> NetworkGraph::source_id(NodeId n) const {
  if (static_cast<std::size_t>(n) >= source_ids_.size() || source_ids_[static_cast<std::size_t>(n)] < 0)
    return std::nullopt;
  return source_ids_[static_cast<std::size_t>(n)];
}

int NetworkGraph::role_count(SwitchRole r) const { return role_count_[static_cast<std::size_t>(r)]; }

namespace {
[[noreturn]] void out_of_range(const char* what, int value, int count) {
  throw Error(std::string(what) + " " + std::to_string(value) + " does not exist; there are " + std::to_string(count) +
              " (0.." + std::to_string(count - 1) + ")");
}
}  // namespace

NodeId NetworkGraph::gpu(int rank) const {
  if (rank < 0 || rank >= gpus_) out_of_range("rank", rank, gpus_);
  return rank;
}

NodeId NetworkGraph::nvswitch(int domain) const {
  if (domain < 0 || domain >= domains_) out_of_range("scale-up domain", domain, domains_);
  return nvswitch_base_ + domain;
}

NodeId NetworkGraph::nic(int node, int k) const {
  if (node < 0 || node >= machines_) out_of_range("node", node, machines_);
  if (k < 0 || k >= nics_per_node_) out_of_range("nic", k, nics_per_node_);
  return nic_base_ + node * nics_per_node_ + k;
}

NodeId NetworkGraph::switch_node(SwitchRole role, int index) const {
  const int count = role_count(role);
  if (index < 0 || index >= count) out_of_range(to_string(role), index, count);
  return role_base_[static_cast<std::size_t>(role)] + index;
}

LinkId NetworkGraph::scale_up_link(int rank) const { return gpu_scale_up_[static_cast<std::size_t>(gpu(rank))]; }

std::vector<int> NetworkGraph::local_nics(int rank) const {
  const int i = gpu(rank) % gpus_per_node_;
  std::vector<int> out;
  if (nics_per_node_ <= gpus_per_node_) {
    out.push_back(i * nics_per_node_ / gpus_per_node_);
  } else {
    for (int k = 0; k < nics_per_node_; ++k)
      if (k * gpus_per_node_ / nics_per_node_ == i) out.push_back(k);
  }
  return out;
}

std::vector<int> NetworkGraph::local_gpus(int node, int k) const {
  (void)nic(node, k);  // range check
  std::vector<int> out;
  for (int i = 0; i < gpus_per_node_; ++i) {
    const bool local = nics_per_node_ <= gpus_per_node_ ? i * nics_per_node_ / gpus_per_node_ == k
                                                        : k * gpus_per_node_ / nics_per_node_ == i;
    if (local) out.push_back(node * gpus_per_node_ + i);
  }
  return out;
}

}  // namespace trainsim
