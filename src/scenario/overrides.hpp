#pragma once
// `--set key.path=value` overrides, applied to the YAML tree before anything is read so that an
// override behaves exactly as if the file had said it.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace trainsim::scenario_detail {

// Applies each "a.b.c=value" in order (a later one wins). The value is parsed as YAML, so
// `--set training.recompute_num_layers=[4,0]` gives a list and `--set parallelism.data=null` clears
// a key. Missing intermediate mappings are created. Errors (no '=', an empty key or path component,
// an unknown key, a value that is not YAML) are ScenarioErrors with the file label "--set".
// Returns the tree (a new mapping when `root` was empty).
YAML::Node apply_overrides(YAML::Node root, const std::vector<std::string>& overrides);

}  // namespace trainsim::scenario_detail
