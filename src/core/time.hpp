#pragma once
// Simulated time: integer picoseconds (as htsim), so that sums of many small transfers stay exact
// and runs are reproducible bit for bit. int64 picoseconds cover about 106 days.
#include <cmath>
#include <cstdint>
#include <limits>

namespace trainsim {

using SimTime = std::int64_t;  // picoseconds

inline constexpr SimTime kPicosPerSecond = 1'000'000'000'000;
inline constexpr SimTime kNever = std::numeric_limits<SimTime>::max();

constexpr double to_seconds(SimTime t) { return static_cast<double>(t) / static_cast<double>(kPicosPerSecond); }
constexpr double to_microseconds(SimTime t) { return static_cast<double>(t) / 1e6; }
// The nearest nanosecond (halves up) of a non-negative time: rounding is monotonic, so times in
// order stay in order (a span's end never passes the next span's start).
constexpr SimTime to_nanoseconds_rounded(SimTime t) { return (t + 500) / 1000; }

// Throws trainsim::Error: `seconds` is beyond what SimTime holds (time.cpp).
[[noreturn]] void throw_time_out_of_range(double seconds);
// 0 for a duration within floating-point noise below zero (kNegligibleNegativeSeconds); a NaN or a
// clearly negative one is an InternalError (time.cpp).
SimTime from_nonpositive_seconds(double seconds);

// A negative duration this close to zero is what cancellation leaves of an exact zero (a - b with
// a == b mathematically, both up to about 1e3 s, is off by a few ulps: ~1e-13 s); it is zero.
inline constexpr double kNegligibleNegativeSeconds = 1e-12;

// Rounds to the nearest picosecond. A NaN or negative duration is a bug upstream (every input time
// and rate is validated by the scenario layer), so it is an InternalError rather than clamped; only
// cancellation noise below zero maps to 0. A duration beyond the clock's range (about 106 days;
// infinity too) would make llround's result undefined, so it is an Error naming the value: the
// scenario layer bounds every input time and rate so that none is reached.
inline SimTime from_seconds(double s) {
  if (!(s > 0.0)) return from_nonpositive_seconds(s);
  const double ps = s * static_cast<double>(kPicosPerSecond);
  // 9.2e18 ps: just below INT64_MAX (9.22e18), and exactly representable as a double.
  if (!(ps < 9.2e18)) throw_time_out_of_range(s);
  return static_cast<SimTime>(std::llround(ps));
}
inline SimTime from_microseconds(double us) { return from_seconds(us * 1e-6); }

}  // namespace trainsim
