// PacketEventQueue (network/packet/event_queue.hpp), a radix heap: events come out in (time, insertion order), as a
// binary heap on that pair gives them, whatever the mix of pushes and pops, as long as no event is scheduled before
// the last one taken; one that is is an internal error, not a silent misorder.
#include <gtest/gtest.h>

#include <cstdint>
#include <queue>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "network/packet/event_queue.hpp"
#include "network_test_support.hpp"

namespace trainsim {
namespace {

using Key = std::tuple<SimTime, std::int32_t>;  // (time, push index): the order events must come out in

TEST(PacketEventQueue, RandomPushesAndPopsComeOutInTimeThenPushOrder) {
  for (std::uint64_t seed : {1u, 7u, 42u}) {
    testing::Lcg next(seed);
    PacketEventQueue q;
    std::priority_queue<Key, std::vector<Key>, std::greater<>> reference;
    SimTime now = 0;
    std::int32_t pushed = 0;
    for (int step = 0; step < 200'000; ++step) {
      if (reference.empty() || next() % 3 != 0) {
        // Ties are frequent (delays of 0 and small powers of two), spans reach far (up to 2^40 ps).
        const std::int64_t kind = next() % 4;
        const SimTime delay = kind == 0 ? 0 : kind == 1 ? (next() % 8) : kind == 2 ? (next() % 100'000) : (next() << 7);
        q.push(now + delay, PacketEventKind::kTxDone, pushed, 0);
        reference.emplace(now + delay, pushed);
        ++pushed;
      } else {
        ASSERT_EQ(q.top_time(), std::get<0>(reference.top()));
        const PacketEvent e = q.pop();
        ASSERT_EQ(e.time, std::get<0>(reference.top())) << "seed " << seed << " step " << step;
        ASSERT_EQ(e.a, std::get<1>(reference.top())) << "seed " << seed << " step " << step;
        reference.pop();
        now = e.time;
      }
      ASSERT_EQ(q.size(), reference.size());
    }
    while (!reference.empty()) {
      const PacketEvent e = q.pop();
      ASSERT_EQ(e.a, std::get<1>(reference.top()));
      reference.pop();
    }
    EXPECT_TRUE(q.empty());
    EXPECT_EQ(q.top_time(), kNever);
  }
}

TEST(PacketEventQueue, AnEventBeforeTheLastTakenIsAnInternalError) {
  PacketEventQueue q;
  q.push(1000, PacketEventKind::kTxDone, 0, 0);
  q.push(5000, PacketEventKind::kTxDone, 1, 0);
  EXPECT_EQ(q.pop().time, 1000);
  q.push(1000, PacketEventKind::kTxDone, 2, 0);  // at the last time taken: fine, after the earlier ones of that time
  EXPECT_EQ(q.pop().a, 2);
  EXPECT_THROW(q.push(999, PacketEventKind::kTxDone, 3, 0), InternalError);
}

}  // namespace
}  // namespace trainsim
