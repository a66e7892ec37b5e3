// NCCL's double binary tree over nodes (NCCL src/graph/trees.cc, ncclGetDtree). Tree 0 is a
// binary tree rooted at node 0 whose interior nodes are the even indices; tree 1 mirrors it (even
// node count) or shifts it by one (odd count), so that (for even counts) every node is a leaf in one
// of the two trees and the two trees together balance the network links.
#include <array>
#include <string>

#include "collective/nccl/nccl_communicator.hpp"
#include "core/error.hpp"

namespace trainsim {
namespace {

struct BtreeLinks {
  int up = -1, down0 = -1, down1 = -1;
};

// One node's links in NCCL's binary tree rooted at 0 (ncclGetBtree). The lowest set bit of the
// index gives the level; the parent flips that bit and sets the next one (or only clears it when
// the result would be out of range); children are index -/+ half that bit.
BtreeLinks btree_links(int nnodes, int node) {
  BtreeLinks l;
  int bit = 1;
  while (bit < nnodes && (bit & node) == 0) bit <<= 1;
  if (node == 0) {
    // The root's single child is the highest power of two below nnodes; NCCL files it as child 1.
    l.down1 = nnodes > 1 ? bit >> 1 : -1;
    return l;
  }
  l.up = (node ^ bit) | (bit << 1);
  if (l.up >= nnodes) l.up = node ^ bit;
  int low = bit >> 1;
  l.down0 = low == 0 ? -1 : node - low;
  // The right child shrinks towards the node until it fits (trees.cc's loop tries `low` twice before
  // halving; the result is the same: the largest of low, low/2, ... that stays in range).
  int right = low == 0 ? -1 : node + low;
  while (right >= nnodes) {
    right = low == 0 ? -1 : node + low;
    low >>= 1;
  }
  l.down1 = right;
  return l;
}

int map_back(int v, int nnodes, bool mirror) {
  if (v == -1) return -1;
  return mirror ? nnodes - 1 - v : (v + 1) % nnodes;
}

}  // namespace

std::array<NodeTree, 2> double_binary_tree(int nnodes) {
  if (nnodes < 1) throw Error("nccl double binary tree: node count must be positive, got " + std::to_string(nnodes));
  std::array<NodeTree, 2> trees;
  const auto n = static_cast<std::size_t>(nnodes);
  for (auto& t : trees) {
    t.up.assign(n, -1);
    t.down.assign(n, {-1, -1});
  }
  const bool mirror = nnodes % 2 == 0;
  for (int node = 0; node < nnodes; ++node) {
    const auto i = static_cast<std::size_t>(node);
    const BtreeLinks t0 = btree_links(nnodes, node);
    trees[0].up[i] = t0.up;
    trees[0].down[i] = {t0.down0, t0.down1};
    // Tree 1: the same tree on relabelled nodes (mirror r -> n-1-r, or shift r -> r-1), mapped back.
    const int relabelled = mirror ? nnodes - 1 - node : (node - 1 + nnodes) % nnodes;
    const BtreeLinks t1 = btree_links(nnodes, relabelled);
    trees[1].up[i] = map_back(t1.up, nnodes, mirror);
    trees[1].down[i] = {map_back(t1.down0, nnodes, mirror), map_back(t1.down1, nnodes, mirror)};
  }
  return trees;
}

}  // namespace trainsim
