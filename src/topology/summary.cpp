#include "topology/summary.hpp"

#include <algorithm>
#include <ostream>
#include <sstream>

#include "topology/clos_fabric.hpp"

namespace trainsim {

namespace {

bool is_tree(NetworkTopology t) {
  return t == NetworkTopology::RailOptimized || t == NetworkTopology::FatTree || t == NetworkTopology::HPN ||
         t == NetworkTopology::SimaiFile;
}

// A fabric read from a file has no generator parameters: its tiers, radix (the most cables on one switch) and the
// down:up capacity ratio of each tier's switches are read off the graph.
void describe_file_fabric(const NetworkGraph& g, NetworkSummary& s) {
  std::vector<int> cables(static_cast<std::size_t>(g.switch_count()), 0);
  double down[2] = {0, 0}, up[2] = {0, 0};
  for (LinkId l = 0; l < g.link_count(); l += 2) {
    const Link& link = g.link(l);
    for (NodeId n : {link.from, link.to})
      if (g.is_switch(n)) ++cables[static_cast<std::size_t>(n - g.first_switch())];
    if (link.kind == LinkKind::Access) down[0] += link.nominal_capacity_Bps;
    if (link.kind == LinkKind::LeafSpine) up[0] += link.nominal_capacity_Bps, down[1] += link.nominal_capacity_Bps;
    if (link.kind == LinkKind::SpineCore) up[1] += link.nominal_capacity_Bps;
  }
  s.switch_radix = cables.empty() ? 0 : *std::max_element(cables.begin(), cables.end());
  s.tiers = 0;
  for (SwitchRole role : {SwitchRole::Leaf, SwitchRole::Spine, SwitchRole::Core})
    s.tiers += g.role_count(role) > 0 ? 1 : 0;
  for (int t = 0; t < 2; ++t)
    if (up[t] > 0) s.oversubscription.push_back(down[t] / up[t]);
}

// Capacity leaving the first half of the groups (dragonfly) or routers (one group) for the second.
double dragonfly_cut(const NetworkGraph& g, std::string& cut) {
  const int routers = g.role_count(SwitchRole::Router);
  int groups = 0;
  for (int r = 0; r < routers; ++r) groups = std::max(groups, g.node(g.switch_node(SwitchRole::Router, r)).pod + 1);
  const bool by_group = groups > 1;
  cut = by_group ? "global" : "local";
  const NodeId first = g.switch_node(SwitchRole::Router, 0);
  auto first_half = [&](NodeId n) { return by_group ? g.node(n).pod < groups / 2 : n - first < routers / 2; };
  double total = 0;
  for (const Link& l : g.links()) {
    const bool kind = by_group ? l.kind == LinkKind::DragonflyGlobal : l.kind == LinkKind::DragonflyLocal;
    if (kind && first_half(l.from) && !first_half(l.to)) total += l.capacity_Bps;
  }
  return total;
}

// "64.0 TB/s", "850.0 GB/s"
std::string bandwidth(double Bps) {
  std::ostringstream out;
  out.setf(std::ios::fixed);
  out.precision(1);
  if (Bps >= 1e12)
    out << Bps / 1e12 << " TB/s";
  else
    out << Bps / 1e9 << " GB/s";
  return out.str();
}

std::string gbytes(double Bps) {
  std::ostringstream out;
  out.precision(4);
  out << Bps / 1e9;
  return out.str();
}

std::string ratio(double r) {
  std::ostringstream out;
  out << r << ":1";
  return out.str();
}

}  // namespace

NetworkSummary summarize(const NetworkGraph& g, const NetworkSpec& network) {
  NetworkSummary s;
  s.topology = g.topology();
  s.tiers = network.tiers;
  s.switch_radix = network.switch_radix;
  s.gpus = g.gpu_count();
  s.nodes = g.node_machine_count();
  s.gpus_per_node = g.gpus_per_node();
  s.nics = g.nic_count();
  s.nics_per_node = g.nics_per_node();
  s.domains = g.domain_count();
  s.domain_size = g.domain_size();
  s.nic_Bps = g.nic_Bps();
  s.derived = g.derived();

  for (SwitchRole role :
       {SwitchRole::Leaf, SwitchRole::Spine, SwitchRole::Core, SwitchRole::Router, SwitchRole::Crossbar}) {
    const int count = g.role_count(role);
    if (count > 0) s.switches.push_back({role, g.node(g.switch_node(role, 0)).tier, count});
  }

  std::vector<LinkClassSummary> classes(kLinkKindCount);
  for (int k = 0; k < kLinkKindCount; ++k) classes[static_cast<std::size_t>(k)].kind = static_cast<LinkKind>(k);
  // Uplink capacity (from the lower tier) per class, for the tree cuts.
  std::vector<double> upward(kLinkKindCount, 0.0);
  for (const Link& l : g.links()) {
    LinkClassSummary& c = classes[static_cast<std::size_t>(l.kind)];
    c.min_capacity_Bps = c.links == 0 ? l.nominal_capacity_Bps : std::min(c.min_capacity_Bps, l.nominal_capacity_Bps);
    c.max_capacity_Bps = std::max(c.max_capacity_Bps, l.nominal_capacity_Bps);
    ++c.links;
    c.down += l.up ? 0 : 1;
    c.degraded += l.up && l.capacity_Bps < l.nominal_capacity_Bps ? 1 : 0;
    c.total_Bps += l.capacity_Bps;
    const bool up = g.node(l.from).kind == NodeKind::Nic ||
                    (g.is_switch(l.from) && g.is_switch(l.to) && g.node(l.from).tier < g.node(l.to).tier);
    if (up && l.kind != LinkKind::Pcie) upward[static_cast<std::size_t>(l.kind)] += l.capacity_Bps;
  }
  for (const auto& c : classes)
    if (c.links > 0) s.links.push_back(c);

  // Bisection: the narrowest cut that traffic between two halves of the cluster must cross.
  s.bisection_Bps = upward[static_cast<std::size_t>(LinkKind::Access)] / 2;
  s.bisection_cut = "nic";
  auto consider = [&](double Bps, const char* cut) {
    if (Bps < s.bisection_Bps) {
      s.bisection_Bps = Bps;
      s.bisection_cut = cut;
    }
  };
  const bool from_file = network.topology == NetworkTopology::SimaiFile;
  if (is_tree(network.topology)) {
    if (g.role_count(SwitchRole::Spine) > 0)
      consider(upward[static_cast<std::size_t>(LinkKind::LeafSpine)] / 2, "leaf-spine");
    int pods = 0;
    for (int i = 0; i < g.role_count(SwitchRole::Spine); ++i)
      pods = std::max(pods, g.node(g.switch_node(SwitchRole::Spine, i)).pod + 1);
    // A file's fabric has no pods: the cores' cut counts whenever it has cores.
    if (g.role_count(SwitchRole::Core) > 0 && (pods > 1 || from_file))
      consider(upward[static_cast<std::size_t>(LinkKind::SpineCore)] / 2, "spine-core");
    if (from_file) {
      describe_file_fabric(g, s);
      s.source_file = network.simai_topology;
    } else if (network.tiers >= 2) {
      s.oversubscription = topology_detail::effective_taper(network);
    }
  } else if (network.topology == NetworkTopology::Dragonfly && g.role_count(SwitchRole::Router) > 1) {
    std::string cut;
    const double Bps = dragonfly_cut(g, cut);
    if (Bps < s.bisection_Bps) {
      s.bisection_Bps = Bps;
      s.bisection_cut = cut;
    }
  }

  if (network.topology == NetworkTopology::Dragonfly) s.unused_keys = {"tiers", "oversubscription"};
  if (network.topology == NetworkTopology::Ideal)
    s.unused_keys = {"tiers", "oversubscription", "pod_size", "switch_radix"};
  return s;
}

void write_summary(std::ostream& out, const NetworkSummary& s) {
  out << "network          " << s.topology;
  if (!s.source_file.empty()) out << " (" << s.source_file << ")";
  if (s.topology != "ideal" && s.topology != "dragonfly") out << ", " << s.tiers << (s.tiers == 1 ? " tier" : " tiers");
  if (s.topology != "ideal") out << ", switch radix " << s.switch_radix;
  out << "\n";
  out << "endpoints        " << s.gpus << " GPUs on " << s.nodes << " nodes (" << s.gpus_per_node << " per node), "
      << s.nics << " NICs (" << s.nics_per_node << " per node) at " << gbytes(s.nic_Bps * 8) << " Gb/s\n";
  out << "scale-up         " << s.domains << " domain" << (s.domains == 1 ? "" : "s") << " of " << s.domain_size
      << " GPUs, one NVSwitch node each";
  if (s.hardware_domain_size > s.domain_size)
    out << " (the job's GPUs of each " << s.hardware_domain_size
        << "-GPU domain: cluster.scale_up.job_gpus_per_domain)";
  out << "\n";
  out << "switches        ";
  int total = 0;
  for (const auto& t : s.switches) {
    out << " tier " << t.tier << ": " << t.count << " " << to_string(t.role) << ";";
    total += t.count;
  }
  out << " total " << total << "\n";
  out << "links            class        directed   down  degraded  GB/s each (per direction)\n";
  for (const auto& c : s.links) {
    std::ostringstream row;
    row << "                 ";
    row.width(12);
    row << std::left << to_string(c.kind) << std::right;
    row.width(9);
    row << c.links;
    row.width(7);
    row << c.down;
    row.width(10);
    row << c.degraded << "  " << gbytes(c.min_capacity_Bps);
    if (c.max_capacity_Bps > c.min_capacity_Bps) row << " .. " << gbytes(c.max_capacity_Bps);
    out << row.str() << "\n";
  }
  out << "bisection        " << bandwidth(s.bisection_Bps) << " one way (narrowest cut: " << s.bisection_cut << ")\n";
  if (!s.oversubscription.empty()) {
    static const char* const kBoundary[] = {"leaf->spine", "spine->core"};
    out << "oversubscription";
    for (std::size_t i = 0; i < s.oversubscription.size() && i < 2; ++i)
      out << (i ? ", " : " ") << kBoundary[i] << " " << ratio(s.oversubscription[i]);
    out << "\n";
  }
  if (!s.derived.empty()) {
    out << "derived         ";
    for (std::size_t i = 0; i < s.derived.size(); ++i)
      out << (i ? ", " : " ") << s.derived[i].name << " " << s.derived[i].value;
    out << "\n";
  }
  if (!s.unused_keys.empty()) {
    out << "not used by " << s.topology << ":";
    for (const auto& k : s.unused_keys) out << " cluster.network." << k;
    out << "\n";
  }
}

}  // namespace trainsim
