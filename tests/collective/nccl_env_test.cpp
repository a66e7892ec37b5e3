// NCCL environment handling: NCCL_ALGO / NCCL_PROTO with NCCL's parseList syntax (NCCL 2.30
// src/tuning/cost_model.cc; NCCL's env documentation), channel limits, NVLS switch, bad input.
#include <gtest/gtest.h>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/error.hpp"
#include "support/byte_sizes.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using A = NcclAlgorithm;
using P = NcclProtocol;

using test::GiB;

GroupPlacement two_node_world(const ClusterSpec& c) { return GroupPlacement::of(testing::first_ranks(16), c); }

// Catches the ScenarioError and returns it, so tests can check key and message.
ScenarioError scenario_error_of(const std::map<std::string, std::string>& env) {
  try {
    NcclAnalyticalModel m(testing::h100_cluster(2), env);
  } catch (const ScenarioError& e) { return e; }
  ADD_FAILURE() << "no ScenarioError thrown";
  return ScenarioError("", "", "");
}

// Without NCCL_ALGO a 1 GiB AllReduce picks NVLSTree (NCCL 2.30.7's cost model on the 2 × 8 H100 example);
// NCCL_ALGO=Tree must force Tree (Tree/Simple at 1 GiB: 92.4 + 2^30/(1000·140.8) ≈ 7,721 µs).
TEST(NcclEnv, AlgoTreeForcesTree) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_ALGO", "Tree"}});
  const auto e = m.estimate(CollKind::AllReduce, GiB, two_node_world(c));
  EXPECT_EQ(e.algorithm, A::Tree);
  EXPECT_EQ(e.protocol, P::Simple);
  EXPECT_NEAR(to_microseconds(e.time), 7721.0, 7721.0 * 0.02);
  // Small sizes stay on Tree too, whatever the protocol.
  EXPECT_EQ(m.estimate(CollKind::AllReduce, 1 << 20, two_node_world(c)).algorithm, A::Tree);
}

// Names are case-insensitive, as NCCL compares with strcasecmp.
TEST(NcclEnv, NamesAreCaseInsensitive) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_ALGO", "ring"}, {"NCCL_PROTO", "simple"}});
  const auto e = m.estimate(CollKind::AllReduce, 8192, two_node_world(c));
  EXPECT_EQ(e.algorithm, A::Ring);
  EXPECT_EQ(e.protocol, P::Simple);
}

// NCCL_PROTO=^LL: at 8 KiB the default winner is Tree/LL (NCCL's cost model); with LL excluded no LL is chosen
// at any size.
TEST(NcclEnv, ProtoCaretExcludesLL) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_PROTO", "^LL"}});
  for (std::int64_t bytes = 1024; bytes <= GiB; bytes *= 4) {
    SCOPED_TRACE(bytes);
    EXPECT_NE(m.estimate(CollKind::AllReduce, bytes, two_node_world(c)).protocol, P::LL);
    EXPECT_NE(m.estimate(CollKind::AllGather, bytes, two_node_world(c)).protocol, P::LL);
  }
}

// Per-function lists: "ring;allreduce:tree" -> every function Ring, AllReduce Tree only.
TEST(NcclEnv, PerFunctionLists) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_ALGO", "ring;allreduce:tree"}});
  EXPECT_EQ(m.estimate(CollKind::AllReduce, GiB, two_node_world(c)).algorithm, A::Tree);
  EXPECT_EQ(m.estimate(CollKind::AllGather, GiB, two_node_world(c)).algorithm, A::Ring);
  // "allreduce:^tree": only AllReduce is constrained, Tree excluded -> at 8 KiB not Tree/LL.
  NcclAnalyticalModel no_tree(c, {{"NCCL_ALGO", "allreduce:^tree"}});
  EXPECT_NE(no_tree.estimate(CollKind::AllReduce, 8192, two_node_world(c)).algorithm, A::Tree);
}

// NCCL_ALGO=Tree leaves nothing for AllGather (Tree is AllReduce-only); NCCL then falls back to Ring
// (NVIDIA/nccl#1304) instead of failing.
TEST(NcclEnv, AlgoWithoutImplementationFallsBackToRing) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_ALGO", "Tree"}, {"NCCL_PROTO", "Simple"}});
  const auto e = m.estimate(CollKind::AllGather, 1 << 20, two_node_world(c));
  EXPECT_EQ(e.algorithm, A::Ring);
  EXPECT_EQ(e.protocol, P::Simple);  // the fallback keeps NCCL_PROTO (fixed in NCCL 2.22)
}

TEST(NcclEnv, InvalidAlgoValueNamesTheKey) {
  const auto e = scenario_error_of({{"NCCL_ALGO", "Rnig"}});
  EXPECT_EQ(e.key(), "nccl.NCCL_ALGO");
  EXPECT_NE(e.detail().find("Ring"), std::string::npos);      // suggestion / valid values
  EXPECT_NE(e.detail().find("NVLSTree"), std::string::npos);  // lists the valid values
}

