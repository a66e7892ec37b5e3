// `trainsim topo SCENARIO [--json] [--dot FILE] [--set k=v ...]`: the network the scenario's
// cluster block describes: switches and links per tier, bisection bandwidth, oversubscription and
// the parameters the generator derived (docs/topologies.md). Faults marked `always` are applied;
// every link a fault names is checked, so a misspelt name fails here with its key.
#include <iostream>
#include <memory>

#include <nlohmann/json.hpp>

#include "trainsim/topology.hpp"
#include "cli/commands.hpp"
#include "cli/output_file.hpp"
#include "trainsim/errors.hpp"
#include "trainsim/scenario.hpp"

namespace trainsim::cli {

namespace {

struct TopoArgs {
  std::string scenario;
  std::vector<std::string> overrides;
  bool json = false;
  std::string dot;
};

double GBps(double Bps) { return Bps / 1e9; }

nlohmann::ordered_json summary_json(const NetworkSummary& s, const AppliedFaults& faults) {
  nlohmann::ordered_json j;
  j["topology"] = s.topology;
  if (!s.source_file.empty()) j["simai_topology"] = s.source_file;
  j["tiers"] = s.tiers;
  j["switch_radix"] = s.switch_radix;
  j["gpus"] = s.gpus;
  j["nodes"] = s.nodes;
  j["gpus_per_node"] = s.gpus_per_node;
  j["nics"] = s.nics;
  j["nics_per_node"] = s.nics_per_node;
  j["nic_GBps"] = GBps(s.nic_Bps);
  j["scale_up_domains"] = s.domains;
  j["scale_up_domain_size"] = s.domain_size;
  j["scale_up_hardware_domain_size"] = s.hardware_domain_size > 0 ? s.hardware_domain_size : s.domain_size;
  j["switches"] = nlohmann::ordered_json::array();
  for (const auto& t : s.switches)
    j["switches"].push_back({{"role", to_string(t.role)}, {"tier", t.tier}, {"count", t.count}});
  j["link_classes"] = nlohmann::ordered_json::array();
  for (const auto& c : s.links)
    j["link_classes"].push_back({{"class", to_string(c.kind)},
                                 {"directed_links", c.links},
                                 {"down", c.down},
                                 {"degraded", c.degraded},
                                 {"min_capacity_GBps", GBps(c.min_capacity_Bps)},
                                 {"max_capacity_GBps", GBps(c.max_capacity_Bps)},
                                 {"total_GBps", GBps(c.total_Bps)}});
  j["bisection_GBps"] = GBps(s.bisection_Bps);
  j["bisection_cut"] = s.bisection_cut;
  j["oversubscription"] = s.oversubscription;
  j["derived"] = nlohmann::ordered_json::object();
  for (const auto& d : s.derived) j["derived"][d.name] = d.value;
  j["unused_keys"] = s.unused_keys;
  j["faults_applied"] = faults.applied;
  j["faults_later"] = faults.later;
  return j;
}

// Nodes and links one JSON object per line (greppable; 16,384 GPUs make 130K links), after the
// summary.
void write_json(std::ostream& out, const NetworkGraph& g, const nlohmann::ordered_json& summary) {
  out << "{\"summary\": " << summary.dump() << ",\n\"nodes\": [\n";
  for (NodeId n = 0; n < g.node_count(); ++n) {
    const Node& node = g.node(n);
    nlohmann::ordered_json row = {{"id", n}, {"name", g.node_name(n)}, {"kind", to_string(node.kind)}};
    if (node.kind == NodeKind::Switch) {
      row["role"] = to_string(node.role);
      row["tier"] = node.tier;
      row["pod"] = node.pod;
      row["plane"] = node.plane;
    }
    if (const auto id = g.source_id(n)) row["simai_id"] = *id;  // the node's id in the SimAI topology file
    out << row.dump() << (n + 1 < g.node_count() ? ",\n" : "\n");
  }
  out << "],\n\"links\": [\n";
  for (LinkId l = 0; l < g.link_count(); ++l) {
    const Link& link = g.link(l);
    const nlohmann::ordered_json row = {{"id", l},
                                        {"name", g.link_name(l)},
                                        {"from", g.node_name(link.from)},
                                        {"to", g.node_name(link.to)},
                                        {"class", to_string(link.kind)},
                                        {"capacity_GBps", GBps(link.capacity_Bps)},
                                        {"latency_ns", link.latency_ns},
                                        {"up", link.up}};
    out << row.dump() << (l + 1 < g.link_count() ? ",\n" : "\n");
  }
  out << "]}\n";
}

}  // namespace

Command add_topo_command(CLI::App& app) {
  auto a = std::make_shared<TopoArgs>();
  auto* cmd = app.add_subcommand("topo", "describe the network the scenario's cluster block builds");
  cmd->add_option("scenario", a->scenario, "scenario YAML file (its cluster and faults blocks are used)")->required();
  cmd->add_option("--set", a->overrides, "override a key: --set cluster.network.tiers=3 (repeatable)");
  cmd->add_flag("--json", a->json, "print the summary, every node and every link as JSON");
  cmd->add_option("--dot", a->dot, "write the graph in Graphviz DOT to this file");
  return {cmd, [a]() {
            const Scenario s = load_scenario(a->scenario, a->overrides, ScenarioNeeds::ClusterOnly);
            NetworkGraph g = [&] {
              try {
                return build_network(s.cluster);
              } catch (const ScenarioError& e) {
                if (!e.file().empty()) throw;
                throw ScenarioError(s.file, e.key(), e.detail());
              }
            }();
            const AppliedFaults faults = apply_always_faults(g, s);
            if (!a->dot.empty()) write_output_file("--dot", a->dot, [&](std::ostream& f) { write_dot(f, g); });
            NetworkSummary summary = summarize(g, s.cluster.network);
            if (s.cluster.scale_up.hardware_domain_size > s.cluster.scale_up.domain_size)
              summary.hardware_domain_size = s.cluster.scale_up.hardware_domain_size;
            if (a->json) {
              write_json(std::cout, g, summary_json(summary, faults));
              return 0;
            }
            write_summary(std::cout, summary);
            if (faults.applied + faults.later > 0)
              std::cout << "faults           " << faults.applied << " applied (always), " << faults.later
                        << " at later times (names checked, not applied)\n";
            return 0;
          }};
}

}  // namespace trainsim::cli
