// Topology generation and routing speed (issue 4 targets): a 16,384-GPU fabric generates in well
// under 1 s; 100,000 GPUs on 3 tiers build in about a second in a few hundred MB; 100,000
// NIC-to-NIC flows on the 16,384-GPU rail-optimized fabric route in < 0.5 s on one core, cold
// distance cache included.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "topology/generate.hpp"
#include "topology/router.hpp"

namespace {

using namespace trainsim;

ClusterSpec fabric(int gpus, NetworkTopology topology, int tiers, std::vector<double> oversubscription,
                   int radix = 64) {
  ClusterSpec c;
  c.num_gpus = gpus;
  c.gpus_per_node = 8;
  c.nics_per_node = 8;
  c.nic_gbps = 400;
  c.scale_up.bandwidth_GBps = 450;
  c.scale_up.domain_size = 8;
  c.network.topology = topology;
  c.network.tiers = tiers;
  c.network.oversubscription = std::move(oversubscription);
  c.network.switch_radix = radix;
  return c;
}

// Llama 3's fabric (examples/llama3-405b-16384-h100.yaml): rail-optimized, 3 tiers, [1, 1, 7].
ClusterSpec llama3_fabric(int gpus) { return fabric(gpus, NetworkTopology::RailOptimized, 3, {1, 1, 7}); }

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

void report_size(benchmark::State& state, const NetworkGraph& g) {
  state.counters["nodes"] = g.node_count();
  state.counters["links"] = g.link_count();
  state.counters["peak_rss_MB"] = peak_rss_mb();
}

void BM_Build(benchmark::State& state, ClusterSpec c) {
  for (auto _ : state) {
    NetworkGraph g = build_network(c);
    benchmark::DoNotOptimize(g.link_count());
    state.PauseTiming();
    report_size(state, g);
    state.ResumeTiming();
  }
}
BENCHMARK_CAPTURE(BM_Build, rail_optimized_16384, llama3_fabric(16384))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, rail_optimized_100000, llama3_fabric(100000))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, fat_tree_16384, fabric(16384, NetworkTopology::FatTree, 3, {1}))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, hpn_16384, fabric(16384, NetworkTopology::HPN, 2, {1}, 128))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, dragonfly_16384, fabric(16384, NetworkTopology::Dragonfly, 2, {1}))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Build, dragonfly_100000, fabric(100000, NetworkTopology::Dragonfly, 2, {1}))
    ->Unit(benchmark::kMillisecond);

// 100,000 flows between pseudo-random NIC pairs (a fixed LCG, so every run routes the same flows).
std::vector<std::pair<NicAddress, NicAddress>> flows(const NetworkGraph& g, int count) {
  std::vector<std::pair<NicAddress, NicAddress>> out;
  std::uint64_t x = 12345;
  auto next = [&] {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int>((x >> 33) % static_cast<std::uint64_t>(g.nic_count()));
  };
  const int nics = g.nics_per_node();
  for (int i = 0; i < count; ++i) {
    const int a = next(), b = next();
    out.push_back({{a / nics, a % nics}, {b / nics, b % nics}});
  }
  return out;
}

// A fresh Router every iteration: the per-destination distances are computed inside the timing.
void BM_RouteEcmp(benchmark::State& state, ClusterSpec c) {
  const NetworkGraph g = build_network(c);
  const auto pairs = flows(g, 100000);
  std::vector<LinkId> path;
  std::size_t hops = 0;
  for (auto _ : state) {
    Router r(g, 7);
    hops = 0;
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      r.ecmp_path(pairs[i].first, pairs[i].second, i, path);
      hops += path.size();
    }
    benchmark::DoNotOptimize(hops);
  }
  state.counters["flows"] = static_cast<double>(pairs.size());
  state.counters["mean_links"] = static_cast<double>(hops) / static_cast<double>(pairs.size());
  report_size(state, g);
}
BENCHMARK_CAPTURE(BM_RouteEcmp, rail_optimized_16384, llama3_fabric(16384))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RouteEcmp, dragonfly_16384, fabric(16384, NetworkTopology::Dragonfly, 2, {1}))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_RouteEcmp, ideal_16384, fabric(16384, NetworkTopology::Ideal, 2, {1}))
    ->Unit(benchmark::kMillisecond);

// Adaptive: each flow takes the least-loaded path and adds itself to the load it leaves behind.
void BM_RouteAdaptive(benchmark::State& state, ClusterSpec c) {
  const NetworkGraph g = build_network(c);
  const auto pairs = flows(g, 100000);
  std::vector<LinkId> path;
  for (auto _ : state) {
    Router r(g, 7);
    std::vector<double> load(static_cast<std::size_t>(g.link_count()), 0.0);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      r.adaptive_path(pairs[i].first, pairs[i].second, load, i, path);
      for (LinkId l : path) load[static_cast<std::size_t>(l)] += 1.0;
    }
    benchmark::DoNotOptimize(load.data());
  }
  state.counters["flows"] = static_cast<double>(pairs.size());
}
BENCHMARK_CAPTURE(BM_RouteAdaptive, rail_optimized_16384, llama3_fabric(16384))->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
