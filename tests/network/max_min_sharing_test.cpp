// Max-min fair rates, checked by hand (docs/network-model.md): the rates FlowNetwork gives the
// flows in flight, and an incremental network agreeing with an independent from-scratch solve.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>

#include "network/flow/flow_network.hpp"
#include "network_test_support.hpp"

namespace trainsim {
namespace {

using testing::kGB;
using testing::kGBps;
using testing::start_flow;

// One flow alone on a link gets the link's whole capacity.
TEST(MaxMinSharing, OneFlowGetsTheLinkCapacity) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId f = start_flow(net, 0, {0}, kGB);
  EXPECT_EQ(net.rate(f), 10 * kGBps);
}

// Two flows on one link: capacity / 2 each.
TEST(MaxMinSharing, TwoFlowsOnOneLinkGetHalfEach) {
  FlowNetwork net({10 * kGBps}, {0});
  const FlowId a = start_flow(net, 0, {0}, kGB);
  const FlowId b = start_flow(net, 0, {0}, kGB);
  EXPECT_EQ(net.rate(a), 5 * kGBps);
  EXPECT_EQ(net.rate(b), 5 * kGBps);
}

// A crosses link 0 (10 GB/s) and link 1 (4 GB/s), B only link 0: A is held to 4 by link 1 and
// B takes the 6 that A cannot use (not the 5 an equal split would give).
TEST(MaxMinSharing, FlowLimitedElsewhereLeavesTheRestToTheOther) {
  FlowNetwork net({10 * kGBps, 4 * kGBps}, {0, 0});
  const FlowId a = start_flow(net, 0, {0, 1}, kGB);
  const FlowId b = start_flow(net, 0, {0}, kGB);
  EXPECT_EQ(net.rate(a), 4 * kGBps);
  EXPECT_EQ(net.rate(b), 6 * kGBps);
}

// Three levels of bottleneck. Link 0 (5) carries f0, f1, f2; link 1 (10) carries f2, f3; link 2
// (1) carries f0. Filling: link 2 saturates first (share 1) -> f0 = 1; link 0 has 4 left for f1,
// f2 -> 2 each; link 1 has 10 - 2 = 8 left for f3.
TEST(MaxMinSharing, ProgressiveFillingFreezesBottlenecksInOrder) {
  FlowNetwork net({5 * kGBps, 10 * kGBps, 1 * kGBps}, {0, 0, 0});
  const FlowId f0 = start_flow(net, 0, {0, 2}, kGB);
  const FlowId f1 = start_flow(net, 0, {0}, kGB);
  const FlowId f2 = start_flow(net, 0, {0, 1}, kGB);
  const FlowId f3 = start_flow(net, 0, {1}, kGB);
  EXPECT_EQ(net.rate(f0), 1 * kGBps);
  EXPECT_EQ(net.rate(f1), 2 * kGBps);
  EXPECT_EQ(net.rate(f2), 2 * kGBps);
  EXPECT_EQ(net.rate(f3), 8 * kGBps);
}

// A per-flow cap (NIC/PCIe/protocol) below the fair share frees the rest for the other flow; a
// cap above the fair share changes nothing.
TEST(MaxMinSharing, PerFlowRateCap) {
  FlowNetwork net({10 * kGBps, 10 * kGBps}, {0, 0});
  const FlowId capped = start_flow(net, 0, {0}, kGB, 3 * kGBps);
  const FlowId free = start_flow(net, 0, {0}, kGB);
  EXPECT_EQ(net.rate(capped), 3 * kGBps);
  EXPECT_EQ(net.rate(free), 7 * kGBps);

  const FlowId loose = start_flow(net, 0, {1}, kGB, 8 * kGBps);
  const FlowId other = start_flow(net, 0, {1}, kGB);
  EXPECT_EQ(net.rate(loose), 5 * kGBps);
  EXPECT_EQ(net.rate(other), 5 * kGBps);

  FlowNetwork alone({10 * kGBps}, {0});
  EXPECT_EQ(alone.rate(start_flow(alone, 0, {0}, kGB, 2.5 * kGBps)), 2.5 * kGBps);
}

// A link at capacity 0 gives its flows rate 0; a flow crossing it and another link leaves that
// other link wholly to its other flows.
TEST(MaxMinSharing, DownLinkStallsItsFlowsOnly) {
  FlowNetwork net({0, 10 * kGBps}, {0, 0});
  const FlowId stuck = start_flow(net, 0, {0, 1}, kGB);
  const FlowId other = start_flow(net, 0, {1}, kGB);
  EXPECT_EQ(net.rate(stuck), 0);
  EXPECT_EQ(net.rate(other), 10 * kGBps);
}

// ---- The incremental network against an independent, from-scratch max-min solve ----

struct Xorshift {  // deterministic pseudo-random numbers for building test cases
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  int below(int n) { return static_cast<int>(next() % static_cast<std::uint64_t>(n)); }
};

struct RefFlow {
  std::vector<LinkId> path;
  double cap;
  std::vector<float> weights = {};  // per hop; empty: 1 on every hop (a plain flow)

