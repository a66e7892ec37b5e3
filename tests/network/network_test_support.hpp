#pragma once
// Helpers for the network tests: braced paths, and running a network until it is idle.
#include <cstdint>
#include <utility>
#include <vector>

#include "network/flow/flow_network.hpp"

namespace trainsim::testing {

inline constexpr double kGBps = 1e9;  // bytes/s
inline constexpr std::int64_t kGB = 1'000'000'000;
inline constexpr SimTime kMs = 1'000'000'000;  // picoseconds
inline constexpr SimTime kUs = 1'000'000;      // picoseconds

// A small deterministic generator for the random-traffic tests (a 64-bit LCG, its upper 31 bits): the same seed
// gives the same traffic on every platform, which std's distributions do not promise.
class Lcg {
 public:
  explicit Lcg(std::uint64_t seed) : state_(seed) {}
  std::int64_t operator()() {
    state_ = state_ * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<std::int64_t>(state_ >> 33);
  }

 private:
  std::uint64_t state_;
};

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
