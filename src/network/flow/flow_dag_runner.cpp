#include "network/flow/flow_dag_runner.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

#include "core/check.hpp"
#include "core/error.hpp"
#include "network/indexed_heap.hpp"

namespace trainsim {

std::uint32_t TransferDag::add(std::span<const LinkId> path, std::int64_t bytes, SimTime latency,
                               std::span<const std::uint32_t> deps, double rate_cap_Bps) {
  DagTransfer t;
  t.path_begin = static_cast<std::uint32_t>(path_links.size());
  path_links.insert(path_links.end(), path.begin(), path.end());
  t.path_end = static_cast<std::uint32_t>(path_links.size());
  t.bytes = bytes;
  t.latency = latency;
  t.rate_cap_Bps = rate_cap_Bps;
  t.dep_begin = static_cast<std::uint32_t>(dep_index.size());
  dep_index.insert(dep_index.end(), deps.begin(), deps.end());
  t.dep_end = static_cast<std::uint32_t>(dep_index.size());
  transfers.push_back(t);
  return static_cast<std::uint32_t>(transfers.size() - 1);
}

namespace {

// Rejects what would otherwise fail half-way through a run, naming the transfer.
void validate(const FlowNetwork& network, const TransferDag& dag, std::span<const CapacityChange> changes) {
  const auto links = static_cast<std::int64_t>(network.num_links());
  for (std::size_t i = 0; i < dag.transfers.size(); ++i) {
    const DagTransfer& t = dag.transfers[i];
    TRAINSIM_CHECK(t.path_begin <= t.path_end && t.path_end <= dag.path_links.size(),
                   fmt::format("flow DAG: transfer {}: path range [{}, {}) is outside the {} path links", i,
                               t.path_begin, t.path_end, dag.path_links.size()));
    TRAINSIM_CHECK(t.path_begin != t.path_end, fmt::format("flow DAG: transfer {}: empty path", i));
    for (std::uint32_t p = t.path_begin; p < t.path_end; ++p) {
      const LinkId l = dag.path_links[p];
      TRAINSIM_CHECK(
          l >= 0 && l < links,
          fmt::format("flow DAG: transfer {}: unknown link id {} (the network has links 0..{})", i, l, links - 1));
    }
    TRAINSIM_CHECK(t.bytes >= 0, fmt::format("flow DAG: transfer {}: bytes {} is negative", i, t.bytes));
    TRAINSIM_CHECK(t.latency >= 0, fmt::format("flow DAG: transfer {}: latency {} ps is negative", i, t.latency));
    TRAINSIM_CHECK(t.rate_cap_Bps > 0,
                   fmt::format("flow DAG: transfer {}: rate cap {} B/s; expected a number > 0", i, t.rate_cap_Bps));
    TRAINSIM_CHECK(t.dep_begin <= t.dep_end && t.dep_end <= dag.dep_index.size(),
                   fmt::format("flow DAG: transfer {}: dependency range [{}, {}) is outside the {} dependencies", i,
                               t.dep_begin, t.dep_end, dag.dep_index.size()));
    for (std::uint32_t d = t.dep_begin; d < t.dep_end; ++d) {
      TRAINSIM_CHECK(dag.dep_index[d] < i,
                     fmt::format("flow DAG: transfer {} depends on transfer {}; dependencies must be earlier transfers",
                                 i, dag.dep_index[d]));
    }
  }
  for (std::size_t c = 0; c < changes.size(); ++c) {
    const CapacityChange& ch = changes[c];
    TRAINSIM_CHECK(ch.link >= 0 && ch.link < links,
                   fmt::format("flow DAG: capacity change {}: unknown link id {}", c, ch.link));
    TRAINSIM_CHECK(std::isfinite(ch.capacity_Bps) && ch.capacity_Bps >= 0,
                   fmt::format("flow DAG: capacity change {}: capacity {} B/s; expected a finite number >= 0", c,
                               ch.capacity_Bps));
    TRAINSIM_CHECK(ch.time >= network.now(),
                   fmt::format("flow DAG: capacity change {} at {} ps is before the run starts ({} ps)", c, ch.time,
                               network.now()));
  }
}

}  // namespace

DagSchedule run_flow_dag(FlowNetwork& network, const TransferDag& dag,
                         std::span<const CapacityChange> capacity_changes) {
  validate(network, dag, capacity_changes);
  const std::size_t n = dag.transfers.size();
  const SimTime t0 = network.now();
  DagSchedule out;
  out.ready.assign(n, kNever);
  out.start.assign(n, kNever);
  out.finish.assign(n, kNever);

  // Who waits for whom, reversed (CSR): finishing a transfer releases its dependents.
  std::vector<std::uint32_t> waiting(n), dependents_begin(n + 1, 0), dependents(dag.dep_index.size());
  for (std::size_t i = 0; i < n; ++i) {
    const DagTransfer& t = dag.transfers[i];
    waiting[i] = t.dep_end - t.dep_begin;
    for (std::uint32_t d = t.dep_begin; d < t.dep_end; ++d) ++dependents_begin[dag.dep_index[d] + 1];
  }
  std::partial_sum(dependents_begin.begin(), dependents_begin.end(), dependents_begin.begin());
  {
    std::vector<std::uint32_t> fill(dependents_begin.begin(), dependents_begin.end() - 1);
    for (std::size_t i = 0; i < n; ++i) {
      const DagTransfer& t = dag.transfers[i];
      for (std::uint32_t d = t.dep_begin; d < t.dep_end; ++d)
        dependents[fill[dag.dep_index[d]]++] = static_cast<std::uint32_t>(i);
    }
  }

  std::vector<std::size_t> change_order(capacity_changes.size());
  std::iota(change_order.begin(), change_order.end(), std::size_t{0});
  std::stable_sort(change_order.begin(), change_order.end(),
                   [&](std::size_t a, std::size_t b) { return capacity_changes[a].time < capacity_changes[b].time; });

  // Transfers waiting out their latency, by the time they begin to transmit (ties by index).
  IndexedMinHeap<SimTime> starting;
  starting.reserve_ids(n);
  const auto make_ready = [&](std::size_t i, SimTime t) {
    out.ready[i] = t;
    starting.set(static_cast<std::int32_t>(i), t + dag.transfers[i].latency);
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) make_ready(i, t0);
  }

