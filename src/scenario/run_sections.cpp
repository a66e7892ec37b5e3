// The `simulation:` and `output:` blocks: how finely to simulate and where to write results.
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

SimulationSpec read_simulation(const Section& simulation) {
  SimulationSpec s;
  if (auto m = simulation.choice<NetworkModel>("network_model", {{"analytical", NetworkModel::Analytical},
                                                                 {"flow", NetworkModel::Flow},
                                                                 {"packet", NetworkModel::Packet}}))
    s.network_model = *m;
  if (auto seed = simulation.integer("seed", Bound::NonNegative)) s.seed = static_cast<std::uint64_t>(*seed);
  simulation.read("threads", s.threads, Bound::NonNegative);
  simulation.read("per_rank", s.per_rank);
  simulation.read("max_ops", s.max_ops, Bound::NonNegative);
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
