#pragma once
// Analytical simulations of one prepared job that several runs share. Points of a sweep that change only the
// network often leave every collective's estimate as it was (NCCL's graphs and tuning move in steps of the NIC
// speed): the engine, given the same workload, compute times, estimates and options, simulates the same iteration,
// so such a point takes the output of the last one instead of simulating it again. Keyed by everything the engine
// reads that can differ between runs of one prepared job; estimates compared bit for bit.
#include <cstddef>
#include <deque>
#include <utility>
#include <vector>

#include "engine/engine.hpp"

namespace trainsim {

class SimulationMemo {
 public:
  struct Key {
    std::vector<CollectiveEstimate> estimates;  // estimate_collectives of the run
    std::vector<double> compute_slowdown;       // EngineOptions::compute_slowdown
    SimTime host_launch = 0;
    bool interference = true;
  };
  // What a simulation with this key gave, or null.
  const SimulationOutput* find(const Key& key) const;
  // Keeps the output (and forgets the oldest beyond kEntries); outputs of more than kMaxOps ops are not kept.
  void remember(Key key, const SimulationOutput& out);

  static constexpr std::size_t kEntries = 2;  // a sweep's points come in order: the last few are the ones met again
  static constexpr std::size_t kMaxOps = 4'000'000;

 private:
  std::deque<std::pair<Key, SimulationOutput>> entries_;
};

}  // namespace trainsim
