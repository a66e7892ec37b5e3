// The `simulation:` and `output:` blocks: how finely to simulate and where to write results.
#include <algorithm>

#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

// The communicators a packet scope can name: the report's names of the communicator kinds.
const std::vector<std::string>& packet_scope_group_names() {
  static const std::vector<std::string> names = {"tp",    "cp", "dp",  "pp",     "embedding", "tp-pp",
                                                 "world", "ep", "etp", "etp-ep", "edp"};
  return names;
}

void read_packet_scope(const Section& simulation, SimulationSpec& s) {
  if (!simulation.has("packet_scope")) return;
  if (s.network_model != NetworkModel::Packet)
    simulation.fail("packet_scope",
                    "a packet scope says which calls move as packets; it needs "
                    "simulation.network_model: packet");
  s.packet_scope_given = true;
  const Section scope = simulation.child("packet_scope");
  scope.read("min_bytes", s.packet_scope_min_bytes, Bound::NonNegative);
  if (!scope.has("groups")) return;
  const YAML::Node node = scope.get("groups");
  const std::string path = scope.path_of("groups");
  const auto& known = packet_scope_group_names();
  std::string names;
  for (const auto& n : known) names += (names.empty() ? "" : ", ") + n;
  if (!node.IsSequence() || node.size() == 0)
    scope.fail("groups", "expected a non-empty list of communicators (" + names + "), got " + describe_node(node));
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const std::string name = parse_string(node[i], at, scope.file());
    if (std::find(known.begin(), known.end(), name) == known.end())
      throw ScenarioError(scope.file(), at,
                          "unknown communicator '" + name + "'; the report's communicators are " + names);
    s.packet_scope_groups.push_back(name);
  }
}

}  // namespace

SimulationSpec read_simulation(const Section& simulation) {
  SimulationSpec s;
  if (auto m = simulation.choice<NetworkModel>(
          "network_model",
          {{"analytical", NetworkModel::Analytical}, {"flow", NetworkModel::Flow}, {"packet", NetworkModel::Packet}}))
    s.network_model = *m;
  if (auto seed = simulation.integer("seed", Bound::NonNegative)) s.seed = static_cast<std::uint64_t>(*seed);
  // The event loop of one simulation is sequential (results reproducible bit for bit); what it builds beforehand, the
  // NCCL communicators of its groups, runs on this many threads (0, the spec's default: all cores). The commands that
  // run many simulations at a time (sweep, tune, validate) take --threads and give each simulation one.
  simulation.read("threads", s.threads, Bound::NonNegative);
  if (s.threads > 1024)
    simulation.fail("threads", "at most 1024 (more than any machine has cores: a typo, not a request); got " +
                                   std::to_string(s.threads));
  simulation.read("per_rank", s.per_rank);
  simulation.read("max_ops", s.max_ops, Bound::NonNegative);
  simulation.read("max_packets", s.max_packets, Bound::NonNegative);
  read_packet_scope(simulation, s);
  using HostLinks = SimulationSpec::HostLinks;
  if (auto h =
          simulation.choice<HostLinks>("packet_host_links", {{"fifo", HostLinks::Fifo}, {"delay", HostLinks::Delay}})) {
    if (s.network_model != NetworkModel::Packet)
      simulation.fail("packet_host_links",
                      "says how packets cross NVLink and PCIe links; it needs simulation.network_model: packet");
    s.packet_host_links = *h;
  }
  return s;
}

OutputSpec read_output(const Section& output) {
  OutputSpec o;
  output.read("trace", o.trace);
  output.read("csv", o.csv);
  if (o.trace && o.trace->empty()) output.fail("trace", "expected a file path, got an empty string");
  if (o.csv && o.csv->empty()) output.fail("csv", "expected a file path, got an empty string");
  return o;
}

}  // namespace trainsim::scenario_detail
