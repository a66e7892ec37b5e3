#pragma once
// The known keys of a scenario file (docs/scenario-keys.md: the spec's keys plus the keys this implementation
// adds, listed in key_schema.cpp). An unknown key is an error that names its full path and the
// closest known key, because a misspelt key silently falling back to a default would simulate
// something the user did not ask for.
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace trainsim::scenario_detail {

// Throws ScenarioError for the first unknown or duplicated key anywhere in the tree, and for a
// section that is not a mapping (or a list, for `faults` and `collective.points`).
void check_known_keys(const YAML::Node& root, const std::string& file);

// The same for a `model:` mapping that comes from a preset file.
void check_known_model_keys(const YAML::Node& model, const std::string& file);

// A `--set` key path split on '.'; throws ScenarioError with file "--set" when no such key exists
// or the path runs through a value or a list.
void check_override_path(const std::vector<std::string>& keys);

}  // namespace trainsim::scenario_detail
