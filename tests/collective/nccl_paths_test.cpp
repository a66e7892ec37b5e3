// Paths, P2P/PXN/GDR rules and NIC choice (NCCL src/graph/paths.cc ncclTopoComputePaths, ncclTopoGetLocalNet),
// against the numbers NCCL 2.30.7's code gives for the DGX-H100 node.
#include <gtest/gtest.h>

#include <string>

#include "collective/nccl/nccl_node_topology.hpp"
#include "core/error.hpp"
#include "test_clusters.hpp"
#include "test_node_topologies.hpp"

namespace trainsim {
namespace {

using testing::dgx_h100_node;

// NCCL's result: GPU i -> NIC i PIX 48 (PCIe Gen5 below the 50 GB/s NIC); GPU i -> NIC j PXN 48 through GPU j;
// GPU <-> GPU NVL 370.8; maxBw 48, totalBw 370.8.
TEST(NcclPaths, DgxH100MatchesSection92) {
  const NodeTopology t = dgx_h100_node();
  for (int i = 0; i < 8; ++i) {
    for (int j = 0; j < 8; ++j) {
      const TopoPath& p = t.gpu_to_net(i, j);
      EXPECT_EQ(p.type, i == j ? PathType::Pix : PathType::Pxn) << i << "->" << j;
      EXPECT_DOUBLE_EQ(p.bw, 48.0);
      if (i != j) {
        // The PXN path crosses GPU j: GPU i -> NVS -> GPU j -> switch -> NIC -> NET.
        ASSERT_EQ(p.hops(), 5);
        const auto& [from, l] = p.links[1];
        EXPECT_EQ(t.vertices[static_cast<std::size_t>(from)].links[static_cast<std::size_t>(l)].to,
                  t.gpus[static_cast<std::size_t>(j)]);
        EXPECT_NEAR(t.gpu_to_gpu(i, j).bw, 370.8, 1e-9);
        EXPECT_EQ(t.gpu_to_gpu(i, j).type, PathType::Nvl);
      }
      // Receives stay direct (only GPU -> NIC goes through PXN).
      EXPECT_NE(t.net_to_gpu(j, i).type, PathType::Pxn);
    }
  }
  EXPECT_DOUBLE_EQ(t.max_bw(true), 48.0);
  EXPECT_NEAR(t.max_bw(false), 370.8, 1e-9);
  EXPECT_NEAR(t.total_bw(), 370.8, 1e-9);
  // Without PXN the far NICs are reached through the host bridge (same socket) or across sockets.
  const NodeTopology no_pxn = dgx_h100_node(PathOptions{.pxn_disable = true});
  EXPECT_EQ(no_pxn.gpu_to_net(0, 1).type, PathType::Phb);
  EXPECT_DOUBLE_EQ(no_pxn.gpu_to_net(0, 1).bw, 48.0);
  EXPECT_EQ(no_pxn.gpu_to_net(0, 5).type, PathType::Sys);
  EXPECT_DOUBLE_EQ(no_pxn.gpu_to_net(0, 5).bw, 22.0);  // SRP inter-socket
}

// The generated 8×H100 400G NVSwitch node gives the same paths as the hand-written DGX file.
TEST(NcclPaths, GeneratedH100NodeEqualsTheXml) {
  const NodeTopology x = dgx_h100_node();
  NodeTopology g = generate_node_topology(testing::h100_cluster(2));
  compute_paths(g, {});
  for (int a = 0; a < 8; ++a) {
    for (int b = 0; b < 8; ++b) {
      EXPECT_EQ(g.gpu_to_gpu(a, b).type, x.gpu_to_gpu(a, b).type);
      EXPECT_DOUBLE_EQ(g.gpu_to_gpu(a, b).bw, x.gpu_to_gpu(a, b).bw);
      EXPECT_EQ(g.gpu_to_gpu(a, b).hops(), x.gpu_to_gpu(a, b).hops());
      EXPECT_EQ(g.gpu_to_net(a, b).type, x.gpu_to_net(a, b).type);
      EXPECT_DOUBLE_EQ(g.gpu_to_net(a, b).bw, x.gpu_to_net(a, b).bw);
      EXPECT_EQ(g.net_to_gpu(a, b).type, x.net_to_gpu(a, b).type);
      EXPECT_DOUBLE_EQ(g.net_to_gpu(a, b).bw, x.net_to_gpu(a, b).bw);
    }
  }
  EXPECT_DOUBLE_EQ(g.max_bw(true), x.max_bw(true));
  EXPECT_DOUBLE_EQ(g.total_bw(), x.total_bw());
}

// ncclTopoComputePaths P2P level: NCCL_P2P_DISABLE (level LOC) sends GPU<->GPU through the CPU even over NVLink.
TEST(NcclPaths, P2pLevelReroutesThroughTheCpu) {
  const NodeTopology t = dgx_h100_node(PathOptions{.p2p_level = PathType::Loc});
  EXPECT_EQ(t.gpu_to_gpu(0, 1).type, PathType::Phb);
  EXPECT_DOUBLE_EQ(t.gpu_to_gpu(0, 1).bw, 48.0);
  EXPECT_EQ(t.gpu_to_gpu(0, 7).type, PathType::Sys);
  EXPECT_EQ(t.gpu_to_gpu(3, 3).type, PathType::Loc);
  // PCIe-only node: GPUs under different switches are PHB (> PXB), so SHM through the CPU by default.
  ClusterSpec c = testing::h100_cluster(1);
  c.scale_up.kind = ScaleUpKind::PCIe;
  NodeTopology p = generate_node_topology(c);
  compute_paths(p, {});
  EXPECT_EQ(p.gpu_to_gpu(0, 1).type, PathType::Phb);
  EXPECT_EQ(p.gpu_to_gpu(0, 6).type, PathType::Sys);
  EXPECT_DOUBLE_EQ(p.gpu_to_gpu(0, 6).bw, 22.0);
}

// GDR off (NCCL_NET_GDR_LEVEL=LOC): GPU <-> NIC traffic bounces through the GPU's CPU.
TEST(NcclPaths, NoGdrGoesThroughHostMemory) {
  const NodeTopology t = dgx_h100_node(PathOptions{.gdr_level = PathType::Loc, .pxn_disable = true});
  EXPECT_EQ(t.gpu_to_net(0, 0).type, PathType::Phb);
  EXPECT_EQ(t.net_to_gpu(0, 0).type, PathType::Phb);
}

// ncclTopoGetLocalNet: rail-optimised 1:1 -> every channel on the GPU's own NIC; 2 NICs per GPU alternate; with one
// NIC per two GPUs the NIC-less GPU reaches every NIC by PXN and spreads its channels over them.
TEST(NcclPaths, NicChoicePerGpuAndChannel) {
  const NodeTopology t = dgx_h100_node();
  for (int g = 0; g < 8; ++g) {
    EXPECT_EQ(t.local_nets(g), std::vector<int>{g});
    for (int c = 0; c < 4; ++c) EXPECT_EQ(t.net_for_channel(g, c), g);
    EXPECT_EQ(t.local_gpu_of_net(g), g);
  }
  ClusterSpec two = testing::h100_cluster(1);
  two.nics_per_node = 16;
  NodeTopology t2 = generate_node_topology(two);
  compute_paths(t2, {});
  EXPECT_EQ(t2.local_nets(3), (std::vector<int>{6, 7}));
  EXPECT_EQ(t2.net_for_channel(3, 0), 6);  // start: dev 3 mod 1 local GPU = 0, then + channel mod 2
  EXPECT_EQ(t2.net_for_channel(3, 1), 7);
  EXPECT_EQ(t2.net_for_channel(3, 2), 6);
  ClusterSpec half = testing::h100_cluster(1);
  half.nics_per_node = 4;
  NodeTopology t4 = generate_node_topology(half);
  compute_paths(t4, {});
  EXPECT_EQ(t4.gpu_to_net(2, 1).type, PathType::Pix);  // NIC 1 sits under GPU 2's switch
  EXPECT_EQ(t4.gpu_to_net(3, 1).type, PathType::Pxn);
  EXPECT_EQ(t4.net_for_channel(2, 0), 1);
  EXPECT_EQ(t4.local_nets(3).size(), 4u);
  EXPECT_EQ(t4.local_gpu_of_net(1), 2);
}

TEST(NcclPaths, BandwidthConstants) {
  EXPECT_DOUBLE_EQ(nccl_nvlink_bw_per_link(90), 20.6);
  EXPECT_DOUBLE_EQ(nccl_nvlink_bw_per_link(100), 40.1);
  EXPECT_DOUBLE_EQ(nccl_nvlink_bw_per_link(86), 12.0);
  EXPECT_DOUBLE_EQ(nccl_nvlink_bw_per_link(80), 20.0);
  EXPECT_DOUBLE_EQ(nccl_nvlink_bw_per_link(60), 18.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_bw(32, 16), 48.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_bw(16, 16), 24.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_bw(8, 16), 12.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_bw(64, 16), 96.0);
  EXPECT_DOUBLE_EQ(nccl_pcie_bw(16, 0), 24.0);  // width 0 counts as x16
  EXPECT_STREQ(to_string(PathType::Pxn), "PXN");
  EXPECT_STREQ(to_string(TopoKind::NvSwitch), "NVS");
}

// A communicator's GPUs on the node, renumbered in the given order; NICs stay.
TEST(NcclPaths, RestrictToGpus) {
  NodeTopology full = load_nccl_topology_file(testing::dgx_h100_xml(), "k");
  NodeTopology t = restrict_to_gpus(full, {5, 2});
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.nets.size(), 8u);
  EXPECT_EQ(t.vertices[static_cast<std::size_t>(t.gpus[0])].dev, 5);
  EXPECT_EQ(t.vertices[static_cast<std::size_t>(t.gpus[1])].dev, 2);
  compute_paths(t, {});
  EXPECT_EQ(t.gpu_to_net(0, 5).type, PathType::Pix);
  EXPECT_EQ(t.gpu_to_net(0, 2).type, PathType::Pxn);  // through GPU dev 2, still in the communicator
  EXPECT_EQ(t.gpu_to_net(0, 3).type, PathType::Sys);  // dev 3 is not: no PXN relay for NIC 3
  EXPECT_EQ(t.gpu_to_gpu(0, 1).type, PathType::Nvl);
  EXPECT_THROW(restrict_to_gpus(full, {8}), Error);
  EXPECT_THROW(restrict_to_gpus(full, {1, 1}), Error);
}

// Paths are computed on the trimmed system (only the communicator's GPUs, every NIC, ncclTopoTrimSystem): a NIC
// whose local GPU is not in the communicator cannot be reached by PXN through it, so GPU dev 0 goes
// GPU -> PCIe switch -> CPU -> PCIe switch -> NIC 1 (PHB, 48 = the Gen5 x16 links) and to NIC 5 on
// the other socket over SYS; its only local NIC (max bw, then lowest type) stays its own PIX NIC 0,
// and NIC 1 has no local GPU (ncclTopoGetLocalGpu -> -1).
TEST(NcclPaths, SubsetWithoutTheNicsOwnGpu) {
  NodeTopology t = restrict_to_gpus(generate_node_topology(testing::h100_cluster(1)), {0, 2, 4, 6});
  compute_paths(t, {});
  EXPECT_EQ(t.gpu_to_net(0, 0).type, PathType::Pix);
  EXPECT_EQ(t.gpu_to_net(0, 1).type, PathType::Phb);
  EXPECT_DOUBLE_EQ(t.gpu_to_net(0, 1).bw, 48.0);
  EXPECT_EQ(t.gpu_to_net(0, 2).type, PathType::Pxn);  // via kept GPU dev 2
  EXPECT_EQ(t.gpu_to_net(0, 5).type, PathType::Sys);
  EXPECT_EQ(t.local_nets(0), std::vector<int>{0});
  EXPECT_EQ(t.local_nets(1), std::vector<int>{2});  // GPU dev 2, renumbered 1
  for (int c = 0; c < 4; ++c) EXPECT_EQ(t.net_for_channel(3, c), 6);
  EXPECT_EQ(t.local_gpu_of_net(1), -1);
  EXPECT_EQ(t.local_gpu_of_net(4), 2);
}

}  // namespace
}  // namespace trainsim