  // By FlowId: the transfer a flow carries; flows already in the network when the run began
  // (background traffic) map to none and are only competition.
  constexpr std::uint32_t kBackground = UINT32_MAX;
  std::vector<std::uint32_t> transfer_of;
  std::vector<FlowId> finished;
  std::size_t next_change = 0, done = 0;
  SimTime last_finish = t0;
  while (done < n) {
    SimTime t = network.next_completion();
    if (!starting.empty()) t = std::min(t, starting.top_key());
    if (next_change < change_order.size()) t = std::min(t, capacity_changes[change_order[next_change]].time);
    if (t == kNever) {
      std::vector<FlowId> stalled;
      network.stalled_flows(stalled);
      std::size_t in_flight = 0;
      std::uint32_t first = 0;
      for (FlowId f : stalled) {
        const std::uint32_t i =
            static_cast<std::size_t>(f) < transfer_of.size() ? transfer_of[static_cast<std::size_t>(f)] : kBackground;
        if (i == kBackground) continue;
        if (in_flight++ == 0) first = i;
      }
      throw DeadlockError(fmt::format(
          "flow DAG: {} of {} transfers can never finish: {} in flight are stalled on links with zero capacity "
          "(first: transfer {}) and the rest wait for them",
          n - done, n, in_flight, first));
    }
    network.advance(t, finished);
    for (FlowId f : finished) {
      if (static_cast<std::size_t>(f) >= transfer_of.size() || transfer_of[static_cast<std::size_t>(f)] == kBackground)
        continue;
      const std::uint32_t i = transfer_of[static_cast<std::size_t>(f)];
      transfer_of[static_cast<std::size_t>(f)] = kBackground;  // the slot may carry another flow next
      out.finish[i] = t;
      last_finish = t;
      ++done;
      for (std::uint32_t k = dependents_begin[i]; k < dependents_begin[i + 1]; ++k) {
        if (--waiting[dependents[k]] == 0) make_ready(dependents[k], t);
      }
    }
    while (next_change < change_order.size() && capacity_changes[change_order[next_change]].time <= t) {
      const CapacityChange& ch = capacity_changes[change_order[next_change++]];
      network.set_capacity(ch.link, ch.capacity_Bps, t);
    }
    while (!starting.empty() && starting.top_key() <= t) {
      const auto i = static_cast<std::size_t>(starting.top_id());
      starting.pop();
      const DagTransfer& tr = dag.transfers[i];
      out.start[i] = t;
      const FlowId f =
          network.start(t, std::span<const LinkId>(dag.path_links.data() + tr.path_begin, tr.path_end - tr.path_begin),
                        tr.bytes, tr.rate_cap_Bps);
      if (static_cast<std::size_t>(f) >= transfer_of.size())
        transfer_of.resize(static_cast<std::size_t>(f) + 1, kBackground);
      transfer_of[static_cast<std::size_t>(f)] = static_cast<std::uint32_t>(i);
    }
  }
  out.makespan = last_finish - t0;
  return out;
}

}  // namespace trainsim
