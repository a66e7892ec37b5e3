// The `algorithms:` block: which algorithm runs all_reduce / all_gather / reduce_scatter (NCCL's own
// choice by default, or one trainsim adds for what-if studies), and the reduction-server settings.
#include "collective/algorithm_registry.hpp"
#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

// The algorithms of the registry (collective/algorithm_registry.hpp) by name; one that does not implement the
// key's collective is refused, naming those that do (a reduction server sums what workers send: it has nothing to
// offer a gather or a scatter).
CollectiveAlgorithm read_choice(const Section& algorithms, CollKind kind) {
  const std::string key = to_string(kind);
  const auto choice = algorithms.choice(key, collective_algorithms());
  if (!choice) return CollectiveAlgorithm::Nccl;
  const CollectiveAlgorithmInfo& chosen = collective_algorithm(*choice);
  if (!chosen.supports(kind)) {
    std::string runs, valid;
    for (const AlgorithmChoiceKey& k : kAlgorithmChoiceKeys)
      if (chosen.supports(k.kind)) runs += (runs.empty() ? "" : ", ") + std::string(to_string(k.kind));
    for (const CollectiveAlgorithmInfo& a : collective_algorithms())
      if (a.supports(kind)) valid += (valid.empty() ? "" : ", ") + std::string(a.name);
    algorithms.fail(key, std::string(chosen.name) + " only runs " + runs + "; valid here: " + valid);
  }
  return *choice;
}

}  // namespace

AlgorithmsSpec read_algorithms(const Section& algorithms) {
  AlgorithmsSpec spec;
  if (!algorithms.present()) return spec;
  for (const AlgorithmChoiceKey& k : kAlgorithmChoiceKeys) spec.*k.field = read_choice(algorithms, k.kind);
  const Section rs = algorithms.child("reduction_server");
  rs.read("servers", spec.reduction_server.servers, Bound::NonNegative);
  rs.read("nic_gbps", spec.reduction_server.nic_gbps, Bound::Positive);
  require_at_least(rs, "nic_gbps", spec.reduction_server.nic_gbps, kMinNicGbps, "Gb/s",
                   "1 Gb/s Ethernet is the slowest server port");
  rs.read("latency_us", spec.reduction_server.latency_us, Bound::NonNegative);
  require_time_in_range(rs, "latency_us", spec.reduction_server.latency_us, 1e-6);
  return spec;
}

}  // namespace trainsim::scenario_detail
