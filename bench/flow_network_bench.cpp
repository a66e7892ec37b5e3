// Flow-level network speed (docs/network-model.md). Targets (issue 4): a ring-AllReduce-like DAG
// of 16,384 flows (1,024 GPUs = 128 nodes × 8, 16 channels) runs in <= 0.1 s; 1,000,000 flow
// start/finish events over 100,000 links take a few seconds.
//
// Fabric: rail-optimised, 400 Gb/s (50 GB/s) NICs. Each GPU's NIC has an up-link (NIC -> leaf)
// and a down-link (leaf -> NIC). Channel c of a ring sends from every GPU to the GPU of the same
// rail on another node (NCCL keeps rings rail-aligned, nccl.md §9.2). Bytes per flow: a 1 GiB
// Ring AllReduce sends 2·(n-1)/n of the buffer per rank, split over the channels.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "network/flow/flow_dag_runner.hpp"
#include "network/flow/flow_network.hpp"

namespace {

using namespace trainsim;

constexpr int kNodes = 128, kGpusPerNode = 8, kGpus = kNodes * kGpusPerNode, kChannels = 16;
constexpr double kNicBps = 50e9;
constexpr std::int64_t kBytesPerFlow = 2 * (std::int64_t{1} << 30) / kChannels;  // ≈ 2·(n-1)/n · 1 GiB / 16
constexpr SimTime kLinkLatency = 500'000;                                        // 0.5 µs per hop, picoseconds
constexpr SimTime kSoftwareLatency = 2'000'000;  // NCCL's per-step base latency, order of µs

std::uint64_t splitmix(std::uint64_t& s) {  // deterministic pseudo-random stream
  std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

struct Fabric {
  std::vector<double> capacity;
  std::vector<SimTime> latency;
  LinkId add(double bps) {
    capacity.push_back(bps);
    latency.push_back(kLinkLatency);
    return static_cast<LinkId>(capacity.size() - 1);
  }
};

// Every flow is two hops: NIC -> leaf -> NIC (one rail switch per rail, non-blocking). Channel c
// sends from GPU (node n, rail r) to (node n + 1 + c, rail r): each NIC carries 16 flows out and
// 16 in, to and from 16 different peers, so each rail plane is one connected component.
struct RingTwoHop {
  Fabric fabric;
  TransferDag dag;
  RingTwoHop() {
    std::vector<LinkId> up(kGpus), down(kGpus);
    for (int g = 0; g < kGpus; ++g) up[static_cast<std::size_t>(g)] = fabric.add(kNicBps);
    for (int g = 0; g < kGpus; ++g) down[static_cast<std::size_t>(g)] = fabric.add(kNicBps);
    for (int c = 0; c < kChannels; ++c) {
      for (int g = 0; g < kGpus; ++g) {
        const int node = g / kGpusPerNode, rail = g % kGpusPerNode;
        const int dst = ((node + 1 + c) % kNodes) * kGpusPerNode + rail;
        const std::vector<LinkId> path{up[static_cast<std::size_t>(g)], down[static_cast<std::size_t>(dst)]};
        dag.add(path, kBytesPerFlow, 2 * kLinkLatency + kSoftwareLatency);
      }
    }
  }
};

// Through a spine: 8 pods of 16 nodes, one leaf per (pod, rail), 8 spines per rail plane; every
// flow crosses pods: NIC -> leaf -> spine -> leaf -> NIC. Leaf up-links are 2:1 oversubscribed and
// the spine is picked by a hash (ECMP), so loads are uneven, components span the fabric and flows
// finish at many different times.
struct RingThroughSpine {
  Fabric fabric;
  TransferDag dag;
  explicit RingThroughSpine(int steps) {
    constexpr int kPods = 8, kNodesPerPod = kNodes / kPods, kSpines = 8;
    std::vector<LinkId> up(kGpus), down(kGpus);
    for (int g = 0; g < kGpus; ++g) up[static_cast<std::size_t>(g)] = fabric.add(kNicBps);
    for (int g = 0; g < kGpus; ++g) down[static_cast<std::size_t>(g)] = fabric.add(kNicBps);
    // leaf (pod, rail) -> spine s and back, per rail plane.
    std::vector<LinkId> leaf_up(kPods * kGpusPerNode * kSpines), leaf_down(kPods * kGpusPerNode * kSpines);
    for (auto& l : leaf_up) l = fabric.add(kNicBps);
    for (auto& l : leaf_down) l = fabric.add(kNicBps);
    const auto uplink = [&](int pod, int rail, int spine) {
      return static_cast<std::size_t>((pod * kGpusPerNode + rail) * kSpines + spine);
    };
    std::uint64_t seed = 42;
    const int flows_per_step = kGpus * kChannels / steps;
    std::vector<std::uint32_t> previous;
    for (int step = 0; step < steps; ++step) {
      std::vector<std::uint32_t> current;
      for (int i = 0; i < flows_per_step; ++i) {
        const int c = i % kChannels, g = (i / kChannels) % kGpus;
        const int node = g / kGpusPerNode, rail = g % kGpusPerNode;
        const int dst_node = (node + kNodesPerPod * (1 + c % (kPods - 1))) % kNodes;
        const int dst = dst_node * kGpusPerNode + rail;
        const int spine = static_cast<int>(splitmix(seed) % kSpines);
        const std::vector<LinkId> path{
            up[static_cast<std::size_t>(g)], leaf_up[uplink(node / kNodesPerPod, rail, spine)],
            leaf_down[uplink(dst_node / kNodesPerPod, rail, spine)], down[static_cast<std::size_t>(dst)]};
        std::vector<std::uint32_t> deps;
        if (!previous.empty()) deps.push_back(previous[static_cast<std::size_t>(i)]);  // a ring step waits for the last
        current.push_back(dag.add(path, kBytesPerFlow / steps, 4 * kLinkLatency + kSoftwareLatency, deps));
      }
      previous = std::move(current);
    }
  }
};

template <class Case>
void run_case(benchmark::State& state, const Case& c) {
  SimTime makespan = 0;
  FlowNetwork::SolveCounters solved;
  for (auto _ : state) {
    FlowNetwork net(c.fabric.capacity, c.fabric.latency);
    const DagSchedule s = run_flow_dag(net, c.dag);
    makespan = s.makespan;
    solved = net.solve_counters();
    benchmark::DoNotOptimize(s.finish.data());
  }
  state.counters["flows"] = static_cast<double>(c.dag.size());
  state.counters["links"] = static_cast<double>(c.fabric.capacity.size());
  state.counters["makespan_ms"] = to_seconds(makespan) * 1e3;
  state.counters["solves"] = static_cast<double>(solved.solves);
  state.counters["flows_per_solve"] =
      static_cast<double>(solved.flows) / static_cast<double>(std::max<std::int64_t>(1, solved.solves));
}

void BM_RingAllReduce16kFlowsTwoHops(benchmark::State& state) {
  static const RingTwoHop c;
  run_case(state, c);
}
BENCHMARK(BM_RingAllReduce16kFlowsTwoHops)->Unit(benchmark::kMillisecond);

void BM_RingAllReduce16kFlowsThroughSpine(benchmark::State& state) {
  static const RingThroughSpine c(1);
  run_case(state, c);
}
BENCHMARK(BM_RingAllReduce16kFlowsThroughSpine)->Unit(benchmark::kMillisecond);

// The same 16,384 flows as 4 dependent ring steps of 4,096.
void BM_RingAllReduce16kFlowsThroughSpine4Steps(benchmark::State& state) {
  static const RingThroughSpine c(4);
  run_case(state, c);
}
BENCHMARK(BM_RingAllReduce16kFlowsThroughSpine4Steps)->Unit(benchmark::kMillisecond);

// Churn: 100,000 links, 10,000 flows in flight over 2-4 random links each, every completion
// replaced by a new flow, until 500,000 flows have started and finished = 1,000,000 events.
// Random paths this sparse keep components small, as in a large fabric where most flows do not
// share links; the cost per event is then the heap and the small component.
void BM_OneMillionEventsOver100kLinks(benchmark::State& state) {
  constexpr int kLinks = 100'000, kInFlight = 10'000, kTotalFlows = 500'000;
  std::vector<double> capacity(kLinks);
  std::uint64_t seed = 7;
  for (auto& c : capacity) c = 12.5e9 * static_cast<double>(1 + splitmix(seed) % 4);
  const std::vector<SimTime> latency(kLinks, kLinkLatency);
  std::int64_t events = 0;
  FlowNetwork::SolveCounters solved;
  for (auto _ : state) {
    FlowNetwork net(capacity, latency);
    std::uint64_t s = 99;
    std::vector<LinkId> path;
    const auto start_random = [&](SimTime t) {
      path.clear();
      const int hops = 2 + static_cast<int>(splitmix(s) % 3);
      while (static_cast<int>(path.size()) < hops) {
        const auto l = static_cast<LinkId>(splitmix(s) % kLinks);
        bool repeated = false;
        for (LinkId p : path) repeated = repeated || p == l;
        if (!repeated) path.push_back(l);
      }
      net.start(t, path, 1'000'000 + static_cast<std::int64_t>(splitmix(s) % 100'000'000));
    };
    int started = 0;
    events = 0;
    for (; started < kInFlight; ++started, ++events) start_random(0);
    std::vector<FlowId> finished;
    for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) {
      net.advance(t, finished);
      events += static_cast<std::int64_t>(finished.size());
      for (std::size_t k = 0; k < finished.size() && started < kTotalFlows; ++k, ++started, ++events) start_random(t);
    }
    benchmark::DoNotOptimize(net.now());
    solved = net.solve_counters();
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["solves"] = static_cast<double>(solved.solves);
  state.counters["flows_per_solve"] =
      static_cast<double>(solved.flows) / static_cast<double>(std::max<std::int64_t>(1, solved.solves));
  state.counters["links_per_solve"] =
      static_cast<double>(solved.links) / static_cast<double>(std::max<std::int64_t>(1, solved.solves));
  state.counters["events_per_s"] = benchmark::Counter(static_cast<double>(events), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_OneMillionEventsOver100kLinks)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
