#include "workload/chakra/chakra_groups.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/error.hpp"

namespace trainsim::chakra {

std::map<std::string, std::vector<int>> read_comm_group_file(const std::string& path, int world_size) {
  std::map<std::string, std::vector<int>> out;
  if (!std::filesystem::exists(path)) return out;
  YAML::Node root;
  try {  // JSON is YAML's flow style: yaml-cpp reads it
    root = YAML::LoadFile(path);
  } catch (const YAML::Exception& e) {
    throw Error(fmt::format("{}:{}: not valid JSON: {}", path, e.mark.line + 1, e.msg));
  }
  if (!root.IsMap()) throw Error(fmt::format("{}: expected an object {{\"<pg_name>\": [ranks...]}}", path));
  for (const auto& kv : root) {
    const std::string name = kv.first.as<std::string>();
    const YAML::Node& list = kv.second;
    if (!list.IsSequence()) throw Error(fmt::format("{}: \"{}\": expected a list of ranks", path, name));
    std::vector<int> ranks;
    for (const auto& r : list) {
      int v = -1;
      try {
        v = r.as<int>();
      } catch (const YAML::Exception&) { throw Error(fmt::format("{}: \"{}\": a rank is not an integer", path, name)); }
      if (v < 0 || v >= world_size)
        throw Error(fmt::format("{}: \"{}\": rank {} is outside the cluster's {} GPUs", path, name, v, world_size));
      ranks.push_back(v);
    }
    std::sort(ranks.begin(), ranks.end());
    if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end())
      throw Error(fmt::format("{}: \"{}\": a rank is listed twice", path, name));
    if (ranks.empty()) throw Error(fmt::format("{}: \"{}\": the group has no ranks", path, name));
    out.emplace(name, std::move(ranks));
  }
  return out;
}

std::optional<std::uint32_t> GroupTable::named(const std::string& pg_name, std::optional<GroupKind> kind) {
  if (const auto it = by_name_.find(pg_name); it != by_name_.end()) return it->second;
  CommGroup g;
  if (const auto it = named_.find(pg_name); it != named_.end()) {
    g.ranks = it->second;
  } else if (pg_name.empty() || pg_name == "0") {  // ASTRA-sim's default group
    for (int r = 0; r < world_size_; ++r) g.ranks.push_back(r);
  } else {
    return std::nullopt;
  }
  const bool world = static_cast<int>(g.ranks.size()) == world_size_;
  g.kind = kind.value_or(world ? GroupKind::World : GroupKind::DP);
  groups_.push_back(std::move(g));
  const auto id = static_cast<std::uint32_t>(groups_.size() - 1);
  by_name_.emplace(pg_name, id);
  return id;
}

std::uint32_t GroupTable::pair(int src, int dst) {
  if (const auto it = by_pair_.find({src, dst}); it != by_pair_.end()) return it->second;
  CommGroup g;
  g.kind = GroupKind::PP;
  g.ranks = {std::min(src, dst), std::max(src, dst)};
  groups_.push_back(std::move(g));
  const auto id = static_cast<std::uint32_t>(groups_.size() - 1);
  by_pair_.emplace(std::pair{src, dst}, id);
  return id;
}

}  // namespace trainsim::chakra
