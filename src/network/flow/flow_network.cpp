#include "network/flow/flow_network.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/check.hpp"
#include "core/error.hpp"
#include "network/link_checks.hpp"
#include "network/transmit_time.hpp"

namespace trainsim {

namespace {
// The bytes a hop of weight `weight` carried for a flow of `bytes` (exact for a plain flow's 1).
std::int64_t carried(std::int64_t bytes, float weight) {
  return weight == 1.0F ? bytes : std::llround(static_cast<double>(bytes) * weight);
}
}  // namespace

FlowNetwork::FlowNetwork(std::vector<double> capacity_Bps, std::vector<SimTime> latency, SimTime start)
    : capacity_(std::move(capacity_Bps)),
      latency_(std::move(latency)),
      graph_(capacity_.size()),
      link_dirty_(capacity_.size(), 0),
      path_seen_(capacity_.size(), 0),
      start_(start),
      now_(start) {
  link_checks::check_arrays(capacity_, latency_, "flow network");
  usage_.reserve(capacity_.size());
  for (std::size_t l = 0; l < capacity_.size(); ++l) { usage_.emplace_back(capacity_[l], start); }
}

void FlowNetwork::check_link(LinkId link, const char* what) const {
  link_checks::check_id(link, capacity_.size(), "flow network", what);
}

const FlowNetwork::FlowState& FlowNetwork::checked_flow(FlowId flow, const char* what) const {
  TRAINSIM_CHECK(
      flow >= 0 && static_cast<std::size_t>(flow) < flows_.size() && flows_[static_cast<std::size_t>(flow)].active,
      fmt::format("flow network: {}: flow {} is not active", what, flow));
  return flows_[static_cast<std::size_t>(flow)];
}

double FlowNetwork::capacity(LinkId link) const {
  check_link(link, "capacity");
  return capacity_[static_cast<std::size_t>(link)];
}

SimTime FlowNetwork::latency(LinkId link) const {
  check_link(link, "latency");
  return latency_[static_cast<std::size_t>(link)];
}

SimTime FlowNetwork::path_latency(std::span<const LinkId> path) const {
  return link_checks::path_latency(path, latency_, "flow network");
}

FlowId FlowNetwork::start(SimTime now, std::span<const LinkId> path, std::int64_t bytes, double rate_cap_Bps) {
  // Everything is checked before anything changes, so a rejected flow leaves the network as it was.
  link_checks::check_start(path, bytes, rate_cap_Bps, now, now_, path_seen_, path_epoch_, "flow network");
  move_to(now, "start");
  return start_checked(path, {}, bytes, rate_cap_Bps);
}

FlowId FlowNetwork::start(SimTime now, std::span<const LinkId> path, std::span<const float> weights,
                          std::int64_t bytes) {
  link_checks::check_start(path, bytes, kUnlimitedRate, now, now_, path_seen_, path_epoch_, "flow network");
  TRAINSIM_CHECK(
      weights.size() == path.size(),
      fmt::format("flow network: start: {} hop weights for a path of {} links", weights.size(), path.size()));
  for (float w : weights)
    TRAINSIM_CHECK(std::isfinite(w) && w > 0,
                   fmt::format("flow network: start: hop weight {}; expected a finite number > 0", w));
  move_to(now, "start");
  return start_checked(path, weights, bytes, kUnlimitedRate);
}

FlowId FlowNetwork::start_checked(std::span<const LinkId> path, std::span<const float> weights, std::int64_t bytes,
                                  double rate_cap_Bps) {
  FlowId flow;
  if (!free_slots_.empty()) {
    flow = free_slots_.back();
    free_slots_.pop_back();
  } else {
    if (flows_.size() >= static_cast<std::size_t>(INT32_MAX)) throw Error("flow network: too many active flows");
    flow = static_cast<FlowId>(flows_.size());
    flows_.emplace_back();
    rate_.push_back(0);
    rate_cap_.push_back(0);
    completions_.reserve_ids(flows_.size());
  }
  const auto f = static_cast<std::size_t>(flow);
  flows_[f] = FlowState{bytes, static_cast<double>(bytes), now_, now_, true};
  rate_[f] = kNotYetSolved;
  rate_cap_[f] = rate_cap_Bps;
  graph_.add(flow, path, weights);
  for (LinkId link : path) usage_[static_cast<std::size_t>(link)].flow_added(now_);
  pending_starts_.push_back(flow);
  ++active_;
  return flow;
}

void FlowNetwork::set_capacity(LinkId link, double capacity_Bps, SimTime now) {
  check_link(link, "set_capacity");
  TRAINSIM_CHECK(std::isfinite(capacity_Bps) && capacity_Bps >= 0,
                 fmt::format("flow network: set_capacity: link {} capacity {} B/s; expected a finite number >= 0", link,
                             capacity_Bps));
  TRAINSIM_CHECK(now >= now_,
                 fmt::format("flow network: set_capacity at {} ps is before the current time {} ps", now, now_));
  move_to(now, "set_capacity");
  const auto l = static_cast<std::size_t>(link);
  if (capacity_[l] == capacity_Bps) return;
  usage_[l].capacity_changed(capacity_Bps, now_);
  capacity_[l] = capacity_Bps;
  mark_dirty(link);
  lower_floor(0);  // any flow of the component may change
}

SimTime FlowNetwork::next_completion() {
  settle();
  return completions_.empty() ? kNever : completions_.top_key();
}

void FlowNetwork::advance(SimTime t, std::vector<FlowId>& finished) {
  TRAINSIM_CHECK(t >= now_, fmt::format("flow network: advance to {} ps is before the current time {} ps", t, now_));
  finished.clear();
  finished.insert(finished.end(), unreported_.begin(), unreported_.end());
  unreported_.clear();
  run_until(t, finished);
  // Reported now, so the slots can serve new flows (LIFO: deterministic reuse).
  free_slots_.insert(free_slots_.end(), finished.begin(), finished.end());
}

void FlowNetwork::move_to(SimTime now, const char* what) {
  TRAINSIM_CHECK(now >= now_,
                 fmt::format("flow network: {} at {} ps is before the current time {} ps", what, now, now_));
  if (now > now_) run_until(now, unreported_);
}

void FlowNetwork::run_until(SimTime t, std::vector<FlowId>& finished) {
  for (;;) {
    settle();
    if (completions_.empty() || completions_.top_key() > t) break;
    now_ = completions_.top_key();
    // Every flow finishing at this instant goes before any rate is re-solved: they all free
    // bandwidth at once, and the survivors get one solve.
    while (!completions_.empty() && completions_.top_key() == now_) {
      const FlowId flow = completions_.top_id();
      completions_.pop();
      finish(flow, finished);
    }
    // Reached t: leave the re-solve to the next call, so the flows the caller starts now (the
    // usual reaction to a completion) are solved together with the ones that just ended. A
    // survivor can only complete at t itself if float noise left it no bytes, and then the next
    // next_completion() says t.
    if (now_ == t) return;
  }
  now_ = t;
}

void FlowNetwork::mark_dirty(LinkId link) {
  char& dirty = link_dirty_[static_cast<std::size_t>(link)];
  if (dirty) return;
  dirty = 1;
  dirty_links_.push_back(link);
}

void FlowNetwork::finish(FlowId flow, std::vector<FlowId>& finished) {
  const auto f = static_cast<std::size_t>(flow);
  FlowState& s = flows_[f];
  bool frees_others = false;
  for (const PathHop& hop : graph_.path(flow)) {
    usage_[static_cast<std::size_t>(hop.link)].flow_removed(now_, carried(s.bytes, hop.weight));
    if (departure_frees_others(hop.link)) {
      mark_dirty(hop.link);
      frees_others = true;
    }
  }
  if (frees_others) lower_floor(rate_[f]);  // flows slower than it keep their rates
  graph_.remove(flow);
  s.active = false;
  s.remaining = 0;
  s.last_update = now_;
  rate_[f] = 0;
  --active_;
  finished.push_back(flow);
}

// Re-solves the components of the links changed since the last solve: the only rates that can
// differ (max-min allocations of disjoint components are independent).
void FlowNetwork::settle() {
  // New flows first: most can be placed without disturbing anyone (flow_network_local.cpp); the
  // rest mark their links for the component solve below.
  for (FlowId flow : pending_starts_) {
    if (place_without_solve(flow)) {
      ++counters_.placed_directly;
      continue;
    }
    lower_floor(guaranteed_rate(flow));
    for (const PathHop& hop : graph_.path(flow)) mark_dirty(hop.link);
  }
  pending_starts_.clear();
  if (dirty_links_.empty()) return;
  component_links_.clear();
  component_flows_.clear();
  graph_.collect_components(dirty_links_, rate_, solve_floor_, component_links_, component_flows_);
  for (LinkId link : dirty_links_) link_dirty_[static_cast<std::size_t>(link)] = 0;
  dirty_links_.clear();
  solve_floor_ = kUnlimitedRate;
  if (component_flows_.empty()) return;
  ++counters_.solves;
  counters_.links += static_cast<std::int64_t>(component_links_.size());
  counters_.flows += static_cast<std::int64_t>(component_flows_.size());
  solver_.solve(graph_, capacity_, rate_cap_, rate_, component_links_, component_flows_, solved_rate_);
  for (std::size_t i = 0; i < component_flows_.size(); ++i) set_rate(component_flows_[i], solved_rate_[i]);
}

double FlowNetwork::remaining_at_now(FlowId flow) const {
  const auto f = static_cast<std::size_t>(flow);
  const FlowState& s = flows_[f];
  // A flow not yet solved has not moved (it started at now_).
  if (now_ == s.last_update || rate_[f] == 0) return s.remaining;
  const double sent = rate_[f] * static_cast<double>(now_ - s.last_update) / static_cast<double>(kPicosPerSecond);
  // The completion time is rounded up, so up to the moment of completion this stays ≥ 0 but for
  // float noise.
  return std::max(0.0, s.remaining - sent);
}

void FlowNetwork::set_rate(FlowId flow, double rate) {
  const auto f = static_cast<std::size_t>(flow);
  // An unchanged rate keeps its completion time as computed: no drift from repeated updates.
  if (rate == rate_[f]) return;
  FlowState& s = flows_[f];
  s.remaining = remaining_at_now(flow);
  s.last_update = now_;
  rate_[f] = rate;
  const SimTime dt = transmit_time(s.remaining, rate);
  if (dt == kNever || dt > kNever - now_) {
    completions_.erase(flow);
  } else {
    completions_.set(flow, now_ + dt);
  }
}

bool FlowNetwork::is_active(FlowId flow) const {
  return flow >= 0 && static_cast<std::size_t>(flow) < flows_.size() && flows_[static_cast<std::size_t>(flow)].active;
}

double FlowNetwork::rate(FlowId flow) {
  checked_flow(flow, "rate");
  settle();
  return rate_[static_cast<std::size_t>(flow)];
}

double FlowNetwork::remaining_bytes(FlowId flow) const {
  checked_flow(flow, "remaining_bytes");
  return remaining_at_now(flow);
}

SimTime FlowNetwork::start_time(FlowId flow) const { return checked_flow(flow, "start_time").started; }

void FlowNetwork::stalled_flows(std::vector<FlowId>& out) {
  settle();
  out.clear();
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    const FlowState& s = flows_[f];
    if (s.active && rate_[f] == 0 && s.remaining > 0) out.push_back(static_cast<FlowId>(f));
  }
}

std::vector<LinkStats> FlowNetwork::link_statistics() const {
  std::vector<double> in_flight(capacity_.size(), 0.0);
  for (std::size_t f = 0; f < flows_.size(); ++f) {
    const FlowState& s = flows_[f];
    if (!s.active) continue;
    const double sent = static_cast<double>(s.bytes) - remaining_at_now(static_cast<FlowId>(f));
    for (const PathHop& hop : graph_.path(static_cast<FlowId>(f)))
      in_flight[static_cast<std::size_t>(hop.link)] += sent * hop.weight;
  }
  std::vector<LinkStats> stats;
  stats.reserve(capacity_.size());
  for (std::size_t l = 0; l < capacity_.size(); ++l) stats.push_back(usage_[l].at(now_, in_flight[l]));
  return stats;
}

}  // namespace trainsim
