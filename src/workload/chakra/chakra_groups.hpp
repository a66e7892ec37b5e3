#pragma once
// Process groups of a Chakra trace set: ASTRA-sim's comm-group file (DIR/comm_group.json: {"<pg_name>": [ranks]})
// and the groups trainsim builds from it, from pg_name, and from the peers of sends and receives.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "workload/workload.hpp"

namespace trainsim::chakra {

// pg_name -> member ranks (sorted, distinct, each below world_size). Empty when the file does not exist; Error
// "FILE: what" (naming the key) when it is malformed.
std::map<std::string, std::vector<int>> read_comm_group_file(const std::string& path, int world_size);

// Interns the Workload's CommGroups as the nodes name them.
class GroupTable {
 public:
  GroupTable(std::map<std::string, std::vector<int>> named, int world_size, std::string file)
      : named_(std::move(named)), world_size_(world_size), file_(std::move(file)) {}

  // The group a collective's pg_name names ("" and "0": every rank, unless the comm-group file says otherwise);
  // `kind` from trainsim_group when the node has it. nullopt when the name is unknown.
  std::optional<std::uint32_t> named(const std::string& pg_name, std::optional<GroupKind> kind);
  // The pair (src, dst) of a send or receive without a usable pg_name: one communicator per direction, so the n-th
  // send from src to dst meets the n-th receive at dst from src.
  std::uint32_t pair(int src, int dst);
  const std::vector<int>& ranks(std::uint32_t g) const { return groups_[g].ranks; }
  const std::string& file() const { return file_; }

  std::vector<CommGroup> take() { return std::move(groups_); }

 private:
  std::map<std::string, std::vector<int>> named_;
  int world_size_;
  std::string file_;
  std::vector<CommGroup> groups_;
  std::map<std::string, std::uint32_t> by_name_;
  std::map<std::pair<int, int>, std::uint32_t> by_pair_;
};

}  // namespace trainsim::chakra
