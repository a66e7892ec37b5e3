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
  mutable std::map<std::pair<std::vector<int>, bool>, LocalSearch> searches_;  // (local GPUs, multi-node)
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
