// `trainsim export SCENARIO --format simai-topo -o FILE`: the scenario's fabric as a SimAI topology file
// (topology/simai_export.hpp, docs/topologies.md).
#include "api/fabric_check.hpp"
#include "core/text_file.hpp"
#include "topology/generate.hpp"
#include "topology/simai_export.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {

void export_simai_topology(const Scenario& s, const std::string& path) {
  check_fabric_buildable(s.file, s.cluster);
  const NetworkGraph g = build_network(s.cluster);  // as built: faults are the reading scenario's to apply
  SimaiTopology t;
  try {
    t = simai_topology_of(g, s.cluster, path);
  } catch (const ScenarioError& e) { throw ScenarioError(s.file, e.key(), e.detail()); }
  write_text_file(path, format_simai_topology(t));
}

}  // namespace trainsim
