#pragma once
// The flow-level network (docs/network-model.md): flows share link bandwidth max-min fairly and
// the network moves from event to event (a flow starts, a flow finishes, a capacity changes)
// instead of tick by tick. Between events every rate is constant, so the next completion is known
// exactly. At an event only what the change can reach is re-solved: nothing when the newcomer
// fits in spare capacity or the leaver freed no one's bottleneck, otherwise the flows of the
// touched components at least as fast as a floor (flow_network_local.cpp).
//
// Use:
//   FlowNetwork net(capacities_Bps, latencies);
//   FlowId f = net.start(now, path, bytes);               // several starts at one instant are
//   for (SimTime t; (t = net.next_completion()) != kNever;) //   solved together, once
//     net.advance(t, finished);                            // then start the flows that depended on them
//
// Time only moves forward. start() and set_capacity() at a time later than now() first move the
// network there; flows that finish on the way are handed out by the next advance().
//
// Numerics: rates are doubles in bytes/s; a flow's remaining bytes are brought up to date whenever
// its rate changes, and its completion is the first picosecond at which it has sent all its bytes
// (ceil of remaining/rate, exact quotients within float noise taken as they are). It never finishes
// more than float noise early (≤ 1e-14 of its transfer time) nor more than 1 ps late.
#include <cstdint>
#include <span>
#include <vector>

#include "core/time.hpp"
#include "network/indexed_heap.hpp"
#include "network/link_usage.hpp"
#include "network/transfer_network.hpp"
#include "network/flow/max_min_solver.hpp"
#include "network/network_types.hpp"
#include "network/flow/sharing_graph.hpp"

namespace trainsim {

class FlowNetwork final : public TransferNetwork {
 public:
  // One entry per link in both vectors (bytes/s ≥ 0, latency ≥ 0); statistics start at `start`.
  FlowNetwork(std::vector<double> capacity_Bps, std::vector<SimTime> latency, SimTime start = 0);

  std::size_t num_links() const { return capacity_.size(); }
  SimTime now() const { return now_; }
  double capacity(LinkId link) const;
  SimTime latency(LinkId link) const;
  // Sum of the links' latencies: the propagation delay the caller adds before a flow transmits.
  SimTime path_latency(std::span<const LinkId> path) const;
  SimTime delay_before_start(std::span<const LinkId> path) const override { return path_latency(path); }

  // A flow of `bytes` starts transmitting at `now` over `path` (no link twice), at most at
  // `rate_cap_Bps` (its NIC, PCIe or protocol limit). Its id stays valid until it is reported
  // finished; the id may then be reused by a later start().
  FlowId start(SimTime now, std::span<const LinkId> path, std::int64_t bytes,
               double rate_cap_Bps = kUnlimitedRate) override;
  // A coflow: several transfers that move at one pace, as one flow of `bytes` whose hop h carries
  // weights[h] bytes per byte of the flow (finite, > 0; one per hop): its parts' bytes over that link
  // divided by `bytes`. It shares each link max-min fairly by its rate, loading the link with
  // weight x rate (max_min_solver.hpp), and finishes when its last part would. An all-to-all of
  // thousands of equal parts thus costs one flow (FlowBackend). Statistics count its links' bytes.
  FlowId start(SimTime now, std::span<const LinkId> path, std::span<const float> weights, std::int64_t bytes);

  // From `now` on, `link` carries `capacity_Bps` (0 = down: the flows crossing it stall until it
  // comes back; the others share what is left max-min fairly as usual).
  void set_capacity(LinkId link, double capacity_Bps, SimTime now) override;

  // The earliest time an active flow will finish at the current rates, kNever if none will (no
  // flows, or all stalled). Not const: flows started since the last call are given their rates
  // here, so that many starts at one instant cost one solve.
  SimTime next_completion() override;

