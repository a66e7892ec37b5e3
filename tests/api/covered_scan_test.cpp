// CoveredScan (api/compute_intervals.hpp) gives covered()'s answer for every call, whether the calls' starts come
// in time order (the ops of one stream, the case it is quick for) or jump back.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "api/compute_intervals.hpp"

namespace trainsim {
namespace {

struct Lcg {
  std::uint64_t state;
  std::uint64_t operator()() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
  }
};

// Disjoint intervals in time order, some back to back, with gaps of 0 to 99 units.
std::vector<Interval> busy_intervals(Lcg& next, int n) {
  std::vector<Interval> v;
  SimTime t = 0;
  for (int i = 0; i < n; ++i) {
    t += static_cast<SimTime>(next() % 100);
    const SimTime len = 1 + static_cast<SimTime>(next() % 200);
    v.push_back({t, t + len});
    t += len;
  }
  return v;
}

TEST(CoveredScan, CallsInTimeOrderGiveCoveredsAnswers) {
  for (const int n : {0, 1, 7, 1000}) {
    Lcg next{static_cast<std::uint64_t>(n) + 3};
    const std::vector<Interval> busy = busy_intervals(next, n);
    const SimTime horizon = busy.empty() ? 1000 : busy.back().end + 100;
    CoveredScan scan(busy);
    SimTime a = 0;
    for (int call = 0; call < 3000; ++call) {
      // Mostly small steps (dense calls), now and then a long jump (a sparse stream).
      a += static_cast<SimTime>(next() % (call % 50 == 0 ? 20000 : 30)) % horizon;
      const SimTime b = a + static_cast<SimTime>(next() % 500);
      ASSERT_EQ(scan(a, b), covered(busy, a, b)) << "n " << n << " call " << call << " [" << a << ", " << b << ")";
    }
  }
}

TEST(CoveredScan, AStartEarlierThanTheLastIsStillRight) {
  Lcg next{11};
  const std::vector<Interval> busy = busy_intervals(next, 500);
  CoveredScan scan(busy);
  for (int call = 0; call < 2000; ++call) {
    const SimTime a = static_cast<SimTime>(next() % static_cast<std::uint64_t>(busy.back().end + 50));
    const SimTime b = a + static_cast<SimTime>(next() % 800);
    ASSERT_EQ(scan(a, b), covered(busy, a, b)) << "call " << call;
  }
  // Covered is the overlap itself: an interval covers its own span exactly, and nothing of a gap.
  EXPECT_EQ(scan(busy[10].start, busy[10].end), busy[10].end - busy[10].start);
  if (busy[11].start > busy[10].end) { EXPECT_EQ(scan(busy[10].end, busy[11].start), 0); }
}

}  // namespace
}  // namespace trainsim
