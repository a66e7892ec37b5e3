#pragma once
// Max-min fair rates by progressive filling (Bertsekas & Gallager, "Data Networks", §6.5.2): raise
// every flow's rate together; when a link saturates (its spare capacity divided by the flows still
// rising on it is the smallest such share) or a flow reaches its own rate cap, freeze those flows
// at that rate and continue with the rest. A flow whose hop has weight w (a coflow: several
// transfers moving at one pace, FlowNetwork::start) loads that link with w times its rate, so the
// link's share is its spare capacity over the rising flows' weights; fairness stays on the rates. The result is the
// unique allocation in which no flow can go faster without slowing a flow that is no faster than it.
//
// It knows nothing of time or collectives (the separation SimGrid keeps between its lmm solver and
// its network models): FlowNetwork calls it on the part of a component a change can reach, with
// the other flows on those links held at their rates.
//
// Cost: O(H + (L + F) log(L + F)) for H flow-hops, L links and F flows solved, plus a heap
// operation each time a link is found stale. A link's share only grows while flows freeze (a
// flow frozen below a link's share leaves more for the rest), so freezing just updates counters
// and the heap of shares is corrected lazily: a link taken from the top whose share has grown
// goes back in with its new share. Scratch storage is indexed by the solve's own numbering, so it
// stays small and hot whatever the size of the network, and is reused between solves.
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "network/flow/sharing_graph.hpp"

namespace trainsim {

class MaxMinSolver {
 public:
  // Writes rates[i] (bytes/s) for flows[i]. `links` holds every link of every flow in `flows` (as
  // SharingGraph::collect_components returns); flows on those links that are not in `flows` keep
  // `current_rate` and only take that much off their links' capacity. `capacity` is by link,
  // `rate_cap` and `current_rate` by flow slot. A zero-capacity link gives its flows rate 0.
  void solve(const SharingGraph& graph, std::span<const double> capacity, std::span<const double> rate_cap,
             std::span<const double> current_rate, std::span<const LinkId> links, std::span<const FlowId> flows,
             std::vector<double>& rates);

 private:
  void freeze(const SharingGraph& graph, FlowId flow, std::size_t local, double rate, std::vector<double>& rates);

  std::vector<std::int32_t> link_local_;  // by link id: its index in `links` during a solve
  std::vector<std::int32_t> flow_local_;  // by flow slot: its index in `flows` during a solve
  std::vector<std::uint32_t> member_;     // by flow slot: == epoch_ while it is in `flows`
  std::uint32_t epoch_ = 0;
  std::vector<double> spare_;          // by local link: capacity not yet given to frozen flows
  std::vector<std::int32_t> rising_;   // by local link: flows on it still rising
  std::vector<double> rising_weight_;  // by local link: their weights' sum (rising_ for plain flows)
  // (share, local link j) or (cap, ~local flow i), smallest first; a link's share may be stale.
  std::vector<std::pair<double, std::int32_t>> heap_;
  std::size_t rising_flows_ = 0;
};

}  // namespace trainsim
