#pragma once
// Paths through the network graph (docs/topologies.md, "Routing").
//
// Scale-out: shortest paths in switch hops, through switches only. Among equal-cost next hops,
// ECMP picks one by a hash of (seed, flow key, hop number), so that flows collide on links the way
// they do in real fabrics, and the same seed and flow key always give the same path. Adaptive
// routing picks the equal-cost path whose most-loaded link is least loaded, for a per-link load
// the caller passes (the ideal of adaptive routing / packet spraying).
//
// Distances are computed per destination attachment (the set of switches a NIC hangs off, e.g.
// one rail leaf) by one breadth-first search over the switches, lazily, and cached: no all-pairs
// table. Not thread-safe (the cache fills as routes are asked for); use one Router per thread.
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "topology/network_graph.hpp"

namespace trainsim {

struct NicAddress {
  int node = 0;
  int nic = 0;
};

class Router {
 public:
  Router(const NetworkGraph& graph, std::uint64_t seed);

  // NIC to NIC: link ids from the source NIC's uplink to the destination NIC's downlink (empty
  // when src == dst). Throws Error naming both NICs when every path crosses a down link.
  std::vector<LinkId> ecmp_path(NicAddress src, NicAddress dst, std::uint64_t flow_key);
  void ecmp_path(NicAddress src, NicAddress dst, std::uint64_t flow_key, std::vector<LinkId>& out);
  // `link_load` is indexed by LinkId in any unit proportional to traffic; links are compared by
  // load / capacity (bottleneck first, then the sum along the path, then the ECMP hash).
  std::vector<LinkId> adaptive_path(NicAddress src, NicAddress dst, std::span<const double> link_load,
                                    std::uint64_t flow_key);
  void adaptive_path(NicAddress src, NicAddress dst, std::span<const double> link_load, std::uint64_t flow_key,
                     std::vector<LinkId>& out);
  // Links on a shortest path (2 for NICs under one leaf); -1 when there is none.
  int hop_count(NicAddress src, NicAddress dst);

  // Scale-up: GPU -> its domain's NVSwitch -> GPU (across hosts inside an NVL72 domain). Throws
  // Error when the GPUs are in different domains or a link is down. Empty for src == dst.
  std::vector<LinkId> scale_up_path(int src_rank, int dst_rank) const;
  // PCIe between a GPU and a NIC of its node that is local to it (NetworkGraph::local_nics).
  LinkId gpu_to_nic(int rank, int nic) const;
  LinkId nic_to_gpu(int nic, int rank) const { return NetworkGraph::reverse(gpu_to_nic(rank, nic)); }

  const NetworkGraph& graph() const { return graph_; }

 private:
  static constexpr std::uint8_t kUnreachable = 0xFF;
  // Hops from every switch to the destination NIC (1 = a switch it hangs off); kUnreachable if none.
  const std::uint8_t* distances_to(NodeId dst_nic);
  void check_version();
  NodeId nic_node(NicAddress a) const { return graph_.nic(a.node, a.nic); }
  // The candidates (out-links) of `at` one hop closer to dst, in adjacency order; returns how many.
  int next_hops(NodeId at, int at_distance, NodeId dst_nic, const std::uint8_t* dist, LinkId* out) const;
  int source_distance(NodeId src_nic, const std::uint8_t* dist) const;
  [[noreturn]] void no_path(NicAddress src, NicAddress dst) const;
  // Scratch space for the candidates at one distance (the adaptive search recurses by distance).
  LinkId* buffer(int distance);
  void index_switch_targets();

  const NetworkGraph& graph_;
  std::uint64_t seed_;
  std::uint64_t version_ = 0;
  int switches_ = 0;
  std::map<std::vector<NodeId>, int> class_of_attachment_;
  std::vector<std::int32_t> nic_class_;  // per NIC (global index): distance class, -1 = not yet
  // Per link: the switch it leads to (index from the first switch) if it is up, else -1; a compact
  // copy of what next_hops reads, so the scan stays in cache.
  std::vector<std::int32_t> switch_target_;
  std::vector<std::vector<std::uint8_t>> class_distances_;
  // Per switch u (index from the first switch): the switches with an up link into it are
  // switch_in_from_[switch_in_begin_[u] .. switch_in_begin_[u + 1]).
  std::vector<std::int32_t> switch_in_begin_, switch_in_from_;
  std::vector<NodeId> bfs_queue_;
  std::size_t max_degree_ = 1;
  std::vector<std::vector<LinkId>> hop_buffers_;
  std::vector<double> ms_, sums_;
  // Adaptive routing's per-call memo over switches: (bottleneck, sum) and the call it belongs to.
  std::vector<double> best_max_, best_sum_;
  std::vector<std::uint32_t> best_stamp_;
  std::uint32_t stamp_ = 0;
};

}  // namespace trainsim
