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
  // One simulation runs on one thread (the event loop is sequential, so that runs are reproducible bit for bit);
  // only the commands that run many simulations use threads, and they take --threads. 0 (the spec's default, "all
  // cores") changes nothing and is accepted; any other value would be accepted and ignored, so it is refused.
  simulation.read("threads", s.threads, Bound::NonNegative);
  if (s.threads != 0)
    simulation.fail("threads", "a simulation runs on one thread (its event loop is sequential so that results are "
                               "reproducible); got " + std::to_string(s.threads) +
                               ": remove the key, or use --threads of trainsim sweep, tune or validate, which run "
                               "several simulations at a time");
  simulation.read("per_rank", s.per_rank);
  simulation.read("max_ops", s.max_ops, Bound::NonNegative);
  simulation.read("max_packets", s.max_packets, Bound::NonNegative);
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
