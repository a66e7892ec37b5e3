#include "collective/nccl/nccl_comm_builder.hpp"

#include <algorithm>
#include <set>

#include "collective/nccl/nccl_constants.hpp"
#include "collective/nccl/nccl_search_cache.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"

namespace trainsim {

namespace {

int tuning_sm(int sm) {
  // sm 0 = AMD or a custom gpu_spec: NCCL has no tables of its own for them (RCCL tunes
  // separately); the Hopper rows are the closest generation to MI300-class and datasheet parts.
  return sm > 0 ? sm : 90;
}
int cc_index_of(int sm) { return sm < 80 ? 0 : sm < 90 ? 1 : sm < 100 ? 2 : 3; }

bool is_amd(const ClusterSpec& c) {
  return c.gpu.vendor == "AMD" || c.gpu.vendor == "amd" || c.scale_up.kind == ScaleUpKind::InfinityFabric;
}

NcclGraph tuning_graph(const SearchGraph& g, int sm) {
  NcclGraph out;
  out.ll128 = g.nchannels > 0 && ll128_enabled_by_default(g.type_intra, g.type_inter, sm);
  out.channels = g.nchannels;
  out.bw_intra = g.bw_intra;
  out.bw_inter = g.bw_inter;
  // intraHw = NVLINK iff typeIntra == PATH_NVL (ncclTopoTuneModel); one GPU per node (LOC) uses the PCI row.
  out.nvlink_intra = g.type_intra == PathType::Nvl;
  out.same_channels = g.same_channels;
  return out;
}

// NCCL prices a communicator as if it were alone on its NICs. In training every GPU of a node runs
// its own copy of a group (the DP groups of local GPUs 0..7 all reduce at once), so a group whose
// rings leave through NICs that other GPUs' groups also use gets only its share of them: with N
// NICs and G GPUs per node, a group with k GPUs per node can count on N·k/G NICs' worth of
// bandwidth. When its rings use more distinct NICs than that (4 NICs for 8 GPUs: a one-GPU-per-node
// DP group uses one whole NIC but shares it with the DP group of the GPU next to it), the
// inter-node bandwidth shrinks accordingly. The flow-level backend models this sharing directly.
void apply_nic_sharing(NcclTopology& t, const NcclCommunicator& comm, const ClusterSpec& cluster) {
  if (t.nnodes <= 1 || comm.node_topology.empty() || !comm.node_topology.front()) return;
  const NodeTopology& node = *comm.node_topology.front();
  std::vector<int> used;
  for (const auto* list : {&comm.ring_graph.net_in, &comm.ring_graph.net_out})
    for (int n : *list)
      if (n >= 0 && std::find(used.begin(), used.end(), n) == used.end()) used.push_back(n);
  // The GPUs whose share of the node's NICs is at stake: the whole node, or with MNNVL the hosts whose NICs it has.
  const ClusterSpec view = nccl_node_view(cluster);
  const int gpus = view.gpus_per_node > cluster.gpus_per_node && cluster.nics_per_node > 0
                       ? static_cast<int>(node.nets.size()) / cluster.nics_per_node * cluster.gpus_per_node
                       : view.gpus_per_node;
  if (used.empty() || gpus <= 0) return;
  const double available = static_cast<double>(node.nets.size()) * t.max_per_node / gpus;
  const double share = std::min(1.0, available / static_cast<double>(used.size()));
  if (share >= 1.0) return;
  // Ring and tree channels run at one speed end to end (bwIntra = bwInter for multi-node rings);
  // NVLS heads keep their NVLink bandwidth and lose only the network part.
  for (NcclGraph* g : {&t.ring, &t.tree}) {
    g->bw_inter *= share;
    g->bw_intra = std::min(g->bw_intra, g->bw_inter);
  }
  t.nvls.bw_inter *= share;
  t.collnet_chain.bw_inter *= share;
  t.collnet_direct.bw_inter *= share;
}

}  // namespace

// NCCL 2.30 src/graph/tuning.cc, ncclTopoTuneModel, the `pEnable == 2 && p == NCCL_PROTO_LL128` block
// (LL128 "auto"): evaluated per algorithm on that algorithm's own graph (graphs[a]), for every
// collective alike:
//   * inter-node path: with NCCL_LL128_C2C=1 (default) and min SM >= 90, typeInter <= PXN; otherwise
//     typeInter <= PXB ("Don't enable LL128 over PxN because PxN can encapsulate PxB or P2C links");
//   * intra-node path: typeIntra <= NVB on every architecture (NVLink, directly / via NVSwitch / via
//     one GPU) - LL128 relies on 128-byte stores arriving whole, which PCIe does not guarantee;
//   * equal SM versions on all ranks unless min SM >= 90 (trainsim clusters are homogeneous), SM >= 70;
//   * the CUDA 11.8 / SM90 / 2-rank Ring AllReduce exception is not modelled (CUDA 12+ assumed).
// A single-node graph keeps the search's initial typeInter (PIX), so only typeIntra matters there; a
// one-GPU-per-node graph has typeIntra LOC, so only typeInter matters.
bool ll128_enabled_by_default(PathType type_intra, PathType type_inter, int sm) {
  if (sm < 70) return false;
  const PathType inter_limit = sm >= 90 ? PathType::Pxn : PathType::Pxb;
  return type_inter <= inter_limit && type_intra <= PathType::Nvb;
}

ClusterSpec nccl_node_view(const ClusterSpec& cluster) {
  ClusterSpec c = cluster;
  if (cluster.scale_up.domain_size > cluster.gpus_per_node && cluster.gpus_per_node > 0) {
    const int hosts = cluster.scale_up.domain_size / cluster.gpus_per_node;
    c.gpus_per_node = cluster.scale_up.domain_size;
    c.nics_per_node = cluster.nics_per_node * std::max(1, hosts);
  }
  return c;
}

NcclCommBuilder::NcclCommBuilder(const ClusterSpec& cluster, const NcclEnv& env)
    : cluster_(nccl_node_view(cluster)), env_(env) {
  const std::string key = "nccl.NCCL_TOPO_FILE";
  if (!env.topo_file.empty()) {
    NodeTopology node = load_nccl_topology_file(env.topo_file, key);
    if (static_cast<int>(node.gpus.size()) != cluster_.gpus_per_node)
      throw ScenarioError("", key,
                          env.topo_file + " describes " + std::to_string(node.gpus.size()) +
                              " GPUs with a rank, but the cluster has " + std::to_string(cluster_.gpus_per_node) +
                              " GPUs per node (cluster.gpus_per_node)");
    node_ = std::make_shared<const NodeTopology>(std::move(node));
  } else {
    node_ = std::make_shared<const NodeTopology>(generate_node_topology(cluster_));
  }
  const int hosts = cluster.gpus_per_node > 0 ? cluster_.gpus_per_node / cluster.gpus_per_node : 1;
  if (hosts > 1 && cluster.nics_per_node > 0 && static_cast<int>(node_->nets.size()) == hosts * cluster.nics_per_node) {
    host_gpus_ = cluster.gpus_per_node;
    host_nics_ = cluster.nics_per_node;
  }
}

// NCCL fuses the topology of every rank of an MNNVL clique (src/graph/topo.cc, ncclTopoGetSystem): each rank
// brings its host's GPUs and the NICs its net plugin reports, so the communicator's node holds the NICs of the hosts
// it has ranks on, not the whole domain's. NET n belongs to host n / NICs per host, as the network layer numbers
// them (FlowPaths::nic_of).
std::vector<bool> NcclCommBuilder::nets_seen_by(const std::vector<int>& local) const {
  if (host_gpus_ <= 0) return {};
  std::vector<bool> host_has_rank(node_->nets.size() / static_cast<std::size_t>(host_nics_), false);
  for (int l : local) host_has_rank[static_cast<std::size_t>(l / host_gpus_)] = true;
  std::vector<bool> keep(node_->nets.size());
  for (std::size_t n = 0; n < keep.size(); ++n) keep[n] = host_has_rank[n / static_cast<std::size_t>(host_nics_)];
  return keep;
}

NcclCommBuilder::Key NcclCommBuilder::key_of(const GroupPlacement& where) const {
  const int nodes = std::max(1, where.nodes);
  const int per_node = std::max(1, where.max_per_node);
  std::vector<int> local = where.local_ranks;
  if (static_cast<int>(local.size()) != per_node) {  // placements built by hand: the first GPUs
    local.resize(static_cast<std::size_t>(per_node));
    for (int i = 0; i < per_node; ++i) local[static_cast<std::size_t>(i)] = i;
  }
  for (int l : local)
    if (l < 0 || l >= static_cast<int>(node_->gpus.size()))
      throw Error("collective: local GPU " + std::to_string(l) + " is outside the node's " +
                  std::to_string(node_->gpus.size()) + " GPUs");
  return Key{nodes, per_node, std::move(local)};
}

NcclCommBuilder::LocalSearch NcclCommBuilder::search(const SearchKey& key) const {
  const auto& [local, multi] = key;
  NodeTopology restricted = restrict_to_gpus(*node_, local, nets_seen_by(local));
  PathOptions paths;
  paths.pxn_disable = env_.pxn_disable;
  compute_paths(restricted, paths);
  SearchOptions options;
  options.cross_nic = env_.cross_nic;
  options.multi_node = multi;
  const bool nvls = env_.nvls_enable != 0 && tuning_sm(restricted.sm) >= 90 && !is_amd(cluster_) &&
                    restricted.nvswitch >= 0 && local.size() >= 2;
  LocalSearch found;
  found.graphs = cached_search_node_graphs(restricted, options, nvls, env_.collnet_enable);
  found.topology = std::make_shared<const NodeTopology>(std::move(restricted));
  return found;
}

std::shared_ptr<const NcclCommunicator> NcclCommBuilder::stitch(const Key& key, const LocalSearch& found) const {
  const int nodes = std::get<0>(key);
  CommOptions options;
  options.cross_nic = env_.cross_nic;
  options.min_channels = env_.min_nchannels.value_or(0);
  options.max_channels = env_.max_nchannels.value_or(nccl::kMaxChannels);
  options.nvls_channels = env_.nvls_nchannels.value_or(0);
  options.nchannels_per_net_peer = env_.nchannels_per_net_peer.value_or(0);
  options.p2p_pxn_level = env_.pxn_disable ? 0 : env_.p2p_pxn_level;
  options.collnet = env_.collnet_enable;
  const std::vector<std::shared_ptr<const NodeTopology>> tops(static_cast<std::size_t>(nodes), found.topology);
  const std::vector<NodeGraphs> graphs(static_cast<std::size_t>(nodes), found.graphs);
  return std::make_shared<const NcclCommunicator>(build_communicator(tops, graphs, options));
}

std::shared_ptr<const NcclCommunicator> NcclCommBuilder::communicator(const GroupPlacement& where) const {
  const Key key = key_of(where);
  std::lock_guard<std::mutex> lock(mutex_);
  if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  const SearchKey skey{std::get<2>(key), std::get<0>(key) > 1};
  auto sit = searches_.find(skey);
  if (sit == searches_.end()) sit = searches_.emplace(skey, search(skey)).first;
  return cache_.emplace(key, stitch(key, sit->second)).first->second;
}

bool NcclCommBuilder::built(const GroupPlacement& where) const {
  const Key key = key_of(where);
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.count(key) != 0;
}

void NcclCommBuilder::prepare(const std::vector<GroupPlacement>& placements, int threads) const {
  if (threads <= 1) return;
  // What is not built yet, each once, in the placements' order.
  std::vector<Key> keys;
  std::vector<SearchKey> skeys;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<Key> seen;
    std::set<SearchKey> seen_searches;
    for (const GroupPlacement& where : placements) {
      if (where.size <= 1) continue;
      Key key = key_of(where);
      if (cache_.count(key) != 0 || !seen.insert(key).second) continue;
      SearchKey skey{std::get<2>(key), std::get<0>(key) > 1};
      if (searches_.count(skey) == 0 && seen_searches.insert(skey).second) skeys.push_back(std::move(skey));
      keys.push_back(std::move(key));
    }
  }
  if (keys.size() < 2) return;  // nothing to share out
  std::vector<LocalSearch> found(skeys.size());
  run_in_parallel(skeys.size(), threads, [&](std::size_t i) { found[i] = search(skeys[i]); });
  std::vector<const LocalSearch*> inputs(keys.size());
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i < skeys.size(); ++i) searches_.emplace(skeys[i], std::move(found[i]));
    for (std::size_t i = 0; i < keys.size(); ++i)
      inputs[i] = &searches_.at(SearchKey{std::get<2>(keys[i]), std::get<0>(keys[i]) > 1});  // map nodes stay put
  }
  std::vector<std::shared_ptr<const NcclCommunicator>> stitched(keys.size());
  run_in_parallel(keys.size(), threads, [&](std::size_t i) { stitched[i] = stitch(keys[i], *inputs[i]); });
  std::lock_guard<std::mutex> lock(mutex_);
  for (std::size_t i = 0; i < keys.size(); ++i) cache_.emplace(keys[i], std::move(stitched[i]));
}

