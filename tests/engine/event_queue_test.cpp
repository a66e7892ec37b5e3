// EventQueue (engine/event_queue.hpp): events come out earliest first, ties in push order, in its sorted-array
// form and after it has turned into a heap, whatever the mix of pushes and pops; the engine's determinism rests on it.
#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <tuple>
#include <vector>

#include "engine/event_queue.hpp"

namespace trainsim {
namespace {

using Key = std::tuple<SimTime, std::uint32_t>;  // (time, push index): the order events must come out in

// A small deterministic generator (the test must not depend on the standard library's distributions).
struct Lcg {
  std::uint64_t state;
  std::uint64_t operator()() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
};

// Pushes and pops at random with `push_share` in 8 of pushes, so the queue's size wanders around `size`; checks each
// pop against a priority queue on (time, push index).
void check_against_reference(std::uint64_t seed, int push_share, std::size_t size) {
  Lcg next{seed};
  EventQueue q;
  std::priority_queue<Key, std::vector<Key>, std::greater<>> reference;
  SimTime now = 0;
  std::uint32_t pushed = 0;
  for (int step = 0; step < 100'000; ++step) {
    const bool push = reference.empty() || (reference.size() < size ? static_cast<int>(next() % 8) < push_share
                                                                    : static_cast<int>(next() % 8) < 8 - push_share);
    if (push) {
      const std::uint64_t kind = next() % 3;  // ties are frequent: delays of 0 and of a few picoseconds
      const SimTime delay = kind == 0   ? 0
                            : kind == 1 ? static_cast<SimTime>(next() % 4)
                                        : static_cast<SimTime>(next() % 1'000'000);
      q.push(now + delay, pushed % 7, pushed);
      reference.emplace(now + delay, pushed);
      ++pushed;
      continue;
    }
    ASSERT_FALSE(q.empty());
    ASSERT_EQ(q.top().time, std::get<0>(reference.top())) << "seed " << seed << " step " << step;
    const Event e = q.pop();
    ASSERT_EQ(e.time, std::get<0>(reference.top())) << "seed " << seed << " step " << step;
    ASSERT_EQ(e.op, std::get<1>(reference.top())) << "seed " << seed << " step " << step;
    ASSERT_EQ(e.rank, std::get<1>(reference.top()) % 7);
    now = e.time;
    reference.pop();
  }
  while (!reference.empty()) {
    ASSERT_EQ(q.pop().op, std::get<1>(reference.top()));
    reference.pop();
  }
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.pushed(), pushed);
}

TEST(EventQueue, FewEventsComeOutInTimeThenPushOrder) {
  for (std::uint64_t seed : {1u, 7u, 42u}) check_against_reference(seed, 6, 12);
}

// Past the sorted array's limit the queue becomes a heap, mid-run, with events of equal time on both sides.
TEST(EventQueue, ManyEventsComeOutInTheSameOrderAfterTheQueueBecomesAHeap) {
  for (std::uint64_t seed : {3u, 11u}) check_against_reference(seed, 7, 4 * EventQueue::kSortedLimit);
}

TEST(EventQueue, EqualTimesComeOutInPushOrder) {
  EventQueue q;
  for (std::uint32_t i = 0; i < 10; ++i) q.push(i % 2 == 0 ? 5 : 3, 0, i);
  std::vector<std::uint32_t> order;
  while (!q.empty()) order.push_back(q.pop().op);
  EXPECT_EQ(order, (std::vector<std::uint32_t>{1, 3, 5, 7, 9, 0, 2, 4, 6, 8}));
}

// A queue that became a heap and drained is an array again; it turns into a heap again past the limit, and ties still
// come out in push order through every change of form.
TEST(EventQueue, DrainedHeapBecomesAnArrayAgain) {
  EventQueue q;
  std::uint32_t pushed = 0;
  for (int round = 0; round < 3; ++round) {
    const std::size_t n = round == 1 ? 10 : 3 * EventQueue::kSortedLimit;  // a heap, an array, a heap
    std::vector<std::uint32_t> expected_late, expected_early;              // two times only: 7 and 2
    for (std::size_t i = 0; i < n; ++i) {
      const bool early = i % 3 == 0;
      q.push(early ? 2 : 7, 0, pushed);
      (early ? expected_early : expected_late).push_back(pushed);
      ++pushed;
    }
    std::vector<std::uint32_t> expected = expected_early;
    expected.insert(expected.end(), expected_late.begin(), expected_late.end());
    std::vector<std::uint32_t> order;
    while (!q.empty()) order.push_back(q.pop().op);
    EXPECT_EQ(order, expected) << "round " << round;
  }
  EXPECT_EQ(q.pushed(), pushed);
}

}  // namespace
}  // namespace trainsim
