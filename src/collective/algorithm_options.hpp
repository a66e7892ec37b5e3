#pragma once
// The `algorithms:` block (an addition to spec/scenario.md): which algorithm runs each collective. "nccl" = NCCL's
// own choice (the default); the others are trainsim's (collective/algorithms/custom_algorithms.hpp). Declared by
// the collective layer, which runs them; the scenario reads them into these types.
namespace trainsim {

enum class AlgorithmChoice { Nccl, HalvingDoubling, Hierarchical, ReductionServer };
struct ReductionServerConfig {
  int servers = 0;          // CPU reducer nodes; 0 = one per worker node
  double nic_gbps = 100;    // per reducer, per direction
  double latency_us = 10;   // fixed cost of one worker -> reducer -> worker round trip
};
struct AlgorithmsSpec {
  AlgorithmChoice all_reduce = AlgorithmChoice::Nccl;
  AlgorithmChoice all_gather = AlgorithmChoice::Nccl;
  AlgorithmChoice reduce_scatter = AlgorithmChoice::Nccl;
  ReductionServerConfig reduction_server;
};

}  // namespace trainsim
