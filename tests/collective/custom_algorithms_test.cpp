// Names, the capability table, dispatch and the errors of the custom collective algorithms.
#include "collective/algorithms/custom_algorithms.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "custom_test_support.hpp"

namespace trainsim {
namespace {

TEST(CustomAlgorithms, NamesRoundTrip) {
  for (const auto a : {CollectiveAlgorithm::Nccl, CollectiveAlgorithm::HalvingDoubling,
                       CollectiveAlgorithm::Hierarchical, CollectiveAlgorithm::ReductionServer}) {
    EXPECT_EQ(parse_collective_algorithm(to_string(a)), a) << to_string(a);
  }
  EXPECT_STREQ(to_string(CollectiveAlgorithm::HalvingDoubling), "halving_doubling");
  EXPECT_EQ(parse_collective_algorithm("Reduction-Server"), CollectiveAlgorithm::ReductionServer);
  EXPECT_EQ(parse_collective_algorithm("NCCL"), CollectiveAlgorithm::Nccl);
  EXPECT_FALSE(parse_collective_algorithm("ring").has_value());
  EXPECT_FALSE(parse_collective_algorithm("").has_value());
}

TEST(CustomAlgorithms, CapabilityTable) {
  for (const auto k : {CollKind::AllReduce, CollKind::ReduceScatter, CollKind::AllGather}) {
    EXPECT_TRUE(custom_algorithm_supports(CollectiveAlgorithm::HalvingDoubling, k));
    EXPECT_TRUE(custom_algorithm_supports(CollectiveAlgorithm::Hierarchical, k));
  }
  EXPECT_TRUE(custom_algorithm_supports(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce));
  EXPECT_FALSE(custom_algorithm_supports(CollectiveAlgorithm::ReductionServer, CollKind::AllGather));
  EXPECT_FALSE(custom_algorithm_supports(CollectiveAlgorithm::ReductionServer, CollKind::ReduceScatter));
  for (const auto k : {CollKind::Broadcast, CollKind::Reduce, CollKind::AllToAll, CollKind::SendRecv}) {
    EXPECT_FALSE(custom_algorithm_supports(CollectiveAlgorithm::HalvingDoubling, k));
    EXPECT_FALSE(custom_algorithm_supports(CollectiveAlgorithm::Hierarchical, k));
    EXPECT_TRUE(custom_algorithm_supports(CollectiveAlgorithm::Nccl, k));
  }
}

TEST(CustomAlgorithms, UnsupportedReasons) {
  EXPECT_EQ(custom_algorithm_unsupported_reason(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, 16, 2, 8), "");
  EXPECT_NE(custom_algorithm_unsupported_reason(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, 8, 1, 8)
                .find("one node"),
            std::string::npos);
  EXPECT_NE(custom_algorithm_unsupported_reason(CollectiveAlgorithm::Hierarchical, CollKind::AllReduce, 12, 2, 8)
                .find("same number of ranks"),
            std::string::npos);
  EXPECT_NE(custom_algorithm_unsupported_reason(CollectiveAlgorithm::ReductionServer, CollKind::AllGather, 16, 2, 8)
                .find("supports all_reduce only"),
            std::string::npos);
  EXPECT_EQ(custom_algorithm_unsupported_reason(CollectiveAlgorithm::HalvingDoubling, CollKind::AllGather, 8, 1, 8),
            "");
}

TEST(CustomAlgorithms, UnsupportedCombinationsThrow) {
  const auto ctx = testing::custom_context(2, 8);
  const auto comm = testing::custom_comm(2, 8);
  EXPECT_THROW(estimate_custom(CollectiveAlgorithm::ReductionServer, CollKind::AllGather, 1 << 20, ctx), Error);
  EXPECT_THROW(estimate_custom(CollectiveAlgorithm::HalvingDoubling, CollKind::Broadcast, 1 << 20, ctx), Error);
  EXPECT_THROW(estimate_custom(CollectiveAlgorithm::Hierarchical, CollKind::AllToAll, 1 << 20, ctx), Error);
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::ReduceScatter, 1 << 20, comm, {}), Error);
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::Reduce, 1 << 20, comm, {}), Error);
  // NCCL's own flows come from the NCCL flow generator, not from here.
  // (The selector never asks, so asking is a bug: an InternalError, not a user's Error.)
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::Nccl, CollKind::AllReduce, 1 << 20, comm, {}), InternalError);
  // Without an NCCL pricing function the nccl entry cannot answer (the selector always gives one).
  EXPECT_THROW(estimate_custom(CollectiveAlgorithm::Nccl, CollKind::AllReduce, 1 << 20, ctx), InternalError);
}

