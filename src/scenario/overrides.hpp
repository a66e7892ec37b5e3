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
// An empty value (`parallelism.tensor=`) is an error too: it would read as null and silently
// restore the default; `key=null` says that on purpose.
YAML::Node apply_overrides(YAML::Node root, const std::vector<std::string>& overrides);

// The key of "a.b.c=value", trimmed ("a.b.c"); "" when there is no '='.
std::string override_key(const std::string& override_text);

// The override that gave the value at `key_path` ("parallelism.tensor", "faults[0].rank"): the last
// one whose key is that path or a mapping or list above it; nullptr when the file gave it. Used to
// blame a bad value on `--set KEY=VALUE` rather than on the scenario file.
const std::string* override_of(const std::vector<std::string>& overrides, const std::string& key_path);

}  // namespace trainsim::scenario_detail
