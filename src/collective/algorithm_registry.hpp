#pragma once
// The registry of collective algorithms: one entry per algorithm a scenario can name in its `algorithms:` block
// (its name as the scenario writes it, a one-line description, the collectives and group shapes it supports,
// its analytical estimate and its flow DAG). The scenario reader, the algorithm selector (make_collective_model)
// and `trainsim presets` all read this one table (collective/algorithms/custom_algorithms.cpp), so adding an
// algorithm is one entry there plus its enumerator in algorithm_options.hpp.
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "collective/algorithm_options.hpp"
#include "core/collective_kind.hpp"

namespace trainsim {

struct CollectiveEstimate;  // collective_model.hpp
struct FlowDag;             // flows/flow_dag.hpp
struct NcclCommunicator;    // nccl/nccl_communicator.hpp
struct CustomAlgoContext;   // algorithms/custom_algorithms.hpp
using ReductionServerSpec = ReductionServerConfig;

struct CollectiveAlgorithmInfo {
  CollectiveAlgorithm id;
  const char* name;         // as the scenario writes it: "halving_doubling"
  const char* description;  // one line, for `trainsim presets`
  const char* collectives;  // what it implements, in words, for `trainsim presets` and errors
  bool (*supports)(CollKind);
  // Why it cannot run on a group of `nranks` ranks over `nnodes` nodes with `ppn` ranks per node (0 when
  // unknown); empty when it can. Null: any group.
  std::string (*group_problem)(CollKind, int nranks, int nnodes, int ppn);
  // Analytical time (`bytes` in NCCL's nBytes convention) and the flow DAG over the communicator's ranks; NCCL's
  // own choice has no flows here (the NCCL flow generator, flows/nccl_flows.hpp, gives those).
  CollectiveEstimate (*estimate)(CollKind, std::int64_t bytes, const CustomAlgoContext&);
  FlowDag (*flows)(CollKind, std::int64_t bytes, const NcclCommunicator&, const ReductionServerSpec&);
};

// Every algorithm, NCCL's own choice first.
std::span<const CollectiveAlgorithmInfo> collective_algorithms();
const CollectiveAlgorithmInfo& collective_algorithm(CollectiveAlgorithm a);
const char* to_string(CollectiveAlgorithm a);
// Case-insensitive, '-' accepted for '_' ("Halving-Doubling" reads as "halving_doubling"); nullopt when no
// algorithm has that name.
std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& name);

}  // namespace trainsim
