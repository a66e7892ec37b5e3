#pragma once
// Every scenario key, declared once: its path, type, default, unit, range and one line of help. The unknown-key
// check (key_schema.cpp), `trainsim keys` and docs/scenario-keys.md are built from this table; a test checks that
// every declared key is read by a reader and every key a reader reads is declared, and that writing a key's
// declared default changes nothing.
#include <span>
#include <string_view>

namespace trainsim {

struct ScenarioKey {
  // "cluster.scale_up.domain_size"; "faults[].kind" for a key of each element of a list of mappings; "nccl.*"
  // for an open mapping (any NCCL_ environment variable).
  std::string_view path;
  std::string_view type;  // int, number, bool, string, choice, path, list, mapping, "int or list", ...
  // As it would be written in YAML ("8", "true", "auto", "null"); or a sentence starting with "=" when it is
  // derived from other keys ("= gpus_per_node"); "required" when there is none; "-" when absent means "not
  // stated" and nothing is assumed.
  std::string_view default_value;
  std::string_view unit;   // "GB/s", "GPUs", ...; empty when the type says it all
  std::string_view range;  // the values accepted: "> 0", "auto | eager | fused", ...
  std::string_view help;   // one line
};

// In the order a scenario file is usually written (model, training, parallelism, cluster, ...).
std::span<const ScenarioKey> scenario_keys();

// The declaration of a path as written in a scenario ("faults[2].kind" finds "faults[].kind", any
// "nccl.NCCL_X" finds "nccl.*"); nullptr when none.
const ScenarioKey* find_scenario_key(std::string_view path);

// Whether only the network and collective models read the key (cluster.nic_gbps, cluster.network.* but the SimAI
// topology file, nccl.*, algorithms.*, simulation.seed): a change to it leaves the workload, the memory model and
// the compute model as they were, so runs that differ only in such keys can share them (PreparedJobCache).
bool network_only_key(std::string_view path);

}  // namespace trainsim
