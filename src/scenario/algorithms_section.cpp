// The `algorithms:` block: which algorithm runs all_reduce / all_gather / reduce_scatter (NCCL's own
// choice by default, or one trainsim adds for what-if studies), and the reduction-server settings.
#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

AlgorithmChoice read_choice(const Section& algorithms, const std::string& key, bool allow_reduction_server) {
  const auto choice = algorithms.choice<AlgorithmChoice>(
      key, {{"nccl", AlgorithmChoice::Nccl},
            {"halving_doubling", AlgorithmChoice::HalvingDoubling},
            {"hierarchical", AlgorithmChoice::Hierarchical},
            {"reduction_server", AlgorithmChoice::ReductionServer}});
  if (!choice) return AlgorithmChoice::Nccl;
  // Reducers sum what workers send; they have nothing to offer a gather or a scatter.
  if (*choice == AlgorithmChoice::ReductionServer && !allow_reduction_server)
    algorithms.fail(key, "reduction_server only runs all_reduce; valid here: nccl, halving_doubling, hierarchical");
  return *choice;
}

}  // namespace

AlgorithmsSpec read_algorithms(const Section& algorithms) {
  AlgorithmsSpec spec;
  if (!algorithms.present()) return spec;
  spec.all_reduce = read_choice(algorithms, "all_reduce", true);
  spec.all_gather = read_choice(algorithms, "all_gather", false);
  spec.reduce_scatter = read_choice(algorithms, "reduce_scatter", false);
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