TEST(CustomAlgorithms, NcclEntryUsesTheContextsNcclModel) {
  auto ctx = testing::custom_context(4, 8);
  ctx.nccl = [](CollKind kind, std::int64_t bytes, int ppn, int nnodes) {
    CollectiveEstimate e;
    e.time = bytes + 1000 * ppn + 100000 * nnodes + (kind == CollKind::AllGather ? 7 : 0);
    return e;
  };
  EXPECT_EQ(estimate_custom(CollectiveAlgorithm::Nccl, CollKind::AllGather, 5, ctx).time, 5 + 8000 + 400000 + 7);
}

TEST(CustomAlgorithms, GroupOfOneAndEmptyBufferTakeNoTime) {
  auto ctx = testing::custom_context(1, 1);
  for (const auto a : {CollectiveAlgorithm::HalvingDoubling, CollectiveAlgorithm::ReductionServer}) {
    const auto e = estimate_custom(a, CollKind::AllReduce, 1 << 20, ctx);
    EXPECT_EQ(e.time, 0) << to_string(a);
  }
  const auto ctx16 = testing::custom_context(2, 8);
  for (const auto a : {CollectiveAlgorithm::HalvingDoubling, CollectiveAlgorithm::ReductionServer}) {
    EXPECT_EQ(estimate_custom(a, CollKind::AllReduce, 0, ctx16).time, 0) << to_string(a);
    EXPECT_TRUE(custom_flows(a, CollKind::AllReduce, 0, testing::custom_comm(2, 8), {}).flows.empty());
  }
}

TEST(CustomAlgorithms, EstimatesNameTheirAlgorithmAndBusBandwidth) {
  const auto ctx = testing::custom_context(2, 8);
  const auto e = estimate_custom(CollectiveAlgorithm::HalvingDoubling, CollKind::AllReduce, 1 << 30, ctx);
  EXPECT_EQ(e.algorithm, NcclAlgorithm::HalvingDoubling);
  EXPECT_GT(e.time, 0);
  // nccl-tests convention: busbw = algbw · 2(n-1)/n for AllReduce.
  EXPECT_NEAR(e.busbw_GBps, e.algbw_GBps * 2.0 * 15.0 / 16.0, 1e-9);
  EXPECT_NEAR(e.algbw_GBps, static_cast<double>(1 << 30) / (1000.0 * to_microseconds(e.time)), 1e-6);
  // The reduction server prices its intra-node reduce-scatter / all-gather with NCCL: give it a stub.
  auto with_nccl = ctx;
  with_nccl.nccl = [](CollKind, std::int64_t, int, int) {
    CollectiveEstimate s;
    s.time = from_microseconds(100);
    return s;
  };
  EXPECT_EQ(estimate_custom(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1 << 30, with_nccl).algorithm,
            NcclAlgorithm::ReductionServer);
}

TEST(CustomAlgorithms, InconsistentCommunicatorIsRejected) {
  auto comm = testing::custom_comm(2, 4);
  comm.node_of.pop_back();
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::HalvingDoubling, CollKind::AllReduce, 1024, comm, {}), Error);
  auto bad_node = testing::custom_comm(2, 4);
  bad_node.node_of[3] = 5;
  EXPECT_THROW(custom_flows(CollectiveAlgorithm::ReductionServer, CollKind::AllReduce, 1024, bad_node, {}), Error);
}

}  // namespace
}  // namespace trainsim
