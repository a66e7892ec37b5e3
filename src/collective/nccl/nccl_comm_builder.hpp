#pragma once
// Builds the NCCL communicator of a group the way NCCL's init does (NCCL src/init.cc initTransportsRank):
// the node's topology (NCCL_TOPO_FILE or generated from the cluster block) restricted to the group's
// GPUs on a node, paths, graph search, then the cross-node stitching. Identical groups (same ranks
// per node, same local GPUs, same node count) share one communicator; every node of a group is taken
// to hold the same local GPUs, which is how Megatron and FSDP lay groups out on symmetric clusters.
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <vector>

#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_communicator.hpp"
#include "collective/nccl/nccl_env.hpp"
#include "collective/nccl/nccl_topology.hpp"

namespace trainsim {

class NcclCommBuilder {
 public:
  // Reads NCCL_TOPO_FILE (errors name nccl.NCCL_TOPO_FILE) or generates the node; throws when the
  // file's GPU count does not match the cluster's GPUs per node (or per scale-up domain for MNNVL).
  NcclCommBuilder(const ClusterSpec& cluster, const NcclEnv& env);

  std::shared_ptr<const NcclCommunicator> communicator(const GroupPlacement& where) const;
  // Builds the communicators of `placements` not built yet on up to `threads` threads (their graph searches and
  // cross-node stitching are independent of one another), so that communicator() finds them. Each one is what
  // communicator() would build alone, whatever the thread count or order. threads <= 1: nothing (communicator()
  // builds on first use, as before).
  void prepare(const std::vector<GroupPlacement>& placements, int threads) const;
  // Whether the communicator of `where` is built (by communicator() or prepare()).
  bool built(const GroupPlacement& where) const;
  const NodeTopology& node() const { return *node_; }

 private:
  ClusterSpec cluster_;
  NcclEnv env_;
  std::shared_ptr<const NodeTopology> node_;
  // An NVLink domain spanning hosts (MNNVL): GPUs and NICs per host, the NCCL node's NETs numbered host by host.
  // 0 when NCCL's node is one host.
  int host_gpus_ = 0, host_nics_ = 0;
  // MNNVL: which of the node's NETs a communicator on these local GPUs sees (those of the hosts holding one).
  std::vector<bool> nets_seen_by(const std::vector<int>& local) const;
  mutable std::mutex mutex_;
  using Key = std::tuple<int, int, std::vector<int>>;  // nodes, ranks per node, local GPUs
  mutable std::map<Key, std::shared_ptr<const NcclCommunicator>> cache_;
  struct LocalSearch {
    std::shared_ptr<const NodeTopology> topology;
    NodeGraphs graphs;
  };
  using SearchKey = std::pair<std::vector<int>, bool>;  // (local GPUs, multi-node)
  mutable std::map<SearchKey, LocalSearch> searches_;
  // The cache key of a placement (its local GPUs checked against the node); throws on a GPU outside it.
  Key key_of(const GroupPlacement& where) const;
  // The node restricted to the key's GPUs, its paths and NCCL's graph search on it. Reads only the builder's
  // constant members: safe on several threads.
  LocalSearch search(const SearchKey& key) const;
  // NCCL's cross-node stitching of `nodes` copies of the search's node. Safe on several threads.
  std::shared_ptr<const NcclCommunicator> stitch(const Key& key, const LocalSearch& found) const;
};

// What NCCL's tuning reads from a communicator (ncclTopoTuneModel): per-graph channels, bandwidths and path types,
// the tree pattern, channel counts, protocol/algorithm support.
NcclTopology tuning_inputs(const NcclCommunicator& comm, const ClusterSpec& cluster, const NcclEnv& env);

// NCCL's default LL128 enablement for one algorithm's graph (tuning.cc:ncclTopoTuneModel): the graph's
// typeIntra at most NVB on every architecture, its typeInter at most PXN from SM90 on (NCCL_LL128_C2C=1)
// and at most PXB before, SM >= 70.
bool ll128_enabled_by_default(PathType type_intra, PathType type_inter, int sm);

// The cluster as NCCL's "node" sees it: with multi-node NVLink (scale-up domain larger than a host,
// e.g. NVL72) the whole domain is one node (MNNVL clique, NCCL_MNNVL_ENABLE) with all its hosts' NICs.
ClusterSpec nccl_node_view(const ClusterSpec& cluster);

}  // namespace trainsim
