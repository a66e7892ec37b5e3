// Protocol (and algorithm) choice against NCCL 2.30's own rules on DGX-A100, DGX-H100 and B200 nodes,
// for AllReduce, AllGather and Broadcast at 1 KiB .. 1 GiB, one node and four nodes.
//
// The expected tables were computed outside trainsim by evaluating NCCL 2.30.7's cost model
// (src/graph/tuning.cc: ncclTopoTuneModel's bandwidth/latency formulas and tables, the LL128 enable
// block, and enqueue.cc's per-call time with the tree correction factor and ring plateau) on the
// graphs NCCL's search returns for these nodes; the graph inputs are asserted first, so a change of
// search result shows up as such and not as a silent protocol change. LL128 on A100 is the case
// trainsim used to get wrong: NCCL enables it before Hopper only when a graph's inter-node path is
// at most PXB, and a DGX-A100 pairs two GPUs with two NICs behind one PCIe switch (PXB), so rings
// close on one NIC without PXN and mid-size collectives run LL128.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "collective/nccl/nccl_comm_builder.hpp"
#include "collective/nccl/nccl_communicator.hpp"
#include "collective/nccl/nccl_tuning.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

ClusterSpec cluster_of(const std::string& gpu, int nodes) {
  if (gpu == "A100") return testing::a100_cluster(nodes);  // DGX-A100: NVSwitch 300 GB/s, 8 x 200G HDR
  ClusterSpec c = testing::h100_cluster(nodes);            // DGX-H100: NVSwitch 450 GB/s, 8 x 400G NDR
  if (gpu == "B200") {
    c.gpu = testing::b200_gpu();
    c.scale_up.bandwidth_GBps = 900;
  }
  return c;
}

struct Case {
  std::string gpu;
  int nodes;
  NcclFunction function;
  // Algorithm/protocol at 1 KiB, 4 KiB, ..., 1 GiB (x4 each).
  std::vector<std::string> expected;
};

std::string choice_at(const NcclTuningModel& m, NcclFunction f, double bytes) {
  const NcclChoice c = m.choose(f, bytes);
  return std::string(to_string(c.algorithm)) + "/" + to_string(c.protocol);
}

// The graphs the expected tables were computed on (channels x per-channel GB/s, LL128 enabled).
TEST(NcclProtocolChoice, GraphInputsOfTheTables) {
  const NcclAnalyticalModel a1(cluster_of("A100", 1), {}), a4(cluster_of("A100", 4), {});
  const auto t1 = a1.tuning(GroupPlacement::of(testing::first_ranks(8), cluster_of("A100", 1)))->topology();
  EXPECT_EQ(t1.ring.channels, 12);
  EXPECT_DOUBLE_EQ(t1.ring.bw_intra, 20);
  EXPECT_TRUE(t1.ring.same_channels);
  const auto t4 = a4.tuning(GroupPlacement::of(testing::first_ranks(32), cluster_of("A100", 4)))->topology();
  EXPECT_EQ(t4.ring.channels, 8);
  EXPECT_DOUBLE_EQ(t4.ring.bw_inter, 24);
  EXPECT_EQ(t4.tree.channels, 8);
  EXPECT_DOUBLE_EQ(t4.tree.bw_intra, 30);
  EXPECT_DOUBLE_EQ(t4.tree.bw_inter, 24);
  EXPECT_TRUE(t4.ring.ll128);
  EXPECT_TRUE(t4.tree.ll128);
  const NcclAnalyticalModel b4(cluster_of("B200", 4), {});
  const auto tb = b4.tuning(GroupPlacement::of(testing::first_ranks(32), cluster_of("B200", 4)))->topology();
  EXPECT_DOUBLE_EQ(tb.tree.bw_intra, 96);
  EXPECT_EQ(tb.nvls.channels, 8);
  EXPECT_TRUE(tb.tree_pattern_tree);
}

// DGX-A100: both GPUs of a pair reach both NICs of the pair through two PCIe bridges (PXB), as
// `nvidia-smi topo -m` shows on a DGX A100; the ring and tree graphs then stay at PXB.
TEST(NcclProtocolChoice, DgxA100NicsArePxbAndGraphsStayBelowPxn) {
  const ClusterSpec c = cluster_of("A100", 4);
  const NcclAnalyticalModel m(c, {});
  const auto comm = m.communicator(GroupPlacement::of(testing::first_ranks(32), c));
  EXPECT_EQ(comm->ring_graph.type_inter, PathType::Pxb);
  EXPECT_EQ(comm->tree_graph.type_inter, PathType::Pxb);
  EXPECT_EQ(comm->ring_graph.type_intra, PathType::Nvl);
  const NodeTopology& node = *comm->node_topology.front();
  ASSERT_GE(node.nets.size(), 2u);
  EXPECT_EQ(node.gpu_to_net(0, 0).type, PathType::Pxb);
  EXPECT_EQ(node.gpu_to_net(1, 0).type, PathType::Pxb);  // the pair's other GPU, same NIC
  // With PXN disabled nothing changes on A100: the rings never needed it.
  const NcclAnalyticalModel no_pxn(c, {{"NCCL_PXN_DISABLE", "1"}});
  EXPECT_EQ(no_pxn.communicator(GroupPlacement::of(testing::first_ranks(32), c))->ring_graph.type_inter, PathType::Pxb);
}