TEST(NcclEnv, InvalidProtoValue) { EXPECT_EQ(scenario_error_of({{"NCCL_PROTO", "LL256"}}).key(), "nccl.NCCL_PROTO"); }

// NCCL rejects an entry without "function:" after the first, and an unknown function prefix.
TEST(NcclEnv, MalformedLists) {
  EXPECT_EQ(scenario_error_of({{"NCCL_ALGO", "ring;tree"}}).key(), "nccl.NCCL_ALGO");
  EXPECT_EQ(scenario_error_of({{"NCCL_ALGO", "allgathr:ring"}}).key(), "nccl.NCCL_ALGO");
  EXPECT_EQ(scenario_error_of({{"NCCL_ALGO", "^"}}).key(), "nccl.NCCL_ALGO");
}

TEST(NcclEnv, UnknownVariableSuggestsClosest) {
  const auto e = scenario_error_of({{"NCCL_ALOG", "Ring"}});
  EXPECT_EQ(e.key(), "nccl.NCCL_ALOG");
  EXPECT_NE(e.detail().find("NCCL_ALGO"), std::string::npos);
}

// Known variables this version does not model are accepted; empty values mean "unset".
TEST(NcclEnv, KnownIgnoredVariablesAndEmptyValuesAreAccepted) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_P2P_PXN_LEVEL", "2"}, {"NCCL_IB_HCA", "mlx5"}, {"NCCL_ALGO", ""}});
  EXPECT_EQ(m.estimate(CollKind::AllReduce, GiB, two_node_world(c)).algorithm, A::NVLSTree);
}

TEST(NcclEnv, BadIntegers) {
  EXPECT_EQ(scenario_error_of({{"NCCL_MAX_NCHANNELS", "many"}}).key(), "nccl.NCCL_MAX_NCHANNELS");
  EXPECT_EQ(scenario_error_of({{"NCCL_MAX_NCHANNELS", "0"}}).key(), "nccl.NCCL_MAX_NCHANNELS");
  EXPECT_EQ(scenario_error_of({{"NCCL_NVLS_ENABLE", "3"}}).key(), "nccl.NCCL_NVLS_ENABLE");
  EXPECT_EQ(scenario_error_of({{"NCCL_NET_OVERHEAD", "-1"}}).key(), "nccl.NCCL_NET_OVERHEAD");
}

// NCCL_MAX_NCHANNELS=4 on the 16-channel communicator: channels <= 4, and Ring bandwidth is scaled by
// 4/16 (our documented approximation), so a 1 GiB Ring AllReduce takes about 4× the data term.
TEST(NcclEnv, MaxChannelsCapsChannelsAndBandwidth) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel base(c, {{"NCCL_ALGO", "Ring"}});
  NcclAnalyticalModel capped(c, {{"NCCL_ALGO", "Ring"}, {"NCCL_MAX_NCHANNELS", "4"}});
  const auto w = two_node_world(c);
  const auto b = base.estimate(CollKind::AllReduce, GiB, w);
  const auto k = capped.estimate(CollKind::AllReduce, GiB, w);
  EXPECT_EQ(b.channels, 16);
  EXPECT_EQ(k.channels, 4);
  EXPECT_NEAR(k.algbw_GBps, b.algbw_GBps / 4.0, b.algbw_GBps * 0.02);
}

// NCCL_MIN_NCHANNELS raises comm->nChannels (ncclTopoPostset) without changing NCCL's predicted bandwidth.
TEST(NcclEnv, MinChannelsRaisesChannels) {
  const auto c = testing::h100_cluster(2);
  NcclAnalyticalModel m(c, {{"NCCL_MIN_NCHANNELS", "32"}, {"NCCL_NVLS_ENABLE", "0"}});
  const auto w = two_node_world(c);
  EXPECT_EQ(m.tuning(w)->topology().comm_channels, 32);
  EXPECT_EQ(m.estimate(CollKind::AllReduce, GiB, w).channels, 32);
}

// Forcing LL128 where the hardware cannot run it (PCIe-only node) leaves no protocol at all.
TEST(NcclEnv, NoUsableProtocolIsAnError) {
  ClusterSpec c = testing::h100_cluster(1);
  c.scale_up = {ScaleUpKind::PCIe, 64, 8};
  NcclAnalyticalModel m(c, {{"NCCL_PROTO", "LL128"}});
  try {
    m.estimate(CollKind::AllReduce, 1 << 20, GroupPlacement::of(testing::first_ranks(8), c));
    ADD_FAILURE() << "expected ScenarioError";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "nccl.NCCL_PROTO"); }
}

}  // namespace
}  // namespace trainsim
