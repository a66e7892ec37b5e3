// The indexed heap behind completion times and link shares: keys can move both ways, erase works
// anywhere, and equal keys come out by id (determinism).
#include <gtest/gtest.h>

#include <vector>

#include "network/indexed_heap.hpp"

namespace trainsim {
namespace {

std::vector<int> drain(IndexedMinHeap<double>& h) {
  std::vector<int> order;
  while (!h.empty()) {
    order.push_back(h.top_id());
    h.pop();
  }
  return order;
}

TEST(IndexedHeap, KeysMoveBothWaysAndTiesGoByID) {
  IndexedMinHeap<double> h;
  h.reserve_ids(8);
  for (int id : {5, 3, 7, 1, 0}) h.set(id, 10.0 * id);
  h.set(7, -1.0);  // lowered: now first
  h.set(0, 35.0);  // raised past 3 (30)
  h.set(1, 30.0);  // ties with 3: smaller id first
  EXPECT_TRUE(h.contains(5));
  h.erase(5);
  EXPECT_FALSE(h.contains(5));
  h.erase(5);  // erasing an absent id is harmless
  EXPECT_EQ(h.key_of(0), 35.0);
  EXPECT_EQ(drain(h), (std::vector<int>{7, 1, 3, 0}));
}

TEST(IndexedHeap, ClearForgetsEveryId) {
  IndexedMinHeap<double> h;
  h.reserve_ids(4);
  h.set(2, 1.0);
  h.set(3, 0.5);
  h.clear();
  EXPECT_TRUE(h.empty());
  EXPECT_FALSE(h.contains(2));
  h.set(2, 4.0);
  EXPECT_EQ(h.top_id(), 2);
}

// Many random-ish operations against a plain sort: the heap always yields the true minimum.
TEST(IndexedHeap, AgreesWithSortingUnderChurn) {
  IndexedMinHeap<double> h;
  const int n = 200;
  h.reserve_ids(n);
  std::vector<double> key(n, -1);  // -1: absent
  unsigned s = 7;
  for (int step = 0; step < 5000; ++step) {
    s = s * 1103515245u + 12345u;
    const int id = static_cast<int>((s >> 8) % n);
    if ((s >> 20) % 4 == 0) {
      h.erase(id);
      key[static_cast<std::size_t>(id)] = -1;
    } else {
      const double k = static_cast<double>((s >> 12) % 50);
      h.set(id, k);
      key[static_cast<std::size_t>(id)] = k;
    }
    int best = -1;
    for (int i = 0; i < n; ++i) {
      const double k = key[static_cast<std::size_t>(i)];
      if (k >= 0 && (best < 0 || k < key[static_cast<std::size_t>(best)])) best = i;
    }
    if (best < 0) {
      ASSERT_TRUE(h.empty());
    } else {
      ASSERT_EQ(h.top_id(), best);
    }
  }
}

}  // namespace
}  // namespace trainsim
