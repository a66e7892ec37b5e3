// SimTime conversions: exact where they should be, and a checked error (not undefined behaviour) beyond the
// clock's range.
#include <gtest/gtest.h>

#include <limits>

#include "core/error.hpp"
#include "core/time.hpp"

namespace trainsim {
namespace {

TEST(Time, SecondsToPicosecondsRound) {
  EXPECT_EQ(from_seconds(1.0), kPicosPerSecond);
  EXPECT_EQ(from_seconds(1.5e-12), 2);  // nearest picosecond
  EXPECT_EQ(from_microseconds(3.0), 3'000'000);
  EXPECT_EQ(from_seconds(-1.0), 0);  // clamped
  EXPECT_EQ(from_seconds(std::numeric_limits<double>::quiet_NaN()), 0);
  EXPECT_EQ(from_seconds(9.0e6), 9'000'000 * kPicosPerSecond);  // 104 days: still in range
}

TEST(Time, BeyondTheClockIsAnError) {
  EXPECT_THROW(from_seconds(1e300), Error);
  EXPECT_THROW(from_seconds(9.3e6), Error);  // just past INT64_MAX picoseconds
  EXPECT_THROW(from_seconds(std::numeric_limits<double>::infinity()), Error);
  try {
    from_seconds(1e300);
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1e+300 s is beyond the simulator's clock"), std::string::npos) << e.what();
  }
}

// Nearest nanosecond, halves up, and monotonic: times in order stay in order after rounding.
TEST(Time, NanosecondRoundingIsNearestAndMonotonic) {
  EXPECT_EQ(to_nanoseconds_rounded(0), 0);
  EXPECT_EQ(to_nanoseconds_rounded(499), 0);
  EXPECT_EQ(to_nanoseconds_rounded(500), 1);
  EXPECT_EQ(to_nanoseconds_rounded(1499), 1);
  EXPECT_EQ(to_nanoseconds_rounded(13'783'516'700), 13'783'517);
  for (SimTime t = 0; t < 5000; t += 7) EXPECT_LE(to_nanoseconds_rounded(t), to_nanoseconds_rounded(t + 1));
}

}  // namespace
}  // namespace trainsim
