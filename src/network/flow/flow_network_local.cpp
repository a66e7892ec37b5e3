// Changes whose effect on the max-min rates can be bounded without solving the whole component.
//
// An allocation is max-min fair exactly when every flow is at its own rate cap or has a
// bottleneck: a saturated link on which no flow is faster than it (Bertsekas & Gallager §6.5.2).
//
// 1. A flow arrives and every link on its path has spare capacity: it takes r = min(its cap,
//    smallest spare on its path, each over the flow's weight on that link) > 0. Every link stays feasible, every other
//    flow's bottleneck (saturated already, so not on the new path) is untouched, and the newcomer is at its cap or
//    saturates a link on which no other flow is faster than r: its bottleneck. No solve at all.
// 2. A flow leaves. Only links on its path lose load. A flow whose bottleneck is one of them
//    could speed up, but such a link is saturated and carries another flow; when no link of the
//    departing flow is both, every other bottleneck is untouched. No solve at all.
// 3. Otherwise the component is re-solved, but only for flows at least as fast as a floor. In
//    progressive filling a flow that leaves at rate r never saturated a link below level r (it
//    would have frozen there), so everything that froze below r froze the same way without it:
//    flows slower than r keep their rates, and flows at r or above stay at r or above. A flow
//    that arrives is the same change run backwards, with r its new rate, which is at least
//    min(its cap, capacity / flows over its links) (a link carrying n flows saturates at a level
//    of at least capacity / n; flows of weight w count w times). A capacity change sets the floor to 0. Several changes
//    at once take the lowest floor. The flows below the floor stay fixed and their rates are taken off the capacity of
//    the links the solve covers.
// Equal-sized flows that finish in order of speed (a collective's flows) thus re-solve only the
// flows still as fast as the one that left, and in a large sparse fabric most arrivals and
// departures cost a walk along one path.
#include <algorithm>
#include <cmath>

#include "network/flow/flow_network.hpp"

namespace trainsim {

namespace {
// Loads are sums of solved rates, so a link the solver saturated can read a few ulps under its
// capacity; floors carry the same noise. Erring towards "saturated" and towards lower floors
// only costs solving what would not have changed.
constexpr double kSaturated = 1 - 1e-9;
constexpr double kFloorMargin = 1 - 1e-9;
// A rate counts as no faster than r within float noise of the solver's arithmetic.
constexpr double kNoFaster = 1 + 1e-12;
}  // namespace

void FlowNetwork::lower_floor(double rate) { solve_floor_ = std::min(solve_floor_, rate * kFloorMargin); }

double FlowNetwork::guaranteed_rate(FlowId flow) const {
  double rate = rate_cap_[static_cast<std::size_t>(flow)];
  for (const PathHop& hop : graph_.path(flow)) {
    double weight = 0;  // of every flow on the link: it saturates at a level of at least capacity / weight
    for (const LinkEntry& e : graph_.flows_on(hop.link)) weight += e.weight;
    rate = std::min(rate, capacity_[static_cast<std::size_t>(hop.link)] / weight);
  }
  return rate;
}

bool FlowNetwork::departure_frees_others(LinkId link) const {
  const auto l = static_cast<std::size_t>(link);
  // Being re-solved already (another change at this instant): count the departure too, so that
  // the floor of that solve also covers it.
  if (link_dirty_[l]) return true;
  const auto flows = graph_.flows_on(link);
  if (flows.size() < 2) return false;  // the departing flow was alone on it
  double load = 0;
  for (const LinkEntry& e : flows) load += e.weight * rate_[static_cast<std::size_t>(e.flow)];
  return load >= capacity_[l] * kSaturated;
}

bool FlowNetwork::place_without_solve(FlowId flow) {
  const auto f = static_cast<std::size_t>(flow);
  double rate = rate_cap_[f];
  hop_load_.clear();
  for (const PathHop& hop : graph_.path(flow)) {
    const auto l = static_cast<std::size_t>(hop.link);
    if (link_dirty_[l]) return false;  // its neighbours' rates are about to change
    double load = 0, fastest_other = 0;
    for (const LinkEntry& e : graph_.flows_on(hop.link)) {
      if (e.flow == flow) continue;
      const double r = rate_[static_cast<std::size_t>(e.flow)];  // kNotYetSolved: no spare
      load += e.weight * r;
      fastest_other = std::max(fastest_other, r);
    }
    const double share = (capacity_[l] - load) / hop.weight;
    hop_load_.push_back({share, fastest_other});
    rate = std::min(rate, share);
  }
  if (!(rate > 0) || !std::isfinite(rate)) return false;
  bool has_bottleneck = rate == rate_cap_[f];
  for (const HopLoad& h : hop_load_) {
    has_bottleneck = has_bottleneck || (h.share == rate && h.fastest_other <= rate * kNoFaster);
  }
  if (!has_bottleneck) return false;
  set_rate(flow, rate);
  return true;
}

}  // namespace trainsim
