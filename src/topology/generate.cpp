#include "topology/generate.hpp"

#include "core/error.hpp"
#include "topology/generators.hpp"

namespace trainsim {

namespace topology_detail {

void cluster_error(const std::string& key, const std::string& message) {
  throw ScenarioError("", "cluster." + key, message);
}

}  // namespace topology_detail

NetworkGraph build_network(const ClusterSpec& cluster) {
  using namespace topology_detail;
  switch (cluster.network.topology) {
    case NetworkTopology::RailOptimized: return generate_rail_optimized(cluster);
    case NetworkTopology::FatTree: return generate_fat_tree(cluster);
    case NetworkTopology::HPN: return generate_hpn(cluster);
    case NetworkTopology::Dragonfly: return generate_dragonfly(cluster);
    case NetworkTopology::Ideal: return generate_ideal(cluster);
    case NetworkTopology::SimaiFile: return generate_simai_file(cluster);
  }
  throw Error("unknown network topology");
}

}  // namespace trainsim
