#pragma once
// TIMELY's sender: a per-flow (per-QP) rate driven by round-trip times (Mittal et al., "TIMELY: RTT-based
// Congestion Control for the Datacenter", SIGCOMM'15, Algorithm 1). Pure state and arithmetic; the packet network
// measures an RTT per completed segment and says when it reaches the sender.
//
//   diff      = new_rtt - prev_rtt;  rtt_diff = (1 - alpha) rtt_diff + alpha diff;  gradient = rtt_diff / min_rtt
//   new_rtt < T_low:   rate += delta                                  (additive increase)
//   new_rtt > T_high:  rate *= 1 - beta (1 - T_high / new_rtt)        (multiplicative decrease)
//   gradient <= 0:     rate += N delta, N = 5 after hai_after such completions in a row, else 1 (HAI)
//   otherwise:         rate *= 1 - beta gradient
// The rate stays between the configured floor and the line rate.
#include "core/time.hpp"
#include "network/packet/packet_config.hpp"

namespace trainsim {

struct TimelyState {
  double rate = 0;        // bytes/s
  double line_rate = 0;   // the cap
  SimTime prev_rtt = -1;  // none yet
  double rtt_diff = 0;    // smoothed RTT difference, ps
  int negative_run = 0;   // completions in a row with a gradient <= 0

  void reset(double line_rate_Bps) {
    *this = TimelyState{};
    rate = line_rate = line_rate_Bps;
  }
};

// An RTT sample reached the sender: returns whether the rate fell.
bool timely_on_rtt(TimelyState& s, const TimelyConfig& c, SimTime rtt);

}  // namespace trainsim
