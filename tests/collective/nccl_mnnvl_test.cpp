// An NVLink domain spanning hosts (MNNVL, GB200 NVL72) is one NCCL node, whose topology NCCL fuses from the ranks
// of the communicator (src/graph/topo.cc, ncclTopoGetSystem): a communicator sees the NICs of the hosts it has
// ranks on, not every NIC of the domain. The flows still name NICs as the network layer numbers the domain's.
#include <gtest/gtest.h>

#include <set>

#include "collective/flows/nccl_flows.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "collective/nccl/nccl_comm_builder.hpp"
#include "collective/nccl/nccl_graph_search.hpp"
#include "collective/nccl/nccl_search_cache.hpp"
#include "core/error.hpp"
#include "hardware/gpu_catalog.hpp"
#include "search_graph_expect.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

// Two 16-GPU NVLink domains of 4 hosts each (4 GPUs and 4 NICs per host).
ClusterSpec two_domains() {
  ClusterSpec c = testing::h100_cluster(1);
  c.gpu = testing::b200_gpu();
  c.gpus_per_node = 4;
  c.num_gpus = 32;
  c.nics_per_node = 4;
  c.scale_up = {ScaleUpKind::NVSwitch, 900, 16};
  return c;
}

TEST(NcclMnnvl, CommunicatorSeesTheNicsOfItsHostsOnly) {
  const ClusterSpec c = two_domains();
  const NcclCommBuilder builder(c, NcclEnv{});
  ASSERT_EQ(builder.node().nets.size(), 16u);  // the domain's NCCL node: 4 hosts x 4 NICs
  // Local GPUs 1 and 6 of each domain: hosts 0 and 1, so NICs 0-7.
  const auto comm = builder.communicator(GroupPlacement::of({1, 6, 17, 22}, c));
  ASSERT_EQ(comm->nnodes, 2);
  const NodeTopology& node = *comm->node_topology.front();
  ASSERT_EQ(node.nets.size(), 8u);
  for (std::size_t n = 0; n < node.nets.size(); ++n) EXPECT_EQ(node.original_net(static_cast<int>(n)), n);
  // One host's GPUs: its 4 NICs.
  const auto one_host = builder.communicator(GroupPlacement::of({8, 9, 24, 25}, c));
  const NodeTopology& host2 = *one_host->node_topology.front();
  ASSERT_EQ(host2.nets.size(), 4u);
  for (std::size_t n = 0; n < 4; ++n) EXPECT_EQ(host2.original_net(static_cast<int>(n)), 8 + static_cast<int>(n));
}

// Every network flow leaves through a NIC of the sending GPU's host (or of its PXN relay's) and arrives at one of
// the receiving GPU's host, numbered domain-wide: host h owns NICs 4h .. 4h + 3.
TEST(NcclMnnvl, FlowsUseTheHostsOwnNicsNumberedDomainWide) {
  const ClusterSpec c = two_domains();
  const NcclCommBuilder builder(c, NcclEnv{});
  const std::vector<int> members{9, 14, 25, 30};  // hosts 2 and 3 of each domain
  const auto comm = builder.communicator(GroupPlacement::of(members, c));
  const auto host_of = [&](int comm_rank) { return members[static_cast<std::size_t>(comm_rank)] % 16 / 4; };
  std::set<int> nics;
  for (const CollKind kind : {CollKind::AllReduce, CollKind::AllGather, CollKind::AllToAll}) {
    const FlowDag dag = generate_collective_flows(
        *comm, kind, 64 << 20, CallPlan{NcclAlgorithm::Ring, NcclProtocol::Simple, comm->nchannels}, FlowOptions{});
    int network = 0;
    for (const Flow& f : dag.flows) {
      if (f.link != LinkClass::Network) continue;
      ++network;
      const int sender = f.relay >= 0 ? f.relay : f.src.index;
      EXPECT_EQ(f.src_net / 4, host_of(sender)) << "NIC " << f.src_net << " of rank " << sender;
      EXPECT_EQ(f.dst_net / 4, host_of(f.dst.index)) << "NIC " << f.dst_net << " of rank " << f.dst.index;
      nics.insert(f.src_net);
    }
    EXPECT_GT(network, 0);
  }
  EXPECT_GE(*nics.begin(), 8);
  EXPECT_LE(*nics.rbegin(), 15);
}

