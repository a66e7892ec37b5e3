// NCCL's double binary tree over nodes (NCCL src/graph/trees.cc, ncclGetDtree).
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include "collective/nccl/nccl_communicator.hpp"
#include "core/error.hpp"

namespace trainsim {
namespace {

using Down = std::vector<std::array<int, 2>>;

// Every non-root has exactly one parent, that parent lists it as a child, there is exactly one
// root and every node is reachable from it.
void expect_valid_tree(const NodeTree& t, int nnodes) {
  int roots = 0;
  for (int n = 0; n < nnodes; ++n) {
    const int u = t.up[static_cast<std::size_t>(n)];
    if (u < 0) {
      ++roots;
      continue;
    }
    ASSERT_LT(u, nnodes);
    const auto& d = t.down[static_cast<std::size_t>(u)];
    EXPECT_TRUE(d[0] == n || d[1] == n) << "node " << n << " not a child of its parent " << u;
  }
  EXPECT_EQ(roots, 1);
  for (int n = 0; n < nnodes; ++n) {
    for (int c : t.down[static_cast<std::size_t>(n)]) {
      if (c >= 0) { EXPECT_EQ(t.up[static_cast<std::size_t>(c)], n); }
    }
  }
  // Reachability: walking up from any node ends at the root within nnodes steps.
  for (int n = 0; n < nnodes; ++n) {
    int cur = n, steps = 0;
    while (t.up[static_cast<std::size_t>(cur)] >= 0 && steps <= nnodes) {
      cur = t.up[static_cast<std::size_t>(cur)];
      ++steps;
    }
    EXPECT_LE(steps, nnodes) << "cycle above node " << n;
  }
}

bool is_leaf(const NodeTree& t, int n) {
  const auto& d = t.down[static_cast<std::size_t>(n)];
  return d[0] < 0 && d[1] < 0;
}

TEST(NcclDoubleBinaryTree, ValidTreesForOneToNineNodes) {
  for (int nnodes = 1; nnodes <= 9; ++nnodes) {
    SCOPED_TRACE(nnodes);
    const auto trees = double_binary_tree(nnodes);
    for (const auto& t : trees) {
      ASSERT_EQ(static_cast<int>(t.up.size()), nnodes);
      ASSERT_EQ(static_cast<int>(t.down.size()), nnodes);
      expect_valid_tree(t, nnodes);
    }
    EXPECT_EQ(trees[0].up[0], -1) << "tree 0 is rooted at node 0";
    if (nnodes % 2 == 0) {
      for (int n = 0; n < nnodes; ++n)
        EXPECT_TRUE(is_leaf(trees[0], n) || is_leaf(trees[1], n)) << "node " << n << " interior in both trees";
    }
  }
}

TEST(NcclDoubleBinaryTree, SingleNodeHasNoEdges) {
  const auto trees = double_binary_tree(1);
  for (const auto& t : trees) {
    EXPECT_EQ(t.up, std::vector<int>{-1});
    EXPECT_EQ(t.down, (Down{{-1, -1}}));
  }
}

TEST(NcclDoubleBinaryTree, TwoNodesMirror) {
  const auto trees = double_binary_tree(2);
  EXPECT_EQ(trees[0].up, (std::vector<int>{-1, 0}));
  EXPECT_EQ(trees[0].down, (Down{{-1, 1}, {-1, -1}}));  // the root's only child is its child 1
  EXPECT_EQ(trees[1].up, (std::vector<int>{1, -1}));
  EXPECT_EQ(trees[1].down, (Down{{-1, -1}, {-1, 0}}));
}

// Worked out by hand from trees.cc's ncclGetBtree / ncclGetDtree.
TEST(NcclDoubleBinaryTree, FourNodesMatchTreesCc) {
  const auto trees = double_binary_tree(4);
  EXPECT_EQ(trees[0].up, (std::vector<int>{-1, 2, 0, 2}));
  EXPECT_EQ(trees[0].down, (Down{{-1, 2}, {-1, -1}, {1, 3}, {-1, -1}}));
  // Mirror (n -> 3 - n).
  EXPECT_EQ(trees[1].up, (std::vector<int>{1, 3, 1, -1}));
  EXPECT_EQ(trees[1].down, (Down{{-1, -1}, {2, 0}, {-1, -1}, {-1, 1}}));
}

TEST(NcclDoubleBinaryTree, FiveNodesMatchTreesCc) {
  const auto trees = double_binary_tree(5);
  // Node 4's right child 6 is out of range and shrinks to nothing (5 is out of range too).
  EXPECT_EQ(trees[0].up, (std::vector<int>{-1, 2, 4, 2, 0}));
  EXPECT_EQ(trees[0].down, (Down{{-1, 4}, {-1, -1}, {1, 3}, {-1, -1}, {2, -1}}));
  // Shift by one (n -> n - 1, then back with + 1): rooted at node 1.
  EXPECT_EQ(trees[1].up, (std::vector<int>{1, -1, 3, 0, 3}));
  EXPECT_EQ(trees[1].down, (Down{{3, -1}, {-1, 0}, {-1, -1}, {2, 4}, {-1, -1}}));
}

TEST(NcclDoubleBinaryTree, FourteenNodesRightChildFallsBack) {
  // trees.cc's illustration: 12 has children 10 and (13 instead of 14).
  const auto trees = double_binary_tree(14);
  EXPECT_EQ(trees[0].down[0], (std::array<int, 2>{-1, 8}));
  EXPECT_EQ(trees[0].down[8], (std::array<int, 2>{4, 12}));
  EXPECT_EQ(trees[0].down[12], (std::array<int, 2>{10, 13}));
  EXPECT_EQ(trees[0].up[13], 12);
  EXPECT_EQ(trees[0].up[9], 10);
}

TEST(NcclDoubleBinaryTree, RejectsNonPositiveNodeCount) {
  EXPECT_THROW(double_binary_tree(0), Error);
  EXPECT_THROW(double_binary_tree(-3), Error);
}

}  // namespace
}  // namespace trainsim