NcclTopology tuning_inputs(const NcclCommunicator& comm, const ClusterSpec& cluster, const NcclEnv& env) {
  NcclTopology t;
  t.nranks = comm.nranks;
  t.nnodes = std::max(1, comm.nnodes);
  t.ppn = static_cast<double>(comm.nranks) / t.nnodes;
  for (const auto& ranks : comm.node_ranks) t.max_per_node = std::max(t.max_per_node, static_cast<int>(ranks.size()));
  t.sm = tuning_sm(comm.sm);
  t.cc_index = cc_index_of(t.sm);
  t.net_overhead_us = env.net_overhead_us.value_or(comm.vendor == CpuVendor::Amd ? 2.0 : nccl::kNetOverheadIntel);
  t.cpu_x86 = comm.arch == CpuArch::X86;
  t.cpu_amd = t.cpu_x86 && comm.vendor == CpuVendor::Amd;
  t.ring = tuning_graph(comm.ring_graph, t.sm);
  t.tree = tuning_graph(comm.tree_graph, t.sm);
  t.nvls = tuning_graph(comm.nvls_graph, t.sm);
  t.collnet_chain = tuning_graph(comm.collnet_chain_graph, t.sm);
  t.collnet_direct = tuning_graph(comm.collnet_direct_graph, t.sm);
  apply_nic_sharing(t, comm, cluster);
  // CollNet needs the plugin (NCCL_COLLNET_ENABLE), ≥ 2 nodes (checked when the communicator was
  // built) and at most NCCL_MAX_DIRECT_ARITY + 1 = 8 local ranks; Direct also needs NVSwitch.
  t.collnet_supported = comm.collnet && t.max_per_node <= nccl::kMaxCollNetLocalRanks;
  t.collnet_direct_supported = t.collnet_supported && !comm.collnet_head_local.empty() && !comm.node_topology.empty() &&
                               comm.node_topology.front() && comm.node_topology.front()->nvswitch >= 0;
  t.collnet_heads = static_cast<int>(comm.collnet_head_local.size());
  t.tree_pattern_tree = comm.max_tree_pattern == static_cast<int>(GraphPattern::Tree);
  t.nvls_supported = env.nvls_enable != 0 && comm.nvls_graph.nchannels > 0 && comm.nvls_heads >= 2;
  t.ll128_supported = t.ring.ll128;
  t.pat_supported = env.pat_enable != 0 && t.nnodes > 1 && t.nnodes == t.nranks;
  t.comm_channels = std::max(1, comm.nchannels);
  t.nvls_channels = comm.nvls_channels;
  // Ring/Tree bandwidth scales with the channels the user's NCCL_MIN/MAX_NCHANNELS leave (NCCL 2.18's
  // time formula did the same: src/graph/tuning.cc ncclTopoGetAlgoTime).
  t.channel_bw_scale =
      comm.default_nchannels > 0 ? std::min(1.0, static_cast<double>(t.comm_channels) / comm.default_nchannels) : 1.0;
  t.ring_simple_threads =
      t.ring.bw_intra * t.ring.channels <= nccl::kPciBw ? nccl::kSimplePcieThreads : nccl::kMaxThreadsSimple;
  // Per-GPU bandwidths for the p2p estimate: the GPU's best NVLink/PCIe bandwidth, and what its NICs carry. A
  // remote peer gets channels on every NIC local to the GPU, their bandwidths summed until they reach the GPU's
  // own PCIe bandwidth to its CPU (ncclTopoComputeP2pChannels, nccl.md §7.3: 4 x 100G NICs behind a Gen5 x16 GPU
  // carry 48 GB/s, not one NIC's 12.5); GPUs that share NICs get their share of one.
  if (!comm.node_topology.empty() && comm.node_topology.front()) {
    const NodeTopology& node = *comm.node_topology.front();
    t.intra_bw_per_gpu = node.total_bw();
    if (!node.nets.empty() && !node.gpus.empty()) {
      const auto local = node.local_nets(0);
      double nics = 0, pcie = 0;  // the local NICs' paths summed; the GPU's best path to a CPU
      for (const int n : local) nics += node.gpu_to_net(0, n).bw;
      for (const int c : node.cpus) pcie = std::max(pcie, node.paths[node.gpus[0]][c].bw);
      const double one_nic = local.empty() ? 0 : node.gpu_to_net(0, local.front()).bw;
      if (pcie > 0) nics = std::min(nics, std::max(pcie, one_nic));  // never below one NIC's own path
      const double share = cluster.gpus_per_node > 0
                               ? std::min(1.0, static_cast<double>(cluster.nics_per_node) / cluster.gpus_per_node)
                               : 1.0;
      t.net_bw_per_gpu = nics * share;
    }
  }
  if (t.nnodes > 1 && t.net_bw_per_gpu <= 0)
    throw Error("collective: a group spans " + std::to_string(t.nnodes) +
                " nodes but the cluster has no NICs (cluster.nics_per_node / cluster.nic_gbps)");
  return t;
}

}  // namespace trainsim
