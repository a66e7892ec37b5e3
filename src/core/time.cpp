#include "core/time.hpp"

#include <fmt/format.h>

#include "core/check.hpp"

namespace trainsim {

void throw_time_out_of_range(double seconds) {
  throw Error(
      fmt::format("a simulated time of {:g} s is beyond the simulator's clock (picoseconds in 64 bits: "
                  "about 9.2e6 s, 106 days); an input rate or time is far outside physical values",
                  seconds));
}

SimTime from_nonpositive_seconds(double seconds) {
  TRAINSIM_CHECK(seconds > -kNegligibleNegativeSeconds,
                 fmt::format("a duration of {:g} s (negative or NaN) reached the simulated clock", seconds));
  return 0;
}

}  // namespace trainsim