// tuning.cc's LL128 block, per graph: typeIntra <= NVB on every architecture; typeInter <= PXN from SM90
// (NCCL_LL128_C2C=1), <= PXB before; SM >= 70.
TEST(NcclProtocolChoice, Ll128EnableRule) {
  EXPECT_TRUE(ll128_enabled_by_default(PathType::Nvl, PathType::Pxb, 80));
  EXPECT_FALSE(ll128_enabled_by_default(PathType::Nvl, PathType::Pxn, 80));  // "PxN can encapsulate PxB"
  EXPECT_TRUE(ll128_enabled_by_default(PathType::Nvl, PathType::Pxn, 90));
  EXPECT_TRUE(ll128_enabled_by_default(PathType::Nvl, PathType::Pxn, 100));
  EXPECT_FALSE(ll128_enabled_by_default(PathType::Nvl, PathType::Phb, 90));
  EXPECT_TRUE(ll128_enabled_by_default(PathType::Nvb, PathType::Pix, 80));
  EXPECT_TRUE(ll128_enabled_by_default(PathType::Loc, PathType::Pxb, 80));   // one GPU per node
  EXPECT_FALSE(ll128_enabled_by_default(PathType::Pxb, PathType::Pix, 80));  // PCIe between GPUs: no LL128
  EXPECT_FALSE(ll128_enabled_by_default(PathType::Pix, PathType::Pix, 90));
  EXPECT_FALSE(ll128_enabled_by_default(PathType::Nvl, PathType::Pix, 60));
}

// A PCIe-only A100 node: no LL128 on any graph (NCCL requires NVLink inside the node on every arch).
TEST(NcclProtocolChoice, PcieA100NodeHasNoLl128) {
  ClusterSpec c = cluster_of("A100", 1);
  c.scale_up = {ScaleUpKind::PCIe, 32, 8};
  const NcclAnalyticalModel m(c, {});
  const auto tm = m.tuning(GroupPlacement::of(testing::first_ranks(8), c));
  EXPECT_FALSE(tm->topology().ring.ll128);
  for (double b = 1 << 10; b <= (1 << 30); b *= 4)
    EXPECT_NE(tm->choose(NcclFunction::AllReduce, b).protocol, NcclProtocol::LL128);
}

TEST(NcclProtocolChoice, MatchesNcclRulesOnA100H100AndB200Nodes) {
  const std::vector<Case> cases = {
      {"A100",
       1,
       NcclFunction::AllReduce,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      {"A100",
       1,
       NcclFunction::AllGather,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/Simple", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      // Broadcast on one NVSwitch node: sameChannels makes Ring/Simple's latency one hop, below LL128's.
      {"A100",
       1,
       NcclFunction::Broadcast,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/Simple", "Ring/Simple", "Ring/Simple",
        "Ring/Simple", "Ring/Simple", "Ring/Simple"}},
      {"A100",
       4,
       NcclFunction::AllReduce,
       {"Tree/LL", "Tree/LL", "Tree/LL", "Tree/LL", "Tree/LL128", "Tree/LL128", "Tree/LL128", "Tree/LL128",
        "Ring/LL128", "Ring/Simple", "Ring/Simple"}},
      {"A100",
       4,
       NcclFunction::AllGather,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/LL128", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      {"A100",
       4,
       NcclFunction::Broadcast,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/LL128",
        "Ring/LL128", "Ring/Simple"}},
      {"H100",
       1,
       NcclFunction::AllReduce,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "NVLS/Simple", "NVLS/Simple", "NVLS/Simple",
        "NVLS/Simple", "NVLS/Simple"}},
      {"H100",
       1,
       NcclFunction::AllGather,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      {"H100",
       1,
       NcclFunction::Broadcast,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/Simple", "Ring/Simple", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      {"H100",
       4,
       NcclFunction::AllReduce,
       {"Tree/LL", "Tree/LL", "Tree/LL", "Tree/LL", "Tree/LL128", "Tree/LL128", "Tree/LL128", "NVLSTree/Simple",
        "NVLSTree/Simple", "NVLSTree/Simple", "Ring/Simple"}},
      {"H100",
       4,
       NcclFunction::AllGather,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/LL128", "Ring/LL128",
        "Ring/Simple", "Ring/Simple"}},
      {"H100",
       4,
       NcclFunction::Broadcast,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/LL128",
        "Ring/LL128", "Ring/Simple"}},
      {"B200",
       1,
       NcclFunction::AllReduce,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "NVLS/Simple", "NVLS/Simple", "NVLS/Simple",
        "NVLS/Simple", "NVLS/Simple"}},
      {"B200",
       1,
       NcclFunction::AllGather,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      {"B200",
       1,
       NcclFunction::Broadcast,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/Simple", "Ring/Simple", "Ring/Simple",
        "Ring/Simple", "Ring/Simple"}},
      {"B200",
       4,
       NcclFunction::AllReduce,
       {"Tree/LL", "Tree/LL", "Tree/LL", "Tree/LL", "Tree/LL128", "Tree/LL128", "NVLSTree/Simple", "NVLSTree/Simple",
        "NVLSTree/Simple", "NVLSTree/Simple", "NVLSTree/Simple"}},
      {"B200",
       4,
       NcclFunction::AllGather,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/LL128", "Ring/LL128",
        "Ring/Simple", "Ring/Simple"}},
      {"B200",
       4,
       NcclFunction::Broadcast,
       {"Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL", "Ring/LL128", "Ring/LL128", "Ring/LL128",
        "Ring/LL128", "Ring/Simple"}},
  };
  for (const Case& k : cases) {
    const ClusterSpec c = cluster_of(k.gpu, k.nodes);
    const NcclAnalyticalModel m(c, {});
    const auto tm = m.tuning(GroupPlacement::of(testing::first_ranks(c.num_gpus), c));
    double bytes = 1 << 10;
    for (const std::string& want : k.expected) {
      EXPECT_EQ(choice_at(*tm, k.function, bytes), want)
          << k.gpu << " x" << k.nodes << " nodes, " << to_string(k.function) << ", " << bytes << " B";
      bytes *= 4;
    }
  }
}

}  // namespace
}  // namespace trainsim
