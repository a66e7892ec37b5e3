#include "topology/simai_fabric.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hardware/gpu_catalog.hpp"

namespace trainsim {

namespace {

enum class Kind { Gpu, NVSwitch, Switch };

std::string gbps(std::int64_t bps) { return fmt::format("{:g} Gb/s", static_cast<double>(bps) / 1e9); }

// Per GPU, what its links add up to.
struct GpuLinks {
  int nvlinks = 0, ports = 0;
  std::int64_t nvlink_bps = 0, nic_bps = 0;
  int nvlink_line = 0, nic_line = 0;  // its first link of each kind
};

int find_root(std::vector<int>& parent, int x) {
  while (parent[static_cast<std::size_t>(x)] != x) {
    parent[static_cast<std::size_t>(x)] = parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
    x = parent[static_cast<std::size_t>(x)];
  }
  return x;
}

// Every GPU's NVSwitches are its server's, and all GPUs have the same NVLink bandwidth.
void check_nvlinks(const SimaiFabric& f, const std::vector<GpuLinks>& per_gpu) {
  const FileLine header{f.file.path, 1};
  for (int g = 0; g < f.gpus; ++g) {
    const GpuLinks& l = per_gpu[static_cast<std::size_t>(g)];
    const int s = g / f.file.gpus_per_server, first = f.gpus + s * f.nvswitches_per_server;
    if (l.nvlinks != f.nvswitches_per_server)
      header.fail(
          fmt::format("gpu {} links to {} of the {} NVSwitches of its server {} (nodes {}..{}); SimAI's "
                      "generators link every GPU to each of them",
                      g, l.nvlinks, f.nvswitches_per_server, s, first, first + f.nvswitches_per_server - 1));
    if (l.nvlink_bps != per_gpu[0].nvlink_bps)
      FileLine{f.file.path, l.nvlink_line}.fail(
          fmt::format("gpu {}'s NVLink links add up to {}, gpu 0's to {} (line {}): trainsim gives every GPU one "
                      "scale-up bandwidth",
                      g, gbps(l.nvlink_bps), gbps(per_gpu[0].nvlink_bps), per_gpu[0].nvlink_line));
  }
}

// All GPUs have NIC ports at the same total rate, or (one server) none has any.
void check_nics(const SimaiFabric& f, const std::vector<GpuLinks>& per_gpu) {
  const FileLine header{f.file.path, 1};
  const auto with = std::find_if(per_gpu.begin(), per_gpu.end(), [](const GpuLinks& l) { return l.ports > 0; });
  if (with == per_gpu.end()) {
    if (f.servers > 1)
      header.fail(fmt::format("no GPU links to a switch, so the {} servers cannot reach each other", f.servers));
    return;
  }
  const auto first = static_cast<int>(with - per_gpu.begin());
  for (int g = 0; g < f.gpus; ++g) {
    const GpuLinks& l = per_gpu[static_cast<std::size_t>(g)];
    if (l.ports == 0)
      header.fail(
          fmt::format("gpu {} has no link to a switch (its NIC), gpu {} has (line {}): it could not reach "
                      "the other servers",
                      g, first, with->nic_line));
    if (l.nic_bps != with->nic_bps)
      FileLine{f.file.path, l.nic_line}.fail(
          fmt::format("gpu {}'s links to switches add up to {}, gpu {}'s to {} (line {}): trainsim gives every NIC "
                      "one rate",
                      g, gbps(l.nic_bps), first, gbps(with->nic_bps), with->nic_line));
  }
}

// Tiers by breadth-first search from the switches that touch GPUs; every switch-to-switch link must then join
// adjacent tiers.
void assign_tiers(SimaiFabric& f, const std::vector<std::vector<std::pair<int, int>>>& adjacency,
                  const std::vector<char>& touches_gpu) {
  const SimaiTopology& t = f.file;
  const int switches = static_cast<int>(adjacency.size()), base = f.first_switch_id();
  const FileLine ids{t.path, 2};
  f.switch_tier.assign(static_cast<std::size_t>(switches), -1);
  std::vector<int> queue;
  for (int s = 0; s < switches; ++s)
    if (touches_gpu[static_cast<std::size_t>(s)]) {
      f.switch_tier[static_cast<std::size_t>(s)] = 0;
      queue.push_back(s);
    }
  for (std::size_t head = 0; head < queue.size(); ++head) {
    const int s = queue[head];
    for (const auto& [peer, link] : adjacency[static_cast<std::size_t>(s)]) {
      int& tier = f.switch_tier[static_cast<std::size_t>(peer)];
      if (tier >= 0) continue;
      tier = f.switch_tier[static_cast<std::size_t>(s)] + 1;
      queue.push_back(peer);
    }
  }
  for (int s = 0; s < switches; ++s) {
    const int tier = f.switch_tier[static_cast<std::size_t>(s)];
    if (tier < 0) ids.fail(fmt::format("switch {} is linked to no GPU's network (no path from it to a GPU)", base + s));
    if (tier > 2)
      ids.fail(
          fmt::format("switch {} is {} switch hops above the GPUs' switches; trainsim reads up to three tiers "
                      "(leaf, spine, core)",
                      base + s, tier));
    for (const auto& [peer, link] : adjacency[static_cast<std::size_t>(s)])
      if (f.switch_tier[static_cast<std::size_t>(peer)] == tier)
        FileLine{t.path, t.links[static_cast<std::size_t>(link)].file_line}.fail(
            fmt::format("links switches {} and {} of the same tier ({} hops from the GPUs): trainsim reads tree "
                        "fabrics, where a switch link joins adjacent tiers",
                        base + s, base + peer, tier));
  }
}

// Every GPU reaches every other through switches (GPUs never relay): some switch of one and some switch of the other
// are connected. HPN's two planes never meet, yet every GPU has a port in each: GPUs are compared by the set of
// connected switch groups their ports reach, each distinct set once.
void check_reachable(const SimaiFabric& f, const std::vector<std::vector<std::pair<int, int>>>& adjacency,
                     const std::vector<std::vector<int>>& gpu_switches, const std::vector<GpuLinks>& per_gpu) {
  if (f.servers == 1) return;  // NVLink joins them all
  const int switches = static_cast<int>(adjacency.size()), base = f.first_switch_id();
  std::vector<int> parent(static_cast<std::size_t>(switches));
  std::iota(parent.begin(), parent.end(), 0);
  for (int s = 0; s < switches; ++s)
    for (const auto& [peer, link] : adjacency[static_cast<std::size_t>(s)])
      parent[static_cast<std::size_t>(find_root(parent, s))] = find_root(parent, peer);
  std::map<std::vector<int>, int> first_gpu_of;  // a set of groups -> the first GPU whose ports reach it
  for (int g = 0; g < f.gpus; ++g) {
    std::vector<int> groups;
    for (int s : gpu_switches[static_cast<std::size_t>(g)]) groups.push_back(find_root(parent, s));
    std::sort(groups.begin(), groups.end());
    groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
    first_gpu_of.emplace(std::move(groups), g);
  }
  for (auto a = first_gpu_of.begin(); a != first_gpu_of.end(); ++a)
    for (auto b = std::next(a); b != first_gpu_of.end(); ++b) {
      std::vector<int> common;
      std::set_intersection(a->first.begin(), a->first.end(), b->first.begin(), b->first.end(),
                            std::back_inserter(common));
      if (!common.empty()) continue;
      const int x = std::min(a->second, b->second), y = std::max(a->second, b->second);
      FileLine{f.file.path, per_gpu[static_cast<std::size_t>(y)].nic_line}.fail(fmt::format(
          "gpu {} cannot reach gpu {}: no switch of gpu {} (switch {}) is connected to one of gpu {} (switch {})", y, x,
          y, base + gpu_switches[static_cast<std::size_t>(y)].front(), x,
          base + gpu_switches[static_cast<std::size_t>(x)].front()));
    }
}

bool same_gpu_type(const std::string& file_type, const std::string& scenario_gpu) {
  auto lower = [](std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
  };
  const GpuSpec* named = GpuCatalog::builtin().find(file_type);
  if (named && named->name == scenario_gpu) return true;
  const std::string a = lower(file_type), b = lower(scenario_gpu);
  return a == b || b.starts_with(a + "-");  // A100 is A100-SXM-40GB; H20 is not H200
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(std::abs(a), std::abs(b)); }

}  // namespace

SimaiFabric interpret_simai_topology(SimaiTopology file) {
  SimaiFabric f;
  f.file = std::move(file);
  const SimaiTopology& t = f.file;
  const FileLine header{t.path, 1};
  const int gpus = t.gpu_count(), per_server = t.gpus_per_server;
  const int nvswitches = static_cast<int>(t.nvswitch_ids.size());
  if (gpus % per_server != 0)
    header.fail(fmt::format("{} GPUs (nodes - NVSwitches - switches) are not whole servers of {}", gpus, per_server));
  f.gpus = gpus;
  f.servers = gpus / per_server;
  if (nvswitches == 0 || nvswitches % f.servers != 0)
    header.fail(
        fmt::format("{} NVSwitches for {} servers: SimAI gives every server the same number (at least one; "
                    "gen_Topo_Template.py's nv_switch_per_server)",
                    nvswitches, f.servers));
  f.nvswitches_per_server = nvswitches / f.servers;

  const int base = f.first_switch_id(), switches = static_cast<int>(t.switch_ids.size());
  auto kind = [&](int id) { return id < gpus ? Kind::Gpu : id < base ? Kind::NVSwitch : Kind::Switch; };
  std::vector<GpuLinks> per_gpu(static_cast<std::size_t>(gpus));
  std::vector<std::vector<std::pair<int, int>>> adjacency(static_cast<std::size_t>(switches));
  std::vector<char> touches_gpu(static_cast<std::size_t>(switches), 0);
  std::vector<std::vector<int>> gpu_switches(static_cast<std::size_t>(gpus));  // the switches each GPU's ports reach
  for (std::size_t i = 0; i < t.links.size(); ++i) {
    const SimaiLink& l = t.links[i];
    const FileLine w{t.path, l.file_line};
    if (l.error_rate != 0)
      w.fail(fmt::format("error rate {}: trainsim models no random packet loss (ns-3's RateErrorModel); give 0",
                         l.error_rate));
    int a = l.src, b = l.dst;
    if (kind(a) > kind(b)) std::swap(a, b);  // GPU before NVSwitch before switch
    if (kind(a) == Kind::Gpu && kind(b) == Kind::Gpu)
      w.fail(fmt::format("links GPUs {} and {} directly; SimAI joins GPUs through NVSwitches and switches", a, b));
    if (kind(a) == Kind::NVSwitch)
      w.fail(fmt::format("links NVSwitch {} to {} {}; an NVSwitch joins only the GPUs of its server", a,
                         kind(b) == Kind::NVSwitch ? "NVSwitch" : "switch", b));
    if (kind(a) == Kind::Switch) {
      adjacency[static_cast<std::size_t>(a - base)].emplace_back(b - base, static_cast<int>(i));
      adjacency[static_cast<std::size_t>(b - base)].emplace_back(a - base, static_cast<int>(i));
      continue;
    }
    GpuLinks& g = per_gpu[static_cast<std::size_t>(a)];
    if (kind(b) == Kind::NVSwitch) {
      const int server = a / per_server, first = gpus + server * f.nvswitches_per_server;
      if (b < first || b >= first + f.nvswitches_per_server)
        w.fail(fmt::format(
            "gpu {} (server {}) links to NVSwitch {}, which is server {}'s: SimAI takes nodes {}..{} "
            "as server {}'s NVSwitches",
            a, server, b, (b - gpus) / f.nvswitches_per_server, first, first + f.nvswitches_per_server - 1, server));
      ++g.nvlinks;
      g.nvlink_bps += l.rate_bps;
      if (g.nvlink_line == 0) g.nvlink_line = l.file_line;
    } else {
      ++g.ports;
      g.nic_bps += l.rate_bps;
      if (g.nic_line == 0) g.nic_line = l.file_line;
      touches_gpu[static_cast<std::size_t>(b - base)] = 1;
      gpu_switches[static_cast<std::size_t>(a)].push_back(b - base);
    }
  }
  check_nvlinks(f, per_gpu);
  check_nics(f, per_gpu);
  f.nvlink_bps = per_gpu[0].nvlink_bps;
  f.nvlink_line = per_gpu[0].nvlink_line;
  for (const GpuLinks& g : per_gpu)
    if (g.ports > 0) {
      f.nic_bps = g.nic_bps;
      f.nic_line = g.nic_line;
      break;
    }
  assign_tiers(f, adjacency, touches_gpu);
  check_reachable(f, adjacency, gpu_switches, per_gpu);
  return f;
}

SimaiFabric read_simai_fabric(const std::string& path) {
  return interpret_simai_topology(read_simai_topology_file(path));
}

void check_cluster_matches(const SimaiFabric& f, const ClusterSpec& c) {
  const SimaiTopology& t = f.file;
  auto fail = [&](const char* key, int line, const std::string& what) {
    throw ScenarioError("", std::string("cluster.") + key, fmt::format("{}:{}: {}", t.path, line, what));
  };
  const int per_server = t.gpus_per_server;
  if (c.num_gpus != f.gpus)
    fail("num_gpus", 1,
         fmt::format("the SimAI topology has {} GPUs ({} nodes - {} NVSwitches - {} switches); cluster.num_gpus is {}",
                     f.gpus, t.node_count, t.nvswitch_ids.size(), t.switch_ids.size(), c.num_gpus));
  if (c.gpus_per_node != per_server)
    fail("gpus_per_node", 1,
         fmt::format("the SimAI topology has {} GPUs per server; cluster.gpus_per_node is {}", per_server,
                     c.gpus_per_node));
  if (c.nics_per_node != per_server)
    fail("nics_per_node", 1,
         fmt::format("in a SimAI topology every GPU is its own NIC (its links to switches are the NIC's ports): {} "
                     "per server; cluster.nics_per_node is {}",
                     per_server, c.nics_per_node));
  if (c.scale_up.domain_size != per_server || c.scale_up.hardware_domain_size != per_server)
    fail("scale_up.domain_size", 1,
         fmt::format("in a SimAI topology the GPUs of a server share its NVSwitches: scale-up domains of {} GPUs; "
                     "cluster.scale_up.domain_size is {}",
                     per_server, c.scale_up.hardware_domain_size));
  if (!close(c.scale_up.bandwidth_GBps * 8e9, static_cast<double>(f.nvlink_bps)))
    fail("scale_up.bandwidth_GBps", f.nvlink_line,
         fmt::format("gpu 0's NVLink links add up to {} = {:g} GB/s per direction; cluster.scale_up.bandwidth_GBps "
                     "is {:g}",
                     gbps(f.nvlink_bps), static_cast<double>(f.nvlink_bps) / 8e9, c.scale_up.bandwidth_GBps));
  if (f.nic_bps > 0 && !close(c.nic_gbps * 1e9, static_cast<double>(f.nic_bps)))
    fail("nic_gbps", f.nic_line,
         fmt::format("gpu 0's links to switches (its NIC's ports) add up to {}; cluster.nic_gbps is {:g}",
                     gbps(f.nic_bps), c.nic_gbps));
  // Comparable only when both name catalog GPUs: SimAI knows A100, A800, H100, H800 and writes whatever it is given.
  if (GpuCatalog::builtin().find(t.gpu_type) && GpuCatalog::builtin().find(c.gpu.name) &&
      !same_gpu_type(t.gpu_type, c.gpu.name))
    fail("gpu", 1, fmt::format("the SimAI topology's GPU type is {}; cluster.gpu is {}", t.gpu_type, c.gpu.name));
}

}  // namespace trainsim
