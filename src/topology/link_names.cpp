// Node and link names: built from a node's kind and index when asked for (nothing is stored), and
// parsed back by arithmetic on the dense id ranges (no name table), so 100,000-GPU graphs stay small.
#include <charconv>

#include "core/error.hpp"
#include "topology/network_graph.hpp"

namespace trainsim {

namespace {

constexpr SwitchRole kNamedRoles[] = {SwitchRole::Leaf, SwitchRole::Spine, SwitchRole::Core, SwitchRole::Router};

// A canonical non-negative decimal ("0", "17"; not "017", "+1" or "").
std::optional<int> parse_index(std::string_view digits) {
  if (digits.empty() || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return std::nullopt;
  int value = 0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size()) return std::nullopt;
  return value;
}

std::optional<int> after_prefix(std::string_view name, std::string_view prefix) {
  if (!name.starts_with(prefix)) return std::nullopt;
  return parse_index(name.substr(prefix.size()));
}

}  // namespace

std::string NetworkGraph::node_name(NodeId id) const {
  const Node& n = node(id);
  switch (n.kind) {
    case NodeKind::Gpu: return "gpu" + std::to_string(n.index);
    case NodeKind::NVSwitch: return "nvswitch" + std::to_string(n.index);
    case NodeKind::Nic:
      return "node" + std::to_string(n.index / nics_per_node_) + ".nic" + std::to_string(n.index % nics_per_node_);
    case NodeKind::Switch:
      if (n.role == SwitchRole::Crossbar) return "xbar";
      return std::string(to_string(n.role)) + std::to_string(n.index);
  }
  return "?";
}

std::string NetworkGraph::link_name(LinkId l) const { return node_name(link(l).from) + ">" + node_name(link(l).to); }

std::optional<NodeId> NetworkGraph::find_node(std::string_view name) const {
  auto in = [](std::optional<int> i, int count) { return i && *i < count; };
  if (name == "xbar") {
    if (role_count(SwitchRole::Crossbar) == 0) return std::nullopt;
    return role_base_[static_cast<std::size_t>(SwitchRole::Crossbar)];
  }
  if (auto i = after_prefix(name, "gpu"); in(i, gpus_)) return gpu(*i);
  if (auto i = after_prefix(name, "nvswitch"); in(i, domains_)) return nvswitch(*i);
  if (name.starts_with("node")) {
    const std::size_t dot = name.find(".nic");
    if (dot == std::string_view::npos) return std::nullopt;
    const auto machine = parse_index(name.substr(4, dot - 4));
    const auto k = parse_index(name.substr(dot + 4));
    if (!in(machine, machines_) || !in(k, nics_per_node_)) return std::nullopt;
    return nic(*machine, *k);
  }
  for (SwitchRole role : kNamedRoles)
    if (auto i = after_prefix(name, to_string(role)); in(i, role_count(role))) return switch_node(role, *i);
  return std::nullopt;
}

namespace {

// "gpu0..gpu15, nvswitch0..nvswitch1, node0.nic0..node1.nic7, leaf0..leaf7"
std::string valid_node_names(const NetworkGraph& g) {
  auto range = [](const std::string& first, const std::string& last) {
    return first == last ? first : first + ".." + last;
  };
  std::string out = range("gpu0", "gpu" + std::to_string(g.gpu_count() - 1)) + ", " +
                    range("nvswitch0", "nvswitch" + std::to_string(g.domain_count() - 1)) + ", " +
                    range("node0.nic0", g.node_name(g.nic(g.node_machine_count() - 1, g.nics_per_node() - 1)));
  for (SwitchRole role :
       {SwitchRole::Leaf, SwitchRole::Spine, SwitchRole::Core, SwitchRole::Router, SwitchRole::Crossbar}) {
    const int count = g.role_count(role);
    if (count > 0)
      out += ", " + range(g.node_name(g.switch_node(role, 0)), g.node_name(g.switch_node(role, count - 1)));
  }
  return out;
}

// Two names the user could write, taken from this graph: a NIC uplink and a switch-to-switch cable.
std::string example_link_names(const NetworkGraph& g) {
  std::string directed, both;
  for (LinkId l = 0; l < g.link_count(); l += 2) {
    const Link& link = g.link(l);
    if (directed.empty() && link.kind == LinkKind::Access)
      directed = g.node_name(link.from) + ">" + g.node_name(link.to);
    if (both.empty() && g.is_switch(link.from) && g.is_switch(link.to))
      both = g.node_name(link.from) + "-" + g.node_name(link.to);
  }
  if (directed.empty()) directed = g.link_name(0);
  if (both.empty()) both = g.node_name(g.link(0).from) + "-" + g.node_name(g.link(0).to);
  return "e.g. '" + directed + "' (that direction) or '" + both + "' (both directions)";
}

}  // namespace

LinkId NetworkGraph::link_by_name(std::string_view name) const {
  const std::size_t arrow = name.find('>');
  if (arrow == std::string_view::npos)
    throw Error("link '" + std::string(name) + "' names no direction; a directed link name is <from>><to>, " +
                example_link_names(*this));
  const std::string_view a = name.substr(0, arrow), b = name.substr(arrow + 1);
  const auto from = find_node(a), to = find_node(b);
  for (const auto& [text, id] : {std::pair{a, from}, std::pair{b, to}})
    if (!id)
      throw Error("unknown link '" + std::string(name) + "': no node named '" + std::string(text) + "'; nodes are " +
                  valid_node_names(*this) + "; " + example_link_names(*this));
  if (auto l = link_between(*from, *to)) return *l;
  std::string peers;
  int shown = 0;
  for (LinkId l : out_links(*from)) {
    if (shown == 4) {
      peers += ", ...";
      break;
    }
    peers += (shown++ ? ", " : "") + node_name(link(l).to);
  }
  throw Error("unknown link '" + std::string(name) + "': " + std::string(a) + " and " + std::string(b) +
              " are not connected; " + std::string(a) + " connects to " + peers);
}

std::vector<LinkId> NetworkGraph::links_by_name(std::string_view name) const {
  if (name.find('>') != std::string_view::npos) return {link_by_name(name)};
  const std::size_t dash = name.find('-');
  if (dash == std::string_view::npos)
    throw Error("unknown link '" + std::string(name) + "': a link name joins two node names with '>' or '-', " +
                example_link_names(*this));
  const LinkId forward = link_by_name(std::string(name.substr(0, dash)) + ">" + std::string(name.substr(dash + 1)));
  return {forward, reverse(forward)};
}

}  // namespace trainsim
