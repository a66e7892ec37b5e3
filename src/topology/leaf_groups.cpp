#include "topology/leaf_groups.hpp"

#include <algorithm>

#include "topology/clos_fabric.hpp"
#include "topology/generators.hpp"

namespace trainsim::topology_detail {

void check_rails(const ClusterSpec& c, const std::string& topology) {
  if (c.gpus_per_node % c.nics_per_node != 0 && c.nics_per_node % c.gpus_per_node != 0)
    cluster_error("nics_per_node", topology + " pairs NIC k with GPU k*gpus_per_node/nics_per_node on rail k; " +
                                       std::to_string(c.nics_per_node) + " NICs and " +
                                       std::to_string(c.gpus_per_node) + " GPUs per node do not divide one another");
}

int hosts_per_leaf_group(const ClusterSpec& c, int max_hosts, const std::string& group_name, const std::string& need) {
  const NetworkSpec& net = c.network;
  if (max_hosts < 1) {
    const std::vector<double> taper = effective_taper(net);
    cluster_error("network.switch_radix", "a radix-" + std::to_string(net.switch_radix) + " leaf" +
                                              (taper.empty() ? std::string() : " at the leaf oversubscription") +
                                              " has too few downlinks for one host (" + need + ")");
  }
  const int nodes = c.num_nodes();
  if (!net.pod_size) return std::min(max_hosts, nodes);
  const int pod_nodes = *net.pod_size / c.gpus_per_node;
  if (net.tiers <= 2) {
    if (pod_nodes > max_hosts)
      cluster_error("network.pod_size", "with " + std::to_string(net.tiers) + " tiers pod_size is the " + group_name +
                                            " under one set of leaves; " + std::to_string(pod_nodes) + " nodes (" +
                                            need + ") is more than the " + std::to_string(max_hosts) + " a radix-" +
                                            std::to_string(net.switch_radix) + " leaf serves at this oversubscription");
    return std::min(pod_nodes, nodes);
  }
  return std::min({max_hosts, pod_nodes, nodes});
}

}  // namespace trainsim::topology_detail
