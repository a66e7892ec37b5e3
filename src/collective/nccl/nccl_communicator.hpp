#pragma once
// A communicator after init (NCCL src/init.cc initTransportsRank, ncclP2pSchedule; src/graph/connect.cc
// ncclTopoPostset; src/graph/paths.cc ncclTopoComputeP2pChannels): the per-node search results reconciled
// across nodes (min channels and bandwidths, max path types), stitched into global rings and double binary
// trees per channel, NVLS heads, the final channel counts (coll, NVLS, p2p), p2p channels per peer and the p2p
// round schedule. This is what the flow generator walks.
#include <array>
#include <memory>
#include <vector>

#include "collective/nccl/nccl_graph_search.hpp"

namespace trainsim {

struct CommOptions {
  int cross_nic = 2;                // NCCL_CROSS_NIC
  int min_channels = 0;             // NCCL_MIN_NCHANNELS (0 = unset)
  int max_channels = 64;            // NCCL_MAX_NCHANNELS
  int nvls_channels = 0;            // NCCL_NVLS_NCHANNELS (0 = NCCL's default for the SM)
  int nchannels_per_net_peer = 0;   // NCCL_NCHANNELS_PER_NET_PEER (0 = auto)
  int p2p_pxn_level = 2;            // NCCL_P2P_PXN_LEVEL
  bool collnet = false;             // NCCL_COLLNET_ENABLE (a CollNet/SHARP plugin is present)
  int p2p_schedule_group_size = 8;  // NCCL_P2P_SCHEDULE_GROUP_SIZE (ncclP2pSchedule; multi-node only)
};

// One ring channel over the whole communicator.
struct RingChannel {
  std::vector<int> order;       // communicator ranks in ring order, starting at rank 0
  std::vector<int> next, prev;  // per rank
  // Per rank: the NIC (index into its node's nets) it sends to `next` through when next is on
  // another node, else -1; and the rank whose NIC it is when the path is PXN (proxy), else itself.
  std::vector<int> send_net, send_proxy;
  std::vector<int> recv_net;  // NIC receiving from prev when prev is remote, else -1
};

// One tree channel: up (-1 at the root) and up to 3 children (-1 = none) per rank.
struct TreeChannel {
  std::vector<int> up;
  std::vector<std::array<int, 3>> down;
  std::vector<int> net;  // NIC each rank uses for its network edges, -1 if none
};

struct NcclCommunicator {
  int nranks = 0;
  int nnodes = 0;
  std::vector<int> node_of;                  // per rank: node index (0..nnodes-1, in order of first appearance)
  std::vector<int> local_of;                 // per rank: local index on its node
  std::vector<std::vector<int>> node_ranks;  // per node: ranks in local order
  int sm = 0;
  CpuVendor vendor = CpuVendor::Intel;
  CpuArch arch = CpuArch::X86;
  // Per node: its topology (restricted to the communicator's GPUs, paths computed); identical
  // nodes may share one object.
  std::vector<std::shared_ptr<const NodeTopology>> node_topology;
  // Path type between two ranks of one node (Net for ranks on different nodes).
  PathType path_type(int src_rank, int dst_rank) const;

  // Graphs after the cross-node reconciliation (every node agrees).
  SearchGraph ring_graph, tree_graph, nvls_graph;
  int max_tree_pattern = 0;  // as GraphPattern id

  int nchannels = 0;          // comm->nChannels (ncclTopoPostset)
  int default_nchannels = 0;  // what nchannels would be without NCCL_MIN/MAX_NCHANNELS
  int nvls_channels = 0;      // comm->nvlsChannels
  int nvls_heads = 0;         // distinct NVLS heads per node
  int p2p_nchannels = 0;
  int p2p_channels_per_peer = 0;

  std::vector<RingChannel> rings;  // nchannels entries (channel k copies k mod search channels)
  std::vector<TreeChannel> trees;  // nchannels entries (first half tree 0, second half tree 1)
  // Per channel: which of the 2·(search channels) duplicated channels it copies (ncclTopoPostset: channel k of
  // the doubled set is search channel k mod c0 on tree k / c0; later copies repeat them cyclically).
  std::vector<int> channel_copy_of;
  // NVLS: heads per node (local ranks) and, for NVLSTree, the node-level tree per NVLS channel
  // (up/down over node indices: tree 0 on even channels, tree 1 on odd).
  std::vector<int> nvls_head_local;
  std::vector<std::vector<int>> nvls_head_rank;  // [head][node]: communicator rank of head h on node n
  // CollNet (SHARP), only with NCCL_COLLNET_ENABLE on ≥ NCCL_COLLNET_NODE_THRESHOLD (2) nodes:
  // the chain graph (heads = chain[0] of each channel) and the direct graph's distinct heads, which
  // every node contributes as many of as the node with the fewest.
  bool collnet = false;
  SearchGraph collnet_chain_graph, collnet_direct_graph;
  std::vector<int> collnet_head_local;              // direct heads (local ranks), in channel order
  std::vector<std::vector<int>> collnet_head_rank;  // [head][node]
  std::array<std::vector<int>, 2> node_tree_up;
  std::array<std::vector<std::array<int, 2>>, 2> node_tree_down;

  // p2p schedule (ncclP2pSchedule): per rank, per round, the send peer and the recv peer.
  int p2p_group_size = 0;
  std::vector<int> p2p_send_peer(int rank) const;  // rounds 0..nranks-1
  std::vector<int> p2p_recv_peer(int rank) const;
};

// Builds the communicator over `node_topologies` (one per node in node order, already restricted to
// the communicator's local ranks and with paths computed; rank r of the communicator is local rank
// r - (ranks on earlier nodes), i.e. ranks are numbered node by node); `node_graphs` are their
// search results.
NcclCommunicator build_communicator(const std::vector<std::shared_ptr<const NodeTopology>>& node_topologies,
                                    const std::vector<NodeGraphs>& node_graphs, const CommOptions& options);

// The double binary tree over `nnodes` nodes (trees.cc, ncclGetDtree): parent per node (-1 = root) and up to
// two children, for tree 0 and tree 1.
struct NodeTree {
  std::vector<int> up;
  std::vector<std::array<int, 2>> down;
};
std::array<NodeTree, 2> double_binary_tree(int nnodes);

}  // namespace trainsim