  // The flow's weight on link `l`, 0 when its path does not cross it.
  double weight_on(LinkId l) const {
    const auto it = std::find(path.begin(), path.end(), l);
    if (it == path.end()) return 0;
    return weights.empty() ? 1.0 : weights[static_cast<std::size_t>(it - path.begin())];
  }
};

// Textbook water-filling, O(flows × links) per round: the obviously-correct reference. Every rising
// flow's rate rises together; a flow of weight w on a link loads it with w times its rate.
std::vector<double> reference_max_min(const std::vector<double>& capacity, const std::vector<RefFlow>& flows) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> rate(flows.size(), 0);
  std::vector<bool> frozen(flows.size(), false);
  std::size_t left = flows.size();
  // The level at which link l saturates given the flows frozen so far; infinite when none rises on it.
  auto share = [&](std::size_t l) {
    double used = 0, rising = 0;
    for (std::size_t f = 0; f < flows.size(); ++f) {
      const double w = flows[f].weight_on(static_cast<LinkId>(l));
      if (w == 0) continue;
      if (frozen[f])
        used += w * rate[f];
      else
        rising += w;
    }
    return rising > 0 ? std::max(0.0, capacity[l] - used) / rising : inf;
  };
  while (left > 0) {
    double best = inf;
    for (std::size_t l = 0; l < capacity.size(); ++l) best = std::min(best, share(l));
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!frozen[f]) best = std::min(best, flows[f].cap);
    }
    // Freeze every flow that is capped at `best` or crosses a link whose share is `best`.
    std::vector<bool> freeze(flows.size(), false);
    for (std::size_t l = 0; l < capacity.size(); ++l) {
      if (share(l) > best * (1 + 1e-12)) continue;
      for (std::size_t f = 0; f < flows.size(); ++f) {
        if (!frozen[f] && flows[f].weight_on(static_cast<LinkId>(l)) > 0) freeze[f] = true;
      }
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!frozen[f] && flows[f].cap <= best * (1 + 1e-12)) freeze[f] = true;
    }
    for (std::size_t f = 0; f < flows.size(); ++f) {
      if (!freeze[f]) continue;
      frozen[f] = true;
      rate[f] = best;
      --left;
    }
  }
  return rate;
}

