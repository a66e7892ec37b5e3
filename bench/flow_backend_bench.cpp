// Issue 4 target: one 1 GiB ring AllReduce over 1,024 H100 (128 nodes, 8 × 400G rail-optimised NICs,
// 2-tier fabric) executed flow-level — flow DAG built, routed and run on the max-min network —
// in <= 0.5 s on 2 cores. Also the same with the eight DP-style copies of a 128-rank group running
// at once (what a data-parallel gradient sync looks like to the fabric).
#include <benchmark/benchmark.h>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "network/flow_backend.hpp"
#include "topology/generate.hpp"

namespace trainsim {
namespace {

ClusterSpec cluster_1024() {
  ClusterSpec c;
  c.gpu.name = "H100-SXM";
  c.gpu.architecture = "hopper";
  c.gpu.sm_version = 90;
  c.gpu.vendor = "NVIDIA";
  c.gpu.scale_up_GBps = 450;
  c.gpus_per_node = 8;
  c.num_gpus = 1024;
  c.scale_up = {ScaleUpKind::NVSwitch, 450, 8};
  c.nics_per_node = 8;
  c.nic_gbps = 400;
  return c;
}

SimTime run(FlowBackend& b, const CollectiveCall& call) {
  b.start(0, 0, call);
  std::vector<std::uint64_t> done;
  SimTime end = 0;
  for (SimTime t; (t = b.next_event()) != kNever;) {
    b.advance(t, done);
    if (!done.empty()) end = t;
  }
  return end;
}

void BM_RingAllReduce1GiB1024Gpus(benchmark::State& state) {
  const ClusterSpec c = cluster_1024();
  const NcclAnalyticalModel nccl(c, {{"NCCL_ALGO", "Ring"}});
  NetworkGraph g = build_network(c);
  std::vector<int> all(1024);
  for (int i = 0; i < 1024; ++i) all[static_cast<std::size_t>(i)] = i;
  SimTime t = 0;
  std::int64_t flows = 0;
  for (auto _ : state) {
    FlowBackend b(c, nccl, g, {{all}}, {});
    t = run(b, {CollKind::AllReduce, std::int64_t{1} << 30, 0});
    flows = b.stats().flows;
  }
  state.counters["simulated_ms"] = to_seconds(t) * 1e3;
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_RingAllReduce1GiB1024Gpus)->Unit(benchmark::kMillisecond);

void BM_EightDpCopies128Ranks(benchmark::State& state) {
  const ClusterSpec c = cluster_1024();
  const NcclAnalyticalModel nccl(c, {{"NCCL_ALGO", "Ring"}});
  NetworkGraph g = build_network(c);
  std::vector<std::vector<int>> copies(8);
  for (int l = 0; l < 8; ++l)
    for (int n = 0; n < 128; ++n) copies[static_cast<std::size_t>(l)].push_back(n * 8 + l);
  SimTime t = 0;
  for (auto _ : state) {
    FlowBackend b(c, nccl, g, {copies}, {});
    t = run(b, {CollKind::ReduceScatter, std::int64_t{1} << 30, 0});
  }
  state.counters["simulated_ms"] = to_seconds(t) * 1e3;
}
BENCHMARK(BM_EightDpCopies128Ranks)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainsim

BENCHMARK_MAIN();
