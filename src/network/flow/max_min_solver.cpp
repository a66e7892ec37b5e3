#include "network/flow/max_min_solver.hpp"

#include <algorithm>
#include <cmath>

namespace trainsim {

namespace {
// std heap algorithms build max-heaps; this order puts the smallest (share, entry) on top.
// A function object, not a function pointer, so that the comparisons inline.
// Spelled out: C++20 derives pair's < from <=>, which for double goes through partial_ordering
// and costs several times more in this, the solver's innermost comparison.
struct Later {
  bool operator()(const std::pair<double, std::int32_t>& a, const std::pair<double, std::int32_t>& b) const {
    return a.first > b.first || (a.first == b.first && a.second > b.second);
  }
};
constexpr Later later;
constexpr double kRising = -1;  // rates[i] while flow i is not frozen

// Heap entries name a local link j as j and a local flow's cap as ~i (negative).
constexpr std::int32_t cap_entry(std::size_t i) { return ~static_cast<std::int32_t>(i); }
}  // namespace

void MaxMinSolver::freeze(const SharingGraph& graph, FlowId flow, std::size_t local, double rate,
                          std::vector<double>& rates) {
  rates[local] = rate;
  --rising_flows_;
  for (const PathHop& hop : graph.path(flow)) {
    const auto j = static_cast<std::size_t>(link_local_[static_cast<std::size_t>(hop.link)]);
    // Rounding can leave a saturated link a hair below zero; a negative share would mean nothing.
    spare_[j] = std::max(0.0, spare_[j] - hop.weight * rate);
    --rising_[j];
    rising_weight_[j] -= hop.weight;
  }
}

void MaxMinSolver::solve(const SharingGraph& graph, std::span<const double> capacity, std::span<const double> rate_cap,
                         std::span<const double> current_rate, std::span<const LinkId> links,
                         std::span<const FlowId> flows, std::vector<double>& rates) {
  if (link_local_.size() < graph.num_links()) link_local_.resize(graph.num_links());
  if (flow_local_.size() < rate_cap.size()) {
    flow_local_.resize(rate_cap.size());
    member_.resize(rate_cap.size(), 0);
  }
  if (++epoch_ == 0) {  // wrapped: clear stale stamps
    std::fill(member_.begin(), member_.end(), 0);
    epoch_ = 1;
  }
  spare_.resize(links.size());
  rising_.resize(links.size());
  rising_weight_.resize(links.size());
  rates.assign(flows.size(), kRising);
  heap_.clear();

  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto f = static_cast<std::size_t>(flows[i]);
    flow_local_[f] = static_cast<std::int32_t>(i);
    member_[f] = epoch_;
  }
  for (std::size_t j = 0; j < links.size(); ++j) {
    const auto l = static_cast<std::size_t>(links[j]);
    link_local_[l] = static_cast<std::int32_t>(j);
    double spare = capacity[l], weight = 0;
    std::int32_t rising = 0;
    for (const LinkEntry& e : graph.flows_on(links[j])) {
      const auto f = static_cast<std::size_t>(e.flow);
      if (member_[f] == epoch_) {
        ++rising;
        weight += e.weight;
      } else {
        spare -= e.weight * current_rate[f];  // held at its rate: the change cannot reach it
      }
    }
    spare_[j] = std::max(0.0, spare);
    rising_[j] = rising;
    rising_weight_[j] = weight;
    if (rising > 1) heap_.emplace_back(spare_[j] / weight, static_cast<std::int32_t>(j));
  }
  // A link only one flow of the solve crosses limits that flow exactly as a rate cap would (it
  // saturates when that flow reaches the link's spare capacity), so it is folded into the flow's
  // cap and stays off the heap: in a large fabric most links of a small component are such
  // private links. Caps never go stale, so they share the heap with the links' shares.
  for (std::size_t i = 0; i < flows.size(); ++i) {
    const auto f = static_cast<std::size_t>(flows[i]);
    double cap = rate_cap[f];
    for (const PathHop& hop : graph.path(flows[i])) {
      const auto j = static_cast<std::size_t>(link_local_[static_cast<std::size_t>(hop.link)]);
      if (rising_[j] == 1) cap = std::min(cap, spare_[j] / hop.weight);
    }
    if (std::isfinite(cap)) heap_.emplace_back(cap, cap_entry(i));
  }
  std::make_heap(heap_.begin(), heap_.end(), later);

  rising_flows_ = flows.size();
  while (rising_flows_ > 0 && !heap_.empty()) {
    const auto [filed, entry] = heap_.front();
    std::pop_heap(heap_.begin(), heap_.end(), later);
    if (entry < 0) {  // a flow reaches its cap (or its private link's capacity)
      heap_.pop_back();
      const auto i = static_cast<std::size_t>(~entry);
      if (rates[i] == kRising) freeze(graph, flows[i], i, filed, rates);
      continue;
    }
    const auto j = static_cast<std::size_t>(entry);
    if (rising_[j] == 0) {  // every flow on it froze elsewhere
      heap_.pop_back();
      continue;
    }
    // Every flow still rising on the link gains the same rate; a flow of weight w takes w times it.
    const double share = spare_[j] / rising_weight_[j];
    if (share > filed) {  // grew since filed: file it again at its true share
      heap_.back().first = share;
      std::push_heap(heap_.begin(), heap_.end(), later);
      continue;
    }
    // The smallest share of all (others are filed at no less, and shares only grow): a bottleneck.
    heap_.pop_back();
    for (const LinkEntry& e : graph.flows_on(links[j])) {
      const auto f = static_cast<std::size_t>(e.flow);
      if (member_[f] != epoch_) continue;
      const auto i = static_cast<std::size_t>(flow_local_[f]);
      if (rates[i] == kRising) freeze(graph, e.flow, i, share, rates);
    }
  }
}

}  // namespace trainsim