// Flows come and go on small random networks (so components merge and split, several flows start
// at one instant, links go down and come back; some are coflows whose hops carry weights); after
// every event the rates the network kept or re-solved locally equal a from-scratch solve of all flows.
TEST(MaxMinSharing, IncrementalRatesEqualAFromScratchSolve) {
  int checks = 0;
  int simultaneous = 0;  // advance() calls that finished more than one flow
  int coflows = 0;
  for (std::uint64_t seed : {12345u, 777u, 4242u, 99u, 31337u, 2024u}) {
    Xorshift rng{seed};
    const int links = 6 + rng.below(10);
    std::vector<double> capacity;
    for (int l = 0; l < links; ++l) capacity.push_back((1 + rng.below(seed % 2 == 1 ? 2 : 10)) * kGBps);
    FlowNetwork net(capacity, std::vector<SimTime>(static_cast<std::size_t>(links), 0));
    std::vector<FlowId> active;
    std::vector<RefFlow> ref;  // parallel to `active`
    std::vector<FlowId> finished;
    for (int event = 0; event < 400; ++event) {
      const int action = rng.below(10);
      if (active.size() < 3 || (active.size() < 16 && action < 4)) {
        const int starting = 1 + (rng.below(3) == 0 ? rng.below(3) : 0);  // sometimes several at once
        for (int k = 0; k < starting; ++k) {
          std::vector<LinkId> path;
          const int hops = 1 + rng.below(3);
          while (static_cast<int>(path.size()) < hops) {
            const LinkId l = rng.below(links);
            if (std::find(path.begin(), path.end(), l) == path.end()) path.push_back(l);
          }
          const double cap = rng.below(4) == 0 ? (1 + rng.below(5)) * kGBps : kUnlimitedRate;
          // Odd seeds use few distinct sizes and capacities, so that flows finish at the same instant.
          const std::int64_t bytes =
              seed % 2 == 1 ? (1 + rng.below(2)) * 100'000'000 : (1 + rng.below(100)) * 10'000'000;
          if (rng.below(4) == 0) {  // a coflow: weights that are exact in float, below and above 1
            std::vector<float> weights;
            for (std::size_t h = 0; h < path.size(); ++h)
              weights.push_back(std::array{0.25F, 0.5F, 1.0F, 2.0F, 3.0F}[static_cast<std::size_t>(rng.below(5))]);
            active.push_back(net.start(net.now(), path, weights, bytes));
            ref.push_back({path, kUnlimitedRate, weights});
            ++coflows;
          } else {
            active.push_back(net.start(net.now(), path, bytes, cap));
            ref.push_back({path, cap});
          }
        }
      } else if (action == 4) {
        const LinkId l = rng.below(links);
        capacity[static_cast<std::size_t>(l)] = rng.below(6) * kGBps;  // sometimes 0: down
        net.set_capacity(l, capacity[static_cast<std::size_t>(l)], net.now());
      } else {
        const SimTime t = net.next_completion();
        if (t != kNever) {
          net.advance(t, finished);
          simultaneous += finished.size() > 1 ? 1 : 0;
          for (FlowId f : finished) {
            const auto it = std::find(active.begin(), active.end(), f);
            ASSERT_NE(it, active.end());
            ref.erase(ref.begin() + (it - active.begin()));
            active.erase(it);
          }
        }
      }
      const std::vector<double> expected = reference_max_min(capacity, ref);
      for (std::size_t i = 0; i < active.size(); ++i) {
        ASSERT_NEAR(net.rate(active[i]), expected[i], 1e-6 * kGBps)
            << "seed " << seed << " event " << event << " flow " << active[i];
      }
      ++checks;
    }
    // The local rules did their part: some changes needed no solve at all.
    EXPECT_GT(net.solve_counters().placed_directly, 0) << "seed " << seed;
  }
  EXPECT_EQ(checks, 6 * 400);
  EXPECT_GT(simultaneous, 20);
  EXPECT_GT(coflows, 50);
}

// Equal flows that start together finish in order of speed, and a flow that leaves at the top
// rate frees capacity only for flows that are no slower: none are left. So after the first solve
// no re-solve covers any flow. Link 0 (10) carries A, B, C; link 1 (4) carries C and D; A ends
// first (at 4 GB/s... see rates), and nothing else changes rate when it goes.
TEST(MaxMinSharing, FastestFlowLeavingNeedsNoResolve) {
  FlowNetwork net({10 * kGBps, 4 * kGBps}, {0, 0});
  const FlowId a = start_flow(net, 0, {0}, kGB);
  const FlowId b = start_flow(net, 0, {0}, kGB);
  const FlowId c = start_flow(net, 0, {0, 1}, kGB);
  const FlowId d = start_flow(net, 0, {1}, kGB);
  // Link 1 saturates first: C and D at 2; A and B share the remaining 8: 4 each.
  EXPECT_EQ(net.rate(a), 4 * kGBps);
  EXPECT_EQ(net.rate(b), 4 * kGBps);
  EXPECT_EQ(net.rate(c), 2 * kGBps);
  EXPECT_EQ(net.rate(d), 2 * kGBps);
  const std::int64_t solves = net.solve_counters().solves;
  std::vector<FlowId> finished;
  net.advance(net.next_completion(), finished);  // A and B, at 250 ms
  EXPECT_EQ(finished, (std::vector<FlowId>{a, b}));
  EXPECT_EQ(net.rate(c), 2 * kGBps);  // still held by link 1
  EXPECT_EQ(net.solve_counters().solves, solves);
}

}  // namespace
}  // namespace trainsim
