#include "api/fabric_check.hpp"

#include "topology/generate.hpp"

namespace trainsim {

std::optional<ScenarioError> fabric_problem(const ClusterSpec& cluster) {
  try {
    (void)build_network(cluster);
  } catch (const ScenarioError& e) { return e; }
  return std::nullopt;
}

void check_fabric_buildable(const std::string& file, const ClusterSpec& cluster) {
  if (const auto e = fabric_problem(cluster)) throw ScenarioError(file, e->key(), e->detail());
}

}  // namespace trainsim
