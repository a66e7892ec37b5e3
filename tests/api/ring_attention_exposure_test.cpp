// Ring attention's overlap (TE context_parallel.py, AttnFuncWithCPAndKVP2P): each KV transfer runs beside one
// attention tile, so only the part of a transfer longer than its tile is exposed. Hand-computed with
// fixed kernel and transfer times.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "api/run_statistics.hpp"
#include "collective/flows/flow_dag.hpp"
#include "fixed_time_models.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

using namespace trainsim;

namespace {

// h 512, 8 heads, s 1024 over context 2 on one node, 2 layers, 3 micro-batches, no recompute.
Scenario scenario() {
  return parse_scenario(R"(
model:
  family: llama
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  num_query_groups: 2
  ffn_hidden_size: 1024
  vocab_size: 1024
  seq_length: 1024
training:
  global_batch_size: 3
  micro_batch_size: 1
  recompute: none
parallelism:
  tensor: 1
  pipeline: 1
  context: 2
  overlap_grad_reduce: false
cluster:
  gpu: H100-SXM
  num_gpus: 2
  gpus_per_node: 2
)",
                        "cp2.yaml");
}

}  // namespace

// Context 2, every kernel 100 us. Forward: transfer 0 runs beside tile 0, tile 1 waits for it:
// max(0, X - 100) exposed. Backward, each step is a tile and a gradient-accumulation kernel (200 us)
// beside one transfer: 2 * max(0, X - 200). With X = 250 us: 150 + 100 = 250 us per layer per micro-batch.
TEST(RingAttention, OnlyTheTransferLongerThanItsTileIsExposed) {
  const int L = 2, m = 3;
  const Scenario s = scenario();
  ASSERT_EQ(s.micro_batches_per_iteration(), m);
  const Workload wl = generate_workload(s);
  const test::HundredMicrosecondKernels compute;
  for (const auto& [x_us, exposed_us] : std::vector<std::pair<double, double>>{{90, 0}, {150, 50}, {250, 250}}) {
    // CP transfers take x_us, every other collective nothing.
    const test::FixedCollectiveTimes coll([x = x_us](CollKind kind) { return kind == CollKind::SendRecv ? x : 0.0; });
    EngineOptions options;
    keep_activity(wl, options);
    const auto out = simulate(wl, compute, coll, s.cluster, options);
    const Breakdown b = breakdown_of(out, 0);
    EXPECT_NEAR(b.exposed_cp, L * m * exposed_us * 1e-6, 1e-9) << "transfer " << x_us << " us";
    EXPECT_NEAR(b.compute + b.exposed_comm + b.bubble + b.optimizer + b.other, to_seconds(out.makespan), 1e-9);
  }
}
