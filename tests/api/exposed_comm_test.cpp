// An 8-GPU tensor-parallel-only job whose exposed communication can be computed by hand.
// With fixed times (every kernel 100 us, every collective 10 us) only the synchronous TP
// collectives are exposed: the backward all-reduces run async under wgrad GEMMs that take longer.
// Per micro-batch on the single rank (TP 8, no SP, one stage = first and last):
//   forward: 2 per layer (proj and fc2 all-reduce) + batch broadcast + embedding all-reduce
//            + 3 cross-entropy all-reduces (max, predicted logit, sum-exp)  =  2L + 5
//   backward: all async (hidden behind the wgrad GEMM that follows each one)
// so exposed TP = m * (2L + 5) * 10 us.
#include <gtest/gtest.h>

#include <cmath>

#include "api/run_statistics.hpp"
#include "collective/flows/flow_dag.hpp"
#include "fixed_time_models.hpp"
#include "scenario/scenario_loader.hpp"
#include "workload/generator.hpp"

using namespace trainsim;

namespace {

const char* kScenario = R"(
model:
  family: gpt
  num_layers: 4
  hidden_size: 1024
  num_attention_heads: 16
  vocab_size: 32000
  seq_length: 1024
training:
  global_batch_size: 3
  micro_batch_size: 1
parallelism:
  tensor: 8
  pipeline: 1
  sequence_parallel: false
  zero_stage: 0
  overlap_grad_reduce: false
cluster:
  gpu: H100-SXM
  num_gpus: 8
  gpus_per_node: 8
)";

}  // namespace

TEST(ExposedComm, TensorParallelOnlyMatchesHandCount) {
  const Scenario s = parse_scenario(kScenario, "tp8.yaml");
  ASSERT_EQ(s.micro_batches_per_iteration(), 3);
  const Workload wl = generate_workload(s);
  ASSERT_EQ(wl.ranks.size(), 1u);
  const test::HundredMicrosecondKernels compute;
  const test::FixedCollectiveTimes coll([](CollKind) { return 10.0; });
  EngineOptions options;
  keep_activity(wl, options);
  const auto out = simulate(wl, compute, coll, s.cluster, options);
  const Breakdown b = breakdown_of(out, 0);
  const int L = 4, m = 3;
  EXPECT_NEAR(b.exposed_tp, m * (2 * L + 5) * 10e-6, 1e-9);
  EXPECT_DOUBLE_EQ(b.bubble, 0.0);
  // The parts add up to the iteration.
  EXPECT_NEAR(b.compute + b.exposed_comm + b.bubble + b.optimizer + b.other, to_seconds(out.makespan), 1e-9);
  // Every op on the compute stream is a 100 us kernel, so compute + optimizer is a multiple of it.
  const double kernels = (b.compute + b.optimizer) / 100e-6;
  EXPECT_NEAR(kernels, std::round(kernels), 1e-6);
}

// The per-collective table counts every TP call of the iteration: the synchronous ones above plus
// the 2 async backward all-reduces per layer and the LM-head dgrad all-reduce, per micro-batch,
// and the optimizer's model-parallel all-reduce (group tp-pp).
TEST(ExposedComm, CommTableCountsEveryCall) {
  const Scenario s = parse_scenario(kScenario, "tp8.yaml");
  const Workload wl = generate_workload(s);
  const test::HundredMicrosecondKernels compute;
  const test::FixedCollectiveTimes coll([](CollKind) { return 10.0; });
  const auto out = simulate(wl, compute, coll, s.cluster);
  const auto table = compute_comm_table(wl, out, 0);
  const int L = 4, m = 3;
  std::int64_t tp_all_reduce = 0, tp_broadcast = 0;
  for (const auto& row : table) {
    if (row.group == "tp" && row.kind == "all_reduce") tp_all_reduce = row.count;
    if (row.group == "tp" && row.kind == "broadcast") tp_broadcast = row.count;
  }
  EXPECT_EQ(tp_all_reduce, m * (2 * L + 1 + 3 + 2 * L + 1));
  EXPECT_EQ(tp_broadcast, m);
}
