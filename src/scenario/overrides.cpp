#include "scenario/overrides.hpp"

#include "core/error.hpp"
#include "core/strings.hpp"
#include "scenario/key_schema.hpp"
#include "scenario/yaml_reader.hpp"

namespace trainsim::scenario_detail {

namespace {

constexpr const char* kLabel = "--set";

std::vector<std::string> split_path(const std::string& key, const std::string& whole) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = key.find('.', start);
    std::string part = key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (part.empty())
      throw ScenarioError(kLabel, key, "malformed override '" + whole + "': empty key component in '" + key + "'");
    parts.push_back(std::move(part));
    if (dot == std::string::npos) return parts;
    start = dot + 1;
  }
}

// Sets keys[i..] below `map`, creating mappings on the way. `map` is a handle into the tree
// (yaml-cpp nodes are references), so it is passed by value and never reassigned.
void set_at(YAML::Node map, const std::vector<std::string>& keys, std::size_t i, const YAML::Node& value,
            const std::string& key_text) {
  if (i + 1 == keys.size()) {
    map[keys[i]] = value;
    return;
  }
  const YAML::Node existing = map[keys[i]];
  if (is_missing(existing)) {
    map[keys[i]] = YAML::Node(YAML::NodeType::Map);
  } else if (!existing.IsMap()) {
    std::string through;
    for (std::size_t j = 0; j <= i; ++j) through += (j ? "." : "") + keys[j];
    throw ScenarioError(
        kLabel, key_text,
        "cannot set " + key_text + ": " + through + " holds " + describe_node(existing) + ", not a mapping");
  }
  set_at(map[keys[i]], keys, i + 1, value, key_text);
}

}  // namespace

namespace {
YAML::Node parse_value(const std::string& override_text, const std::string& value_text, const std::string& key) {
  try {
    return YAML::Load(value_text);
  } catch (const YAML::Exception& e) {
    throw ScenarioError(kLabel, key, "cannot parse the value of '" + override_text + "' as YAML: " + e.msg);
  }
}
}  // namespace

YAML::Node apply_overrides(YAML::Node root, const std::vector<std::string>& overrides) {
  if (overrides.empty()) return root;
  // Copy-constructed, never assigned: assigning to a yaml-cpp node rewrites the node it refers to.
  YAML::Node tree = is_missing(root) ? YAML::Node(YAML::NodeType::Map) : root;
  for (const std::string& override_text : overrides) {
    const std::size_t eq = override_text.find('=');
    if (eq == std::string::npos)
      throw ScenarioError(kLabel, "", "malformed override '" + override_text + "': expected key.path=value");
    const std::string key = trim(override_text.substr(0, eq));
    if (key.empty())
      throw ScenarioError(kLabel, "", "malformed override '" + override_text + "': empty key before '='");
    const std::vector<std::string> keys = split_path(key, override_text);
    check_override_path(keys);

    const std::string value_text = trim(override_text.substr(eq + 1));
    if (value_text.empty())
      throw ScenarioError(
          kLabel, key,
          "empty value in '" + override_text + "': give a value, or " + key + "=null to restore the default");
    const YAML::Node value = parse_value(override_text, value_text, key);
    if (!tree.IsMap())
      throw ScenarioError(kLabel, key,
                          "cannot apply '" + override_text + "': the scenario is not a mapping of sections");
    set_at(tree, keys, 0, value, key);
  }
  return tree;
}

std::string override_key(const std::string& override_text) {
  const std::size_t eq = override_text.find('=');
  return eq == std::string::npos ? "" : trim(override_text.substr(0, eq));
}

const std::string* override_of(const std::vector<std::string>& overrides, const std::string& key_path) {
  const std::string* found = nullptr;
  for (const std::string& text : overrides) {
    const std::string key = override_key(text);
    if (key.empty() || key_path.compare(0, key.size(), key) != 0) continue;
    // The path itself, or below it: "parallelism" covers "parallelism.tensor", "faults" covers
    // "faults[0].rank"; "parallelism.tensor" does not cover "parallelism.tensor_parallel".
    if (key_path.size() == key.size() || key_path[key.size()] == '.' || key_path[key.size()] == '[') found = &text;
  }
  return found;
}

}  // namespace trainsim::scenario_detail
