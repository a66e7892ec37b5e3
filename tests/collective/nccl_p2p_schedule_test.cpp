// NCCL's p2p round schedule (NCCL src/init.cc, ncclP2pSchedule).
#include <gtest/gtest.h>

#include <vector>

#include "collective/nccl/nccl_communicator.hpp"
#include "core/error.hpp"

namespace trainsim {
namespace {

// A communicator with only the geometry the schedule needs (ranks numbered node by node).
NcclCommunicator geometry(const std::vector<int>& ppn, int group_size) {
  NcclCommunicator c;
  c.nnodes = static_cast<int>(ppn.size());
  for (int n = 0; n < c.nnodes; ++n) {
    std::vector<int> ranks;
    for (int l = 0; l < ppn[static_cast<std::size_t>(n)]; ++l) {
      ranks.push_back(c.nranks);
      c.node_of.push_back(n);
      c.local_of.push_back(l);
      ++c.nranks;
    }
    c.node_ranks.push_back(ranks);
  }
  c.p2p_group_size = group_size;
  return c;
}

// Every round is a permutation on both sides, and the two sides agree: if r sends to s in round i,
// s receives from r in round i. Round 0 is self. Every rank sends to every rank exactly once.
void expect_consistent_schedule(const NcclCommunicator& c) {
  const auto n = static_cast<std::size_t>(c.nranks);
  std::vector<std::vector<int>> send(n), recv(n);
  for (int r = 0; r < c.nranks; ++r) {
    send[static_cast<std::size_t>(r)] = c.p2p_send_peer(r);
    recv[static_cast<std::size_t>(r)] = c.p2p_recv_peer(r);
    ASSERT_EQ(send[static_cast<std::size_t>(r)].size(), n);
    ASSERT_EQ(recv[static_cast<std::size_t>(r)].size(), n);
    EXPECT_EQ(send[static_cast<std::size_t>(r)][0], r);
    EXPECT_EQ(recv[static_cast<std::size_t>(r)][0], r);
    std::vector<int> hits(n, 0);
    for (int p : send[static_cast<std::size_t>(r)]) ++hits[static_cast<std::size_t>(p)];
    for (int h : hits) EXPECT_EQ(h, 1) << "rank " << r << " does not send to every rank once";
  }
  for (std::size_t round = 0; round < n; ++round) {
    std::vector<int> receivers(n, 0);
    for (std::size_t r = 0; r < n; ++r) {
      const int s = send[r][round];
      ++receivers[static_cast<std::size_t>(s)];
      EXPECT_EQ(recv[static_cast<std::size_t>(s)][round], static_cast<int>(r))
          << "round " << round << ": " << r << " sends to " << s << " but " << s << " receives from someone else";
    }
    for (int k : receivers) EXPECT_EQ(k, 1) << "round " << round << " is not a permutation";
  }
}

TEST(NcclP2pSchedule, PermutationEveryRound) {
  for (const auto& [ppn, gs] : std::vector<std::pair<std::vector<int>, int>>{{{8}, 8},
                                                                             {{8, 8}, 8},
                                                                             {{8, 8, 8}, 8},
                                                                             {{4, 4, 4, 4, 4}, 4},
                                                                             {{8, 4, 8}, 4},
                                                                             {{16, 16}, 8},
                                                                             {{2, 2, 2, 2, 2, 2, 2}, 2},
                                                                             {{1, 1, 1}, 1}}) {
    SCOPED_TRACE(::testing::Message() << ppn.size() << " nodes, group " << gs);
    expect_consistent_schedule(geometry(ppn, gs));
  }
}

// NCCL's schedule for 2 nodes × 8: rounds 0..7 within the node (send l+δ, recv l−δ), rounds 8..15 the other node.
TEST(NcclP2pSchedule, TwoNodesOfEightMatchSection97) {
  const auto c = geometry({8, 8}, 8);
  for (int r = 0; r < 16; ++r) {
    const int n = r / 8, l = r % 8;
    const auto send = c.p2p_send_peer(r);
    const auto recv = c.p2p_recv_peer(r);
    for (int d = 0; d < 8; ++d) {
      EXPECT_EQ(send[static_cast<std::size_t>(d)], n * 8 + (l + d) % 8);
      EXPECT_EQ(recv[static_cast<std::size_t>(d)], n * 8 + (l - d + 8) % 8);
      EXPECT_EQ(send[static_cast<std::size_t>(8 + d)], (1 - n) * 8 + (l + d) % 8);
      EXPECT_EQ(recv[static_cast<std::size_t>(8 + d)], (1 - n) * 8 + (l - d + 8) % 8);
    }
  }
}

// The quadratic group-delta sequence for 16 groups (ncclP2pSchedule).
TEST(NcclP2pSchedule, SixteenGroupDeltaSequence) {
  const auto c = geometry(std::vector<int>(16, 8), 8);
  const std::vector<int> expected{0, 1, 3, 6, 10, 15, 5, 12, 4, 13, 7, 2, 14, 11, 9, 8};
  for (int r : {0, 21, 127}) {
    const int g = r / 8, l = r % 8;
    const auto send = c.p2p_send_peer(r);
    const auto recv = c.p2p_recv_peer(r);
    for (std::size_t k = 0; k < expected.size(); ++k) {
      for (int d = 0; d < 8; ++d) {
        const auto round = k * 8 + static_cast<std::size_t>(d);
        EXPECT_EQ(send[round], ((g + expected[k]) % 16) * 8 + (l + d) % 8) << "rank " << r << " round " << round;
        EXPECT_EQ(recv[round], ((g - expected[k] + 16) % 16) * 8 + (l - d + 8) % 8) << "rank " << r;
      }
    }
  }
}

// Non-power-of-two group counts skip deltas ≥ nGroups: 3 groups use 0, 1, (3 skipped), 2.
TEST(NcclP2pSchedule, ThreeGroupsSkipOutOfRangeDeltas) {
  const auto c = geometry({2, 2, 2}, 2);
  EXPECT_EQ(c.p2p_send_peer(0), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(c.p2p_send_peer(3), (std::vector<int>{3, 2, 5, 4, 1, 0}));
  EXPECT_EQ(c.p2p_recv_peer(3), (std::vector<int>{3, 2, 1, 0, 5, 4}));
}

// Groups smaller than a node: group 1 of node 0 is ranks 4..7 and comes before node 1's groups.
TEST(NcclP2pSchedule, GroupsInsideNodes) {
  const auto c = geometry({8, 8}, 4);    // 4 groups: deltas 0, 1, 3, 2
  const auto send = c.p2p_send_peer(5);  // group 1, local 1
  EXPECT_EQ((std::vector<int>(send.begin(), send.begin() + 4)), (std::vector<int>{5, 6, 7, 4}));
  EXPECT_EQ((std::vector<int>(send.begin() + 4, send.begin() + 8)), (std::vector<int>{9, 10, 11, 8}));      // group 2
  EXPECT_EQ((std::vector<int>(send.begin() + 8, send.begin() + 12)), (std::vector<int>{1, 2, 3, 0}));       // group 0
  EXPECT_EQ((std::vector<int>(send.begin() + 12, send.begin() + 16)), (std::vector<int>{13, 14, 15, 12}));  // group 3
}

TEST(NcclP2pSchedule, RejectsBadRankAndGroupSize) {
  auto c = geometry({8, 8}, 8);
  EXPECT_THROW(c.p2p_send_peer(16), Error);
  EXPECT_THROW(c.p2p_recv_peer(-1), Error);
  c.p2p_group_size = 3;
  EXPECT_THROW(c.p2p_send_peer(0), Error);
}

}  // namespace
}  // namespace trainsim