TEST(NcclMnnvl, RestrictingNetsKeepsTheRestAndChecksItsInput) {
  ClusterSpec c = two_domains();
  c.gpus_per_node = 16;  // the domain as NCCL's node
  c.nics_per_node = 16;
  const NodeTopology node = generate_node_topology(c);
  std::vector<bool> keep(16, false);
  keep[3] = keep[12] = true;
  NodeTopology r = restrict_to_gpus(node, {3, 12}, keep);
  ASSERT_EQ(r.nets.size(), 2u);
  EXPECT_EQ(r.original_net(0), 3);
  EXPECT_EQ(r.original_net(1), 12);
  EXPECT_EQ(r.original_net(-1), -1);
  compute_paths(r, PathOptions{});
  EXPECT_EQ(r.gpu_to_net(0, 0).type, PathType::Pix);  // GPU 3's own NIC, under its PCIe switch
  EXPECT_EQ(r.gpu_to_net(1, 1).type, PathType::Pix);
  EXPECT_THROW(restrict_to_gpus(node, {0}, std::vector<bool>(3, true)), InternalError);
  const NodeTopology all = restrict_to_gpus(node, {0, 1});
  EXPECT_EQ(all.nets.size(), 16u);
  EXPECT_EQ(all.original_net(7), 7);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// The data-parallel copies of a job on an NVLink domain see the same shape on other hosts: the same GPU of each
// host, other NICs and bus ids. What their searches read is the same (canonical_inputs), so the memo searches one
// and serves the others; the graphs are the search's own for each, as they name local ranks and NET indices only.
TEST(NcclMnnvl, CopiesOnOtherHostsOfTheDomainReadTheSameSearchInputs) {
  const ClusterSpec c = two_domains();
  const NcclCommBuilder builder(c, NcclEnv{});
  const auto first = builder.communicator(GroupPlacement::of({0, 4, 16, 20}, c));    // hosts 0 and 1
  const auto second = builder.communicator(GroupPlacement::of({8, 12, 24, 28}, c));  // hosts 2 and 3
  const auto other_gpu = builder.communicator(GroupPlacement::of({1, 5, 17, 21}, c));
  const NodeTopology& a = *first->node_topology.front();
  const NodeTopology& b = *second->node_topology.front();
  ASSERT_EQ(a.nets.size(), 8u);
  ASSERT_EQ(b.nets.size(), 8u);
  EXPECT_EQ(a.original_net(0), 0);  // other NICs: the nodes are not the same
  EXPECT_EQ(b.original_net(0), 8);
  SearchOptions multi;
  multi.multi_node = true;
  const CanonicalSearchInputs in_a = NodeGraphSearch(a, multi).canonical_inputs();
  const CanonicalSearchInputs in_b = NodeGraphSearch(b, multi).canonical_inputs();
  EXPECT_EQ(in_a.words, in_b.words);
  EXPECT_EQ(in_a.values, in_b.values);
  EXPECT_FALSE(in_a.values.empty());  // a multi-node search's NET bandwidths are matched apart
  const NodeGraphs direct_a = search_node_graphs(a, multi, true), direct_b = search_node_graphs(b, multi, true);
  testing::expect_same_graph(direct_a.ring, direct_b.ring);
  testing::expect_same_graph(direct_a.tree, direct_b.tree);
  // Through the memo: the first searches, the second is served the same graphs.
  testing::expect_same_graph(cached_search_node_graphs(a, multi, true, false).ring, direct_a.ring);
  testing::expect_same_graph(cached_search_node_graphs(b, multi, true, false).ring, direct_b.ring);
  // The second GPU of each host starts its channels on another NIC (ncclTopoGetLocalNet): other inputs.
  const NodeTopology& o = *other_gpu->node_topology.front();
  EXPECT_NE(NodeGraphSearch(o, multi).canonical_inputs().words, in_a.words);
  // A node that differs in a link's bandwidth reads differently.
  NodeTopology slower = b;
  for (TopoVertex& v : slower.vertices)
    for (TopoLink& l : v.links)
      if (l.type == TopoLinkType::Nvl) l.bw /= 2;
  EXPECT_NE(NodeGraphSearch(slower, multi).canonical_inputs().words, in_a.words);
}

// NVLS all-gather and reduce-scatter take one NVLS head per local rank, so NCCL skips them with more than
// NCCL_MAX_NVLS_ARITY (32) local ranks (enqueue.cc topoGetAlgoInfo; nccl.md §4.1 step 1): in a GB200 NVL72 rack a
// 64-rank group gathers with Ring, a 32-rank one may use NVLS; all-reduce keeps NVLS at 64.
TEST(NcclMnnvl, NoNvlsAllGatherOrReduceScatterBeyond32LocalRanks) {
  ClusterSpec c = two_domains();
  c.num_gpus = 72;
  c.scale_up = {ScaleUpKind::NVSwitch, 900, 72};
  const NcclAnalyticalModel m(c, {});
  const auto uses_nvls = [&](int ranks, NcclFunction f) {
    const auto tuning = m.tuning(GroupPlacement::of(testing::first_ranks(ranks), c));
    for (double bytes = 1 << 20; bytes <= double(1 << 30); bytes *= 4)
      if (tuning->choose(f, bytes).algorithm == NcclAlgorithm::NVLS) return true;
    return false;
  };
  EXPECT_TRUE(uses_nvls(32, NcclFunction::AllGather));
  EXPECT_TRUE(uses_nvls(32, NcclFunction::ReduceScatter));
  EXPECT_FALSE(uses_nvls(64, NcclFunction::AllGather));
  EXPECT_FALSE(uses_nvls(64, NcclFunction::ReduceScatter));
  EXPECT_TRUE(uses_nvls(64, NcclFunction::AllReduce));
}

// The host CPU decides two entries of NCCL's tuning (nccl.md §5.1, §5.4): NVLSTree's bandwidth gets the tree
// correction factor only with x86 CPUs on SM >= 100, so a Grace-hosted GB200 keeps its full NVLSTree bandwidth; and
// across nodes the LL bandwidth cap is the AMD row where the hosts are AMD EPYC. The catalog's GB200 and GB300 say
// `host_cpu: grace`, which the generated NCCL topology writes as an arm64 CPU.
TEST(NcclMnnvl, HostCpuDecidesNvlsTreeCorrectionAndLlCap) {
  ClusterSpec c = two_domains();
  const auto tuning_with = [&](const std::string& host) {
    c.gpu.host_cpu = host;
    const NcclAnalyticalModel m(c, {});
    return m.tuning(GroupPlacement::of(testing::first_ranks(32), c));
  };
  const auto x86 = tuning_with(""), grace = tuning_with("grace"), amd = tuning_with("amd");
  EXPECT_TRUE(x86->topology().cpu_x86);
  EXPECT_FALSE(grace->topology().cpu_x86);
  EXPECT_TRUE(amd->topology().cpu_amd);
  const double mib16 = 16.0 * (1 << 20);
  const auto nvls_tree = [&](const auto& t) {
    return *t->time_us(NcclFunction::AllReduce, NcclAlgorithm::NVLSTree, NcclProtocol::Simple, mib16);
  };
  EXPECT_LT(nvls_tree(grace), nvls_tree(x86) * 0.97);  // the correction factor at 16 MiB is below 1
  // LL across two nodes: Intel's cap is 39 GB/s, AMD's 22.5.
  EXPECT_LT(amd->entry(NcclFunction::AllGather, NcclAlgorithm::Ring, NcclProtocol::LL).algbw_GBps,
            x86->entry(NcclFunction::AllGather, NcclAlgorithm::Ring, NcclProtocol::LL).algbw_GBps);
  EXPECT_EQ(GpuCatalog::builtin().find("GB200")->host_cpu, "grace");
  EXPECT_EQ(GpuCatalog::builtin().find("GB300")->host_cpu, "grace");
  EXPECT_EQ(GpuCatalog::builtin().find("H100-SXM")->host_cpu, "");
}

}  // namespace
}  // namespace trainsim
