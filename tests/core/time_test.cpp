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
  EXPECT_EQ(from_seconds(9.0e6), 9'000'000 * kPicosPerSecond);  // 104 days: still in range
}

// A negative or NaN duration comes from a bug upstream (inputs are validated), so it is an
// InternalError, not silently zero; only floating-point noise below zero is zero.
TEST(Time, NegativeOrNanDurationsAreInternalErrorsButCancellationNoiseIsZero) {
  EXPECT_EQ(from_seconds(0.0), 0);
  EXPECT_EQ(from_seconds(-0.0), 0);
  EXPECT_EQ(from_seconds(-1e-15), 0);                  // e.g. (a + b) - a - b with a ~ 1 s: a few ulps
  const double cancelled = (0.1 + 0.2) - 0.3 - 1e-16;  // ~ -4.4e-17 (0.1 + 0.2 - 0.3 is 5.6e-17)
  EXPECT_LT(cancelled, 0.0);
  EXPECT_EQ(from_seconds(cancelled), 0);
  EXPECT_EQ(from_microseconds(-1e-9), 0);  // -1e-15 s
  EXPECT_THROW(from_seconds(std::numeric_limits<double>::quiet_NaN()), InternalError);
  EXPECT_THROW(from_seconds(-1.0), InternalError);
  EXPECT_THROW(from_seconds(-2e-12), InternalError);  // two picoseconds: not noise
  EXPECT_THROW(from_microseconds(-3.0), InternalError);
  EXPECT_THROW(from_seconds(-std::numeric_limits<double>::infinity()), InternalError);
  try {
    from_seconds(-0.5);
    ADD_FAILURE() << "no InternalError";
  } catch (const Error&) {
    ADD_FAILURE() << "a negative duration is not the user's error";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("a duration of -0.5 s (negative or NaN)"), std::string::npos) << e.what();
    EXPECT_EQ(e.file(), "src/core/time.cpp");
  }
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
