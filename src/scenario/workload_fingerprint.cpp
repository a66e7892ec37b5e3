#include "scenario/workload_fingerprint.hpp"

#include <algorithm>
#include <utility>
#include <vector>

#include "scenario/key_table.hpp"

namespace trainsim::scenario_detail {

namespace {

// Length-prefixed pieces, so no key or value text can be mistaken for the structure around it.
void put(std::string& out, char tag, const std::string& text) {
  out += tag;
  out += std::to_string(text.size());
  out += ':';
  out += text;
}

void write(const YAML::Node& node, const std::string& path, std::string& out) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      // Sorted by index: a YAML::Node assigned to (as a sort would) writes through to the tree it refers to.
      std::vector<std::pair<std::string, YAML::Node>> entries;
      for (const auto& kv : node) entries.emplace_back(kv.first.Scalar(), kv.second);
      std::vector<std::size_t> order(entries.size());
      for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t b) { return entries[a].first < entries[b].first; });
      out += '{';
      for (std::size_t i : order) {
        const auto& [key, value] = entries[i];
        const std::string child = path.empty() ? key : path + "." + key;
        if (network_only_key(child)) continue;
        std::string inner;
        write(value, child, inner);
        if (value.IsMap() && inner == "{}") continue;  // nothing but network keys (or nothing): as if absent
        put(out, 'k', key);
        out += inner;
      }
      out += '}';
      return;
    }
    case YAML::NodeType::Sequence:
      out += '[';
      for (const auto& item : node) write(item, path + "[]", out);
      out += ']';
      return;
    case YAML::NodeType::Scalar: put(out, 's', node.Scalar()); return;
    case YAML::NodeType::Null: out += 'n'; return;
    case YAML::NodeType::Undefined: out += 'u'; return;
  }
}

}  // namespace

std::string workload_fingerprint(const YAML::Node& root) {
  std::string out;
  write(root, "", out);
  return out;
}

}  // namespace trainsim::scenario_detail
