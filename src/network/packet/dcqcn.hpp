#pragma once
// DCQCN's reaction point: the per-flow (per-QP) sending rate of a RoCE NIC (Zhu et al.,
// SIGCOMM'15, Fig. 5 / Algorithm 1). Pure state and arithmetic; the packet network decides when
// a CNP arrives, when the increase timer fires and how many bytes were sent.
//
//   CNP:       Rt = Rc; Rc = max(min_rate, Rc (1 - alpha/2)); alpha = (1-g) alpha + g;
//              the increase timer, byte counter and step counts restart.
//   alpha:     decays alpha = (1-g) alpha once per K without a CNP. Kept in closed form
//              (alpha at the last CNP times (1-g)^periods) so no event is needed for it.
//   increase:  each timer period T or byte counter B: fast recovery Rc = (Rt + Rc)/2 while both
//              step counts are < F; then additive (Rt += R_AI) while one is; hyper (Rt += R_HAI)
//              when both are above F; Rc = (Rt + Rc)/2 in each case, capped at the line rate.
#include <cstdint>

#include "core/time.hpp"
#include "network/packet/packet_config.hpp"

namespace trainsim {

struct DcqcnState {
  double rc = 0;         // current rate, bytes/s
  double rt = 0;         // target rate
  double line_rate = 0;  // the cap Rc and Rt never exceed
  double alpha = 1;      // at alpha_since
  SimTime alpha_since = 0;
  int timer_steps = 0, byte_steps = 0;
  std::int64_t bytes_since_step = 0;  // bytes sent since the last byte-counter step
  bool recovering = false;            // cut and not yet back at the line rate: the increase timer runs

  void reset(double line_rate_Bps, double initial_alpha, SimTime now) {
    *this = DcqcnState{};
    rc = rt = line_rate = line_rate_Bps;
    alpha = initial_alpha;
    alpha_since = now;
  }
};

// alpha at `now`: decayed once per full period since the last update.
double dcqcn_alpha(const DcqcnState& s, const DcqcnConfig& c, SimTime now);
// A CNP reached the sender at `now`: cut the rate.
void dcqcn_on_cnp(DcqcnState& s, const DcqcnConfig& c, SimTime now);
// The increase timer fired. Returns whether the flow still recovers (the timer should re-arm).
bool dcqcn_on_timer(DcqcnState& s, const DcqcnConfig& c);
// `bytes` left the sender; steps the byte counter (and the rate) as many times as B was crossed.
void dcqcn_on_sent(DcqcnState& s, const DcqcnConfig& c, std::int64_t bytes);

}  // namespace trainsim
