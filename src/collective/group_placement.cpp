#include <algorithm>
#include <map>
#include <string>

#include "collective/collective_model.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

// NCCL counts a "node" as the set of ranks sharing a host hash (NCCL src/init.cc, initTransportsRank) or,
// with multi-node NVLink (MNNVL, e.g. NVL72; NCCL_MNNVL_ENABLE), the whole NVLink clique. So when a scale-up
// domain spans several hosts the domain is the unit; otherwise the host is.
GroupPlacement GroupPlacement::of(const std::vector<int>& ranks, const ClusterSpec& cluster) {
  if (cluster.gpus_per_node <= 0 || cluster.scale_up.domain_size <= 0)
    throw Error("collective: cluster.gpus_per_node and cluster.scale_up.domain_size must be positive");
  const bool domain_is_node = cluster.scale_up.domain_size > cluster.gpus_per_node;
  std::map<int, int> per_node;
  for (int r : ranks) {
    if (r < 0 || (cluster.num_gpus > 0 && r >= cluster.num_gpus))
      throw Error("collective: rank " + std::to_string(r) + " is outside the cluster's " +
                  std::to_string(cluster.num_gpus) + " GPUs");
    ++per_node[domain_is_node ? cluster.domain_of(r) : cluster.node_of(r)];
  }
  GroupPlacement g;
  if (!ranks.empty()) {
    const int unit = domain_is_node ? cluster.scale_up.domain_size : cluster.gpus_per_node;
    const int first = *std::min_element(ranks.begin(), ranks.end()) / unit;
    for (int r : ranks)
      if (r / unit == first) g.local_ranks.push_back(r % unit);
    std::sort(g.local_ranks.begin(), g.local_ranks.end());
  }
  g.size = static_cast<int>(ranks.size());
  g.nodes = static_cast<int>(per_node.size());
  for (const auto& [node, count] : per_node) {
    if (g.max_per_node != 0 && count != g.max_per_node) g.uniform = false;
    g.max_per_node = std::max(g.max_per_node, count);
  }
  return g;
}

std::vector<GroupPlacement> GroupPlacement::of_copies(const std::vector<std::vector<int>>& copies,
                                                      const ClusterSpec& cluster) {
  // Copies that fill the nodes alike (as many nodes, as full, as even) count once, the first standing for the rest:
  // they differ only in which GPUs of symmetric hosts they use, which one simulated rank already takes as equal.
  // What tells copies apart is a copy straddling more nodes than the others (TP 16 on 72-GPU NVLink domains).
  std::vector<GroupPlacement> out;
  for (const auto& members : copies) {
    GroupPlacement g = of(members, cluster);
    const auto alike = [&](const GroupPlacement& o) {
      return o.size == g.size && o.nodes == g.nodes && o.max_per_node == g.max_per_node && o.uniform == g.uniform;
    };
    if (std::none_of(out.begin(), out.end(), alike)) out.push_back(std::move(g));
  }
  return out;
}

CollectiveEstimate slowest_copy_estimate(const CollectiveModel& model, CollKind kind, std::int64_t bytes,
                                         const std::vector<GroupPlacement>& placements, const TokenExchange& exchange) {
  TRAINSIM_CHECK(!placements.empty(), "collective: a group without a placement");
  CollectiveEstimate slowest = estimate_call(model, kind, bytes, exchange, placements.front());
  for (std::size_t i = 1; i < placements.size(); ++i) {
    CollectiveEstimate e = estimate_call(model, kind, bytes, exchange, placements[i]);
    if (e.time > slowest.time) slowest = e;
  }
  return slowest;
}

}  // namespace trainsim
