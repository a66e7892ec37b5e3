// What the tuning model reads from a communicator built by NCCL's init path (generated node,
// paths, search, stitching): the ring/NVLS search results NCCL reports (NCCL_DEBUG_SUBSYS=GRAPH output of
// ncclTopoCompute and ncclTopoPostset) for the shapes groups take in training.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_comm_builder.hpp"
#include "collective/nccl/nccl_env.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

NcclTopology topo_of(const ClusterSpec& c, const std::vector<int>& ranks, const NcclEnv& env = NcclEnv{}) {
  const NcclCommBuilder builder(c, env);
  return tuning_inputs(*builder.communicator(GroupPlacement::of(ranks, c)), c, env);
}

// NCCL: 18 NVLinks × 20.6 = 370.8 (H100), 12 × 20 = 240 (A100), 18 × 40.1 = 721.8 (B200) (topo.h):
// the generated node's GPU -> NVSwitch bandwidth as NCCL sums its links.
TEST(NcclTopology, NvlinkBandwidthAsNcclCountsIt) {
  EXPECT_NEAR(generate_node_topology(testing::h100_cluster(1)).total_bw(), 370.8, 1e-9);
  EXPECT_NEAR(generate_node_topology(testing::a100_cluster(1)).total_bw(), 240.0, 1e-9);
  ClusterSpec b = testing::h100_cluster(1);
  b.gpu = testing::b200_gpu();
  b.scale_up.bandwidth_GBps = 900;
  EXPECT_NEAR(generate_node_topology(b).total_bw(), 721.8, 1e-9);
}

// GPU->NIC: 400G NIC = 50 GB/s behind PCIe Gen5 48 -> 48 (NCCL's result); A100 200G = 25 behind Gen4 24 -> 24.
TEST(NcclTopology, NicBandwidthCappedByPcie) {
  auto nic_bw = [](const ClusterSpec& c) {
    NodeTopology node = generate_node_topology(c);
    compute_paths(node, PathOptions{});
    return node.gpu_to_net(0, node.local_nets(0).front()).bw;
  };
  EXPECT_DOUBLE_EQ(nic_bw(testing::h100_cluster(2)), 48.0);
  EXPECT_DOUBLE_EQ(nic_bw(testing::a100_cluster(2)), 24.0);
  ClusterSpec slow = testing::h100_cluster(2);
  slow.nic_gbps = 200;
  EXPECT_DOUBLE_EQ(nic_bw(slow), 25.0);
}

// NCCL, "single node for reference: ring 12 × 30 GB/s (found 6 × 60, then duplicated), comm->nChannels = 24".
TEST(NcclTopology, SingleNodeH100Ring) {
  const auto t = topo_of(testing::h100_cluster(1), testing::first_ranks(8));
  EXPECT_EQ(t.ring.channels, 12);
  EXPECT_DOUBLE_EQ(t.ring.bw_intra, 30.0);
  EXPECT_EQ(t.comm_channels, 24);
  EXPECT_EQ(t.nnodes, 1);
  EXPECT_TRUE(t.nvls_supported);
  EXPECT_FALSE(t.tree_pattern_tree);
}

// A100 single node: the older ladder starts at 40; 6 × 40 = 240 fills the 240 GB/s -> duplicated to
// 12 × 20 (dup rule: bw >= 25 and SM80 is not > 80).
TEST(NcclTopology, SingleNodeA100Ring) {
  const auto t = topo_of(testing::a100_cluster(1), testing::first_ranks(8));
  EXPECT_EQ(t.ring.channels, 12);
  EXPECT_DOUBLE_EQ(t.ring.bw_intra, 20.0);
  EXPECT_FALSE(t.nvls_supported);  // NVLS needs SM90+
  EXPECT_TRUE(t.ll128_supported);
}

// One rank per node (a DP group with TP=8): the group's share of the node's 8 NICs is one NIC, so one
// 48 GB/s channel, duplicated (48 >= 25, only 1 channel) into 2 × 24; comm channels 2 × 2 = 4.
TEST(NcclTopology, OneRankPerNodeGetsOneNic) {
  const auto t = topo_of(testing::h100_cluster(4), {0, 8, 16, 24});
  EXPECT_EQ(t.nnodes, 4);
  EXPECT_EQ(t.ring.channels, 2);
  EXPECT_DOUBLE_EQ(t.ring.channels * t.ring.bw_inter, 48.0);
  EXPECT_EQ(t.comm_channels, 4);
  EXPECT_TRUE(t.pat_supported);
  EXPECT_FALSE(t.nvls_supported);  // NVLS needs >= 2 heads per node
}

// Two ranks per node (TP=4): 2 of the 8 NICs -> 2 channels × 48 -> busBw 96.
TEST(NcclTopology, TwoRanksPerNodeGetTwoNics) {
  const auto t = topo_of(testing::h100_cluster(2), {0, 4, 8, 12});
  EXPECT_DOUBLE_EQ(t.ring.channels * t.ring.bw_inter, 96.0);
}

// Fewer NICs than GPUs (4 × 400G for 8 GPUs): a 1-rank-per-node group gets half a NIC, 24 GB/s.
TEST(NcclTopology, FractionOfANic) {
  ClusterSpec c = testing::h100_cluster(2);
  c.nics_per_node = 4;
  const auto t = topo_of(c, {0, 8});
  EXPECT_DOUBLE_EQ(t.ring.channels * t.ring.bw_inter, 24.0);
}

// PCIe scale-up: PCI latency row, no LL128, no NVLS.
TEST(NcclTopology, PcieNode) {
  ClusterSpec c = testing::h100_cluster(1);
  c.scale_up = {ScaleUpKind::PCIe, 64, 8};
  const auto t = topo_of(c, testing::first_ranks(8));
  EXPECT_FALSE(t.ring.nvlink_intra);
  EXPECT_FALSE(t.ll128_supported);
  EXPECT_FALSE(t.nvls_supported);
  EXPECT_NEAR(t.intra_bw_per_gpu, 48.0, 1e-9);  // 64 nominal × 0.75
}

// AMD GPUs (sm_version 0): Hopper rows for tuning, no NVLS.
TEST(NcclTopology, AmdTreatedAsHopperWithoutNvls) {
  ClusterSpec c = testing::h100_cluster(1);
  c.gpu.sm_version = 0;
  c.gpu.vendor = "AMD";
  c.scale_up.kind = ScaleUpKind::InfinityFabric;
  const auto t = topo_of(c, testing::first_ranks(8));
  EXPECT_EQ(t.cc_index, 2);
  EXPECT_FALSE(t.nvls_supported);
}

TEST(NcclTopology, NvlsCanBeDisabled) {
  NcclEnv env;
  env.nvls_enable = 0;
  EXPECT_FALSE(topo_of(testing::h100_cluster(1), testing::first_ranks(8), env).nvls_supported);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A custom gpu_spec (no catalog entry: sm_version 0, no vendor) on an NVSwitch is tuned as Hopper and
// keeps NVLS (the H200 validation cases describe their GPU this way).
TEST(NcclTopology, CustomGpuSpecOnNvswitchKeepsNvls) {
  ClusterSpec c = testing::h100_cluster(1);
  c.gpu = GpuSpec{};
  const auto t = topo_of(c, testing::first_ranks(8));
  EXPECT_EQ(t.sm, 90);
  EXPECT_TRUE(t.nvls_supported);
}

}  // namespace
}  // namespace trainsim
