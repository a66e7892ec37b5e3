#include "scenario/key_schema.hpp"

#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "scenario/key_table.hpp"
#include "scenario/yaml_reader.hpp"

namespace trainsim::scenario_detail {

namespace {

// NCCL variables people commonly set (NCCL user guide, "Environment Variables"); only used to
// suggest a spelling for a key under `nccl:` that lacks the NCCL_ prefix.
const std::vector<std::string> kCommonNcclVariables = {"NCCL_ALGO",
                                                       "NCCL_PROTO",
                                                       "NCCL_P2P_PXN_LEVEL",
                                                       "NCCL_PXN_DISABLE",
                                                       "NCCL_MAX_NCHANNELS",
                                                       "NCCL_MIN_NCHANNELS",
                                                       "NCCL_NVLS_ENABLE",
                                                       "NCCL_BUFFSIZE",
                                                       "NCCL_CROSS_NIC",
                                                       "NCCL_COLLNET_ENABLE",
                                                       "NCCL_NCHANNELS_PER_NET_PEER",
                                                       "NCCL_P2P_NET_CHUNKSIZE",
                                                       "NCCL_IB_HCA",
                                                       "NCCL_NET_GDR_LEVEL",
                                                       "NCCL_MIN_CTAS",
                                                       "NCCL_MAX_CTAS"};

constexpr std::string_view kNcclPrefix = "NCCL_";

enum class Shape { Value, Mapping, ListOfMappings, Environment };

struct KeyNode {
  Shape shape = Shape::Value;
  std::map<std::string, KeyNode> children;
};

struct Schema {
  KeyNode root{Shape::Mapping, {}};
  std::map<std::string, std::string> leaf_paths;  // last component -> full path (first one listed)
};

const Schema& schema() {
  static const Schema built = [] {
    Schema s;
    for (const ScenarioKey& key : scenario_keys()) {
      const std::string_view path = key.path;
      KeyNode* node = &s.root;
      std::size_t start = 0;
      while (true) {
        const std::size_t dot = path.find('.', start);
        std::string part(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        const bool last = dot == std::string_view::npos;
        if (part == "*") {
          node->shape = Shape::Environment;
          break;
        }
        const bool list = part.size() > 2 && part.ends_with("[]");
        if (list) part.resize(part.size() - 2);
        KeyNode& child = node->children[part];
        if (list)
          child.shape = Shape::ListOfMappings;
        else if (!last && child.shape == Shape::Value)
          child.shape = Shape::Mapping;
        if (last) {
          if (path.find('[') == std::string_view::npos) s.leaf_paths.emplace(part, std::string(path));
          break;
        }
        node = &child;
        start = dot + 1;
      }
    }
    return s;
  }();
  return built;
}

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void unknown_key(const std::string& file, const std::string& parent, const std::string& key,
                              const KeyNode& where) {
  const std::string full = join_path(parent, key);
  std::string message = "unknown key " + full;
  if (where.shape == Shape::Environment) {
    std::string guess = closest_match(upper(key), kCommonNcclVariables);
    if (guess.empty()) guess = std::string(kNcclPrefix) + upper(key);
    throw ScenarioError(file, full,
                        message + "; NCCL settings are environment variables starting with NCCL_; did you mean " +
                            join_path(parent, guess) + "?");
  }
  // The same name in another section is the likeliest intent ("model.global_batch_size").
  const auto& leaves = schema().leaf_paths;
  if (auto it = leaves.find(key); it != leaves.end() && it->second != full)
    throw ScenarioError(file, full, message + "; did you mean " + it->second + "?");
  std::vector<std::string> siblings;
  for (const auto& [name, node] : where.children) siblings.push_back(name);
  if (const std::string guess = closest_match(key, siblings); !guess.empty())
    throw ScenarioError(file, full, message + "; did you mean " + join_path(parent, guess) + "?");
  throw ScenarioError(file, full,
                      message + "; known keys" + (parent.empty() ? "" : " under " + parent) + ": " + join(siblings));
}

void check_node(const YAML::Node& node, const KeyNode& schema_node, const std::string& path, const std::string& file);

void check_mapping(const YAML::Node& node, const KeyNode& schema_node, const std::string& path,
                   const std::string& file) {
  if (is_missing(node)) return;
  if (!node.IsMap()) throw ScenarioError(file, path, "expected a mapping of keys, got " + describe_node(node));
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      throw ScenarioError(file, path, "keys must be plain names, got " + describe_node(it->first) + " as a key");
    const std::string key = it->first.Scalar();
    const std::string full = join_path(path, key);
    if (!seen.insert(key).second) throw ScenarioError(file, full, "duplicate key " + full);
    if (schema_node.shape == Shape::Environment) {
      if (!key.starts_with(kNcclPrefix)) unknown_key(file, path, key, schema_node);
      continue;
    }
    const auto child = schema_node.children.find(key);
    if (child == schema_node.children.end()) unknown_key(file, path, key, schema_node);
    check_node(it->second, child->second, full, file);
  }
}

void check_node(const YAML::Node& node, const KeyNode& schema_node, const std::string& path, const std::string& file) {
  switch (schema_node.shape) {
    case Shape::Value: return;  // typed getters check values
    case Shape::Mapping:
    case Shape::Environment: check_mapping(node, schema_node, path, file); return;
    case Shape::ListOfMappings:
      if (is_missing(node)) return;
      if (!node.IsSequence()) throw ScenarioError(file, path, "expected a list, got " + describe_node(node));
      for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item = path + "[" + std::to_string(i) + "]";
        if (!node[i].IsMap())
          throw ScenarioError(file, item, "expected a mapping of keys, got " + describe_node(node[i]));
        KeyNode element = schema_node;
        element.shape = Shape::Mapping;
        check_mapping(node[i], element, item, file);
      }
      return;
  }
}

}  // namespace

void check_known_keys(const YAML::Node& root, const std::string& file) {
  if (is_missing(root)) return;
  if (!root.IsMap())
    throw ScenarioError(file, "",
                        "expected a mapping of sections (model, training, cluster, ...), got " + describe_node(root));
  check_mapping(root, schema().root, "", file);
}

void check_known_model_keys(const YAML::Node& model, const std::string& file) {
  check_node(model, schema().root.children.at("model"), "model", file);
}

void check_override_path(const std::vector<std::string>& keys) {
  const KeyNode* node = &schema().root;
  std::string path;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    if (node->shape == Shape::Environment) {
      if (!key.starts_with(kNcclPrefix)) unknown_key("--set", path, key, *node);
      if (i + 1 != keys.size())
        throw ScenarioError("--set", join_path(path, key), join_path(path, key) + " is a value, not a mapping");
      return;
    }
    if (node->shape == Shape::ListOfMappings)
      throw ScenarioError(
          "--set", path,
          "cannot set a key inside the list " + path + "; set the whole list, e.g. --set " + path + "=[...]");
    if (node->shape == Shape::Value) throw ScenarioError("--set", path, path + " is a value, not a mapping");
    const auto child = node->children.find(key);
    if (child == node->children.end()) unknown_key("--set", path, key, *node);
    node = &child->second;
    path = join_path(path, key);
  }
}

}  // namespace trainsim::scenario_detail
