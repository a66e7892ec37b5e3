#include "network/packet/dcqcn.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {
// One increase step (the paper's rate-increase event), after the step counts were bumped.
void increase(DcqcnState& s, const DcqcnConfig& c) {
  const int f = c.fast_recovery_steps;
  if (std::max(s.timer_steps, s.byte_steps) < f) {
    // fast recovery: Rt stays, Rc climbs halfway back to it
  } else if (std::min(s.timer_steps, s.byte_steps) > f) {
    s.rt += c.hyper_increase_Bps;
  } else {
    s.rt += c.additive_increase_Bps;
  }
  s.rt = std::min(s.rt, s.line_rate);
  s.rc = std::min((s.rt + s.rc) / 2, s.line_rate);
  // Halving the gap never closes it exactly: within a millionth of the line rate is back.
  if (s.rc >= s.line_rate * (1 - 1e-6)) {
    s.rc = s.rt = s.line_rate;
    s.recovering = false;
  }
}
}  // namespace

double dcqcn_alpha(const DcqcnState& s, const DcqcnConfig& c, SimTime now) {
  const SimTime periods = (now - s.alpha_since) / c.alpha_period;
  if (periods <= 0) return s.alpha;
  return s.alpha * std::pow(1 - c.g, static_cast<double>(periods));
}

void dcqcn_on_cnp(DcqcnState& s, const DcqcnConfig& c, SimTime now) {
  const double alpha = dcqcn_alpha(s, c, now);
  s.rt = s.rc;
  s.rc = std::max(c.min_rate_Bps, s.rc * (1 - alpha / 2));
  s.rc = std::min(s.rc, s.line_rate);
  s.alpha = (1 - c.g) * alpha + c.g;
  s.alpha_since = now;
  s.timer_steps = s.byte_steps = 0;
  s.bytes_since_step = 0;
  s.recovering = true;
}

bool dcqcn_on_timer(DcqcnState& s, const DcqcnConfig& c) {
  if (!s.recovering) return false;
  ++s.timer_steps;
  increase(s, c);
  return s.recovering;
}

void dcqcn_on_sent(DcqcnState& s, const DcqcnConfig& c, std::int64_t bytes) {
  if (!s.recovering) return;
  s.bytes_since_step += bytes;
  while (s.recovering && s.bytes_since_step >= c.increase_bytes) {
    s.bytes_since_step -= c.increase_bytes;
    ++s.byte_steps;
    increase(s, c);
  }
}

}  // namespace trainsim
