#include "network/packet/timely.hpp"

#include <algorithm>

namespace trainsim {

bool timely_on_rtt(TimelyState& s, const TimelyConfig& c, SimTime rtt) {
  const double before = s.rate;
  const double diff = s.prev_rtt < 0 ? 0.0 : static_cast<double>(rtt - s.prev_rtt);
  s.prev_rtt = rtt;
  s.rtt_diff = (1 - c.ewma_alpha) * s.rtt_diff + c.ewma_alpha * diff;
  const double gradient = s.rtt_diff / static_cast<double>(c.min_rtt);
  if (rtt < c.t_low) {
    s.rate += c.additive_increase_Bps;
  } else if (rtt > c.t_high) {
    s.rate *= 1 - c.beta * (1 - static_cast<double>(c.t_high) / static_cast<double>(rtt));
    s.negative_run = 0;
  } else if (gradient <= 0) {
    ++s.negative_run;
    s.rate += (s.negative_run >= c.hai_after ? 5 : 1) * c.additive_increase_Bps;
  } else {
    s.rate *= 1 - c.beta * gradient;
    s.negative_run = 0;
  }
  s.rate = std::clamp(s.rate, std::min(c.min_rate_Bps, s.line_rate), s.line_rate);
  return s.rate < before;
}

}  // namespace trainsim
