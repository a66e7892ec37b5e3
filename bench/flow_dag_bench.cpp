// Flow DAG generation speed: a 1 GiB Ring/Simple AllReduce over 1,024 GPUs (128 nodes × 8 H100) on
// 16 channels, PerChannel granularity (target <= 50 ms). The communicator's rings are built by hand
// from the §9.2 node chains (../shared/reference/nccl.md), odd nodes using the partner channel's
// chain (crossNic = 2 swap) so that every NET hop is rail-aligned.
#include <benchmark/benchmark.h>

#include <algorithm>

#include "collective/flows/nccl_flows.hpp"

namespace {

using namespace trainsim;

// §9.2 node chain of channel c (0..7): even c descend from GPU c, odd c ascend from GPU c.
std::vector<int> node_chain(int c) {
  std::vector<int> chain;
  for (int k = 0; k < 8; ++k) chain.push_back(c % 2 == 0 ? ((c - k) % 8 + 8) % 8 : (c + k) % 8);
  return chain;
}

NcclCommunicator ring_comm(int nnodes, int nchannels) {
  NcclCommunicator c;
  c.nranks = nnodes * 8;
  c.nnodes = nnodes;
  c.node_ranks.assign(static_cast<std::size_t>(nnodes), {});
  for (int r = 0; r < c.nranks; ++r) {
    c.node_of.push_back(r / 8);
    c.local_of.push_back(r % 8);
    c.node_ranks[static_cast<std::size_t>(r / 8)].push_back(r);
  }
  c.nchannels = nchannels;
  const auto n = static_cast<std::size_t>(c.nranks);
  for (int ch = 0; ch < nchannels; ++ch) {
    RingChannel ring;
    for (int node = 0; node < nnodes; ++node) {
      const int k = ch % 8;
      for (int l : node_chain(node % 2 == 1 ? (k ^ 1) : k)) ring.order.push_back(node * 8 + l);
    }
    std::rotate(ring.order.begin(), std::find(ring.order.begin(), ring.order.end(), 0), ring.order.end());
    ring.next.assign(n, -1);
    ring.prev.assign(n, -1);
    ring.send_net.assign(n, -1);
    ring.recv_net.assign(n, -1);
    ring.send_proxy.resize(n);
    for (std::size_t i = 0; i < n; ++i) {
      const int a = ring.order[i], b = ring.order[(i + 1) % n];
      ring.next[static_cast<std::size_t>(a)] = b;
      ring.prev[static_cast<std::size_t>(b)] = a;
      ring.send_proxy[static_cast<std::size_t>(a)] = a;
      if (a / 8 != b / 8) {
        ring.send_net[static_cast<std::size_t>(a)] = a % 8;
        ring.recv_net[static_cast<std::size_t>(b)] = b % 8;
      }
    }
    c.rings.push_back(std::move(ring));
  }
  return c;
}

void BM_RingAllReduce1GiB_1024Gpus(benchmark::State& state) {
  const NcclCommunicator comm = ring_comm(128, 16);
  const CallPlan plan{NcclAlgorithm::Ring, NcclProtocol::Simple, 16};
  std::size_t flows = 0;
  for (auto _ : state) {
    FlowDag dag = generate_collective_flows(comm, CollKind::AllReduce, std::int64_t{1} << 30, plan, FlowOptions{});
    flows = dag.flows.size();
    benchmark::DoNotOptimize(dag);
  }
  state.counters["flows"] = static_cast<double>(flows);
}
BENCHMARK(BM_RingAllReduce1GiB_1024Gpus)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
