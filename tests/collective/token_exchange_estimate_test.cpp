// A DeepEP token exchange priced by the collective model (p2p_model.cpp estimate_token_exchange): the longer of its
// network copies at the GPU's NIC bandwidth and its NVLink copies at the GPU's NVLink bandwidth, plus one hop's
// latency; against the all-to-all dispatcher's k copies of every token.
#include <gtest/gtest.h>

#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

TEST(TokenExchangeEstimate, TheNetworkCopiesSetTheTimeAcrossNodes) {
  const ClusterSpec c = testing::h100_cluster(8);
  const NcclAnalyticalModel model(c, {});
  const GroupPlacement ep = GroupPlacement::of(testing::first_ranks(64), c);  // 8 nodes x 8 GPUs
  const NcclTopology& t = model.tuning(ep)->topology();
  const std::int64_t bytes = 64 << 20;  // one copy of each token
  const TokenExchange x{3.17f, 6.0f};
  const CollectiveEstimate est = model.estimate_exchange(bytes, x, ep);
  const double network_s = static_cast<double>(bytes) * x.remote_copies / (t.net_bw_per_gpu * 1e9);
  const double nvlink_s = static_cast<double>(bytes) * x.nvlink_copies / (t.intra_bw_per_gpu * 1e9);
  ASSERT_GT(network_s, nvlink_s);
  EXPECT_GT(to_seconds(est.time), network_s);
  EXPECT_LT(to_seconds(est.time), network_s + 50e-6);  // one hop's latency on top
  EXPECT_EQ(est.algorithm, NcclAlgorithm::P2P);
  // The all-to-all dispatcher sends top-k = 8 copies, 7/8 of them off the node: more than twice the time.
  const CollectiveEstimate a2a = model.estimate(CollKind::AllToAll, bytes * 8, ep);
  EXPECT_GT(to_seconds(a2a.time), 2.0 * to_seconds(est.time));
}

TEST(TokenExchangeEstimate, InsideOneNodeOnlyNvlinkCounts) {
  const ClusterSpec c = testing::h100_cluster(1);
  const NcclAnalyticalModel model(c, {});
  const GroupPlacement ep = GroupPlacement::of(testing::first_ranks(8), c);
  const std::int64_t bytes = 64 << 20;
  const double nvlink_s = static_cast<double>(bytes) * 3.0 / (model.tuning(ep)->topology().intra_bw_per_gpu * 1e9);
  // Network copies on a single node are not sent over a NIC.
  const CollectiveEstimate est = model.estimate_exchange(bytes, TokenExchange{2.0f, 3.0f}, ep);
  EXPECT_GT(to_seconds(est.time), nvlink_s);
  EXPECT_LT(to_seconds(est.time), nvlink_s + 50e-6);
  EXPECT_EQ(model.estimate_exchange(0, TokenExchange{2.0f, 3.0f}, ep).time, 0);
}

// Flow-level: every rank sends its network copies to its own local index on the other nodes, through its NIC, and its
// NVLink copies to the other GPUs of its node, evenly; no dependencies (DeepEP runs both at once).
TEST(TokenExchangeEstimate, FlowsCarryTheCopiesToTheRightPeers) {
  const ClusterSpec c = testing::h100_cluster(4);
  const NcclAnalyticalModel model(c, {});
  const GroupPlacement ep = GroupPlacement::of(testing::first_ranks(32), c);  // 4 nodes x 8 GPUs
  const std::int64_t bytes = 8 << 20;
  const TokenExchange x{2.4f, 5.25f};
  const FlowDag dag = model.exchange_flows(bytes, x, ep, FlowGranularity::PerChannel);
  EXPECT_TRUE(dag.dep_index.empty());
  EXPECT_EQ(dag.algorithm, NcclAlgorithm::P2P);
  EXPECT_GT(dag.latency_us, 0.0);
  ASSERT_EQ(dag.flows.size(), 32u * (3 + 7));  // 3 other nodes, 7 other GPUs per node
  for (int r = 0; r < 32; ++r) {
    double network = 0, nvlink = 0;
    for (const Flow& f : dag.flows) {
      if (f.src.index != r) continue;
      if (f.link == LinkClass::Network) {
        network += static_cast<double>(f.payload);
        EXPECT_EQ(f.dst.index % 8, r % 8) << "a network copy lands on the sender's local index";
        EXPECT_GE(f.src_net, 0);
        EXPECT_NE(f.dst.index / 8, r / 8);
      } else {
        nvlink += static_cast<double>(f.payload);
        EXPECT_EQ(f.dst.index / 8, r / 8) << "NVLink copies stay in the node";
      }
    }
    EXPECT_NEAR(network, static_cast<double>(bytes) * x.remote_copies, 4.0) << r;
    EXPECT_NEAR(nvlink, static_cast<double>(bytes) * x.nvlink_copies, 8.0) << r;
  }
}

}  // namespace
}  // namespace trainsim
