#pragma once
// Helpers for the network tests: braced paths, and running a network until it is idle.
#include <utility>
#include <vector>

#include "network/flow/flow_network.hpp"

namespace trainsim::testing {

inline constexpr double kGBps = 1e9;  // bytes/s
inline constexpr std::int64_t kGB = 1'000'000'000;
inline constexpr SimTime kMs = 1'000'000'000;  // picoseconds
inline constexpr SimTime kUs = 1'000'000;      // picoseconds

inline FlowId start_flow(FlowNetwork& net, SimTime now, std::vector<LinkId> path, std::int64_t bytes,
                         double rate_cap = kUnlimitedRate) {
  return net.start(now, path, bytes, rate_cap);
}

// Advances from completion to completion until no flow can finish; returns (flow, finish time).
inline std::vector<std::pair<FlowId, SimTime>> run_to_idle(FlowNetwork& net) {
  std::vector<std::pair<FlowId, SimTime>> done;
  std::vector<FlowId> finished;
  for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) {
    net.advance(t, finished);
    for (FlowId f : finished) done.emplace_back(f, t);
  }
  return done;
}

}  // namespace trainsim::testing
