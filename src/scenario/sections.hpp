#pragma once
// Readers for the scenario's blocks other than `model:` (model_section.hpp). Each reads one block's
// keys with their types and ranges, applies the block's defaults and leaves checks that need other
// blocks to validation.hpp.
#include <optional>
#include <vector>

#include "scenario/scenario.hpp"
#include "scenario/yaml_reader.hpp"

namespace trainsim::scenario_detail {

TrainingSpec read_training(const Section& training);     // training_section.cpp
ParallelSpec read_parallelism(const Section& parallel);  // parallelism_section.cpp
ClusterSpec read_cluster(const Section& cluster);        // cluster_section.cpp (GPU: gpu_section.cpp)
GpuSpec read_gpu(const Section& cluster);                // gpu_section.cpp
// A GPU of the catalog by name or alias; an unknown name fails on `key` with the known names and a
// near match, then `alternative` (e.g. "; or describe it with cluster.gpu_spec").
const GpuSpec& catalog_gpu(const Section& section, const std::string& key, const std::string& name,
                           const std::string& alternative);                             // gpu_section.cpp
NcclSpec read_nccl(const Section& nccl);                                                // nccl_section.cpp
AlgorithmsSpec read_algorithms(const Section& algorithms);                              // algorithms_section.cpp
SimulationSpec read_simulation(const Section& simulation);                              // run_sections.cpp
OutputSpec read_output(const Section& output);                                          // run_sections.cpp
ComputeSpec read_compute(const Section& compute);                                       // compute_section.cpp
std::vector<FaultSpec> read_faults(const YAML::Node& faults, const std::string& file);  // faults_section.cpp
std::optional<ReferenceSpec> read_reference(const Section& reference);                  // reference_section.cpp
std::optional<CollectiveSpec> read_collective(const Section& collective);               // collective_section.cpp
ResilienceSpec read_resilience(const Section& resilience);                              // run_planning_sections.cpp
PowerSpec read_power(const Section& power);                                             // run_planning_sections.cpp
CostSpec read_cost(const Section& cost);                                                // run_planning_sections.cpp

// "64K" -> 65536: a message size as nccl-tests writes it, K/M/G/T = powers of 1024, optional B.
// Returns nullopt when `text` is not such a size.

}  // namespace trainsim::scenario_detail
