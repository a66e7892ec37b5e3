#include "api/fabric_check.hpp"

#include "core/error.hpp"
#include "topology/generate.hpp"

namespace trainsim {

void check_fabric_buildable(const std::string& file, const ClusterSpec& cluster) {
  try {
    (void)build_network(cluster);
  } catch (const ScenarioError& e) {
    throw ScenarioError(file, e.key(), e.detail());
  }
}

}  // namespace trainsim