  // Moves the network to `t` (≥ now()), finishing every flow whose completion is ≤ t in time
  // order and re-solving the rates after each completion instant. `finished` is overwritten with
  // the flows that finished since the last advance(), in order of (finish time, id).
  void advance(SimTime t, std::vector<FlowId>& finished) override;

  std::size_t active_flows() const { return active_; }
  bool is_active(FlowId flow) const;
  double rate(FlowId flow);                   // bytes/s now (0 while stalled)
  double remaining_bytes(FlowId flow) const;  // at now()
  SimTime start_time(FlowId flow) const;
  // The active flows that cannot move because a link on their path is down, by id.
  void stalled_flows(std::vector<FlowId>& out);

  // One entry per link, at now().
  std::vector<LinkStats> link_statistics() const override;

  // Re-solving work so far: the solves and the links and flows they covered (the cost of a run
  // grows with these, not with the number of flows in the network).
  struct SolveCounters {
    std::int64_t solves = 0, links = 0, flows = 0;
    std::int64_t placed_directly = 0;  // new flows that took spare capacity without a solve
  };
  const SolveCounters& solve_counters() const { return counters_; }

 private:
  struct FlowState {
    std::int64_t bytes = 0;
    double remaining = 0;     // bytes left at last_update
    SimTime last_update = 0;  // when `remaining` was brought up to date
    SimTime started = 0;
    bool active = false;
  };
  // rate_ of a flow started since the last solve: above every real rate, so that the component
  // search never leaves it out and load sums see that the link has a newcomer.
  static constexpr double kNotYetSolved = kUnlimitedRate;

  void check_link(LinkId link, const char* what) const;
  FlowId start_checked(std::span<const LinkId> path, std::span<const float> weights, std::int64_t bytes,
                       double rate_cap_Bps);
  const FlowState& checked_flow(FlowId flow, const char* what) const;
  void move_to(SimTime now, const char* what);
  void run_until(SimTime t, std::vector<FlowId>& finished);
  void settle();
  void set_rate(FlowId flow, double rate);
  void finish(FlowId flow, std::vector<FlowId>& finished);
  void mark_dirty(LinkId link);
  // Local rules that spare or shrink a component solve (flow_network_local.cpp).
  bool place_without_solve(FlowId flow);
  double guaranteed_rate(FlowId flow) const;
  bool departure_frees_others(LinkId link) const;
  void lower_floor(double rate);
  double remaining_at_now(FlowId flow) const;

  std::vector<double> capacity_;
  std::vector<SimTime> latency_;
  std::vector<LinkUsage> usage_;
  SharingGraph graph_;
  MaxMinSolver solver_;

  // By flow slot.
  std::vector<FlowState> flows_;
  std::vector<double> rate_, rate_cap_;  // bytes/s; apart from FlowState: the solver reads them
  std::vector<double> solved_rate_;      // by position in component_flows_
  std::vector<FlowId> free_slots_;
  IndexedMinHeap<SimTime> completions_;  // flows with a finite completion time
  std::size_t active_ = 0;

  // Pending changes: flows started since the last solve, and links whose component must be
  // re-solved before rates are used again.
  std::vector<FlowId> pending_starts_;
  std::vector<LinkId> dirty_links_;
  std::vector<char> link_dirty_;
  // Flows slower than this keep their rates through the pending changes (flow_network_local.cpp),
  // so the re-solve leaves them out.
  double solve_floor_ = kUnlimitedRate;
  std::vector<LinkId> component_links_;
  std::vector<FlowId> component_flows_;
  std::vector<FlowId> unreported_;        // finished while start()/set_capacity() moved time
  std::vector<std::uint32_t> path_seen_;  // by link: stamp for the no-link-twice check
  struct HopLoad {
    double share, fastest_other;  // share: the link's spare capacity over this flow's weight on it
  };
  std::vector<HopLoad> hop_load_;  // scratch for place_without_solve, by hop
  std::uint32_t path_epoch_ = 0;

  SolveCounters counters_;
  SimTime start_, now_;
};

}  // namespace trainsim
