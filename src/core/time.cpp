#include "core/time.hpp"

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim {

void throw_time_out_of_range(double seconds) {
  throw Error(fmt::format("a simulated time of {:g} s is beyond the simulator's clock (picoseconds in 64 bits: "
                          "about 9.2e6 s, 106 days); an input rate or time is far outside physical values",
                          seconds));
}

}  // namespace trainsim
