#pragma once
// The `algorithms:` block (an addition to spec/scenario.md): which algorithm runs each collective. "nccl" = NCCL's
// own choice (the default); the others are trainsim's (collective/algorithm_registry.hpp lists them all). Declared
// by the collective layer, which runs them; the scenario reads them into these types.
#include <cstdint>

#include "core/collective_kind.hpp"

namespace trainsim {

// One entry per algorithm of the registry (algorithm_registry.hpp), which gives each its scenario name.
enum class CollectiveAlgorithm : std::uint8_t { Nccl, HalvingDoubling, Hierarchical, ReductionServer };

struct ReductionServerConfig {
  int servers = 0;         // CPU reducer nodes; 0 = one per worker node
  double nic_gbps = 100;   // per reducer, per direction
  double latency_us = 10;  // fixed cost of one worker -> reducer -> worker round trip
};

struct AlgorithmsSpec {
  CollectiveAlgorithm all_reduce = CollectiveAlgorithm::Nccl;
  CollectiveAlgorithm all_gather = CollectiveAlgorithm::Nccl;
  CollectiveAlgorithm reduce_scatter = CollectiveAlgorithm::Nccl;
  ReductionServerConfig reduction_server;
  // The algorithm chosen for `kind`: NCCL's own for the collectives the block has no key for.
  CollectiveAlgorithm for_kind(CollKind kind) const;
};

// The collectives the block chooses an algorithm for; each one's key is to_string(kind) ("all_reduce", ...).
struct AlgorithmChoiceKey {
  CollKind kind;
  CollectiveAlgorithm AlgorithmsSpec::*field;
};
inline constexpr AlgorithmChoiceKey kAlgorithmChoiceKeys[] = {
    {CollKind::AllReduce, &AlgorithmsSpec::all_reduce},
    {CollKind::AllGather, &AlgorithmsSpec::all_gather},
    {CollKind::ReduceScatter, &AlgorithmsSpec::reduce_scatter},
};

inline CollectiveAlgorithm AlgorithmsSpec::for_kind(CollKind kind) const {
  for (const AlgorithmChoiceKey& key : kAlgorithmChoiceKeys)
    if (key.kind == kind) return this->*key.field;
  return CollectiveAlgorithm::Nccl;
}

}  // namespace trainsim
