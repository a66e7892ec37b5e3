// `simulation.network_model: flow` end to end through run_scenario: the same job as the analytical
// model when the fabric is uncontended, slower on an oversubscribed one, faults reported against
// the fault-free run, per-link statistics, and the errors for what the flow backend cannot do.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

// GPT-3 13B on 32 H100 (TP 8, DP 4): DP reduce-scatter / all-gather cross 4 nodes.
const char* kGpt13bOn32Job = R"(
model: {preset: gpt3-13b}
training: {global_batch_size: 64, micro_batch_size: 1, precision: bf16}
parallelism: {tensor: 8, pipeline: 1}
cluster:
  gpu: H100-SXM
  num_gpus: 32
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 100
  network: {topology: rail-optimized, tiers: 2, switch_radix: 64}
simulation: {network_model: flow}
)";

Scenario job(const std::vector<std::string>& overrides = {}) {
  return parse_scenario(kGpt13bOn32Job, "job.yaml", overrides);
}

TEST(FlowRun, UncontendedFabricAgreesWithTheAnalyticalModel) {
  const RunOutput flow = run_scenario(job());
  const RunOutput analytical = run_scenario(job({"simulation.network_model=analytical"}));
  EXPECT_EQ(flow.result.simulation.network_model, "flow");
  EXPECT_GT(flow.result.simulation.flows, 0);
  EXPECT_NEAR(flow.result.iteration_time_s / analytical.result.iteration_time_s, 1.0, 0.05);
  // Links: every directed link reported once; the NIC links carried the DP traffic.
  ASSERT_FALSE(flow.links.empty());
  double nic_bytes = 0;
  for (const auto& l : flow.links)
    if (l.kind == "nic-switch") nic_bytes += l.bytes;
  EXPECT_GT(nic_bytes, 0);
  // The busiest fabric links are listed, busiest first; each comm row knows its slowest call.
  ASSERT_FALSE(flow.result.hot_links.empty());
  for (std::size_t i = 1; i < flow.result.hot_links.size(); ++i)
    EXPECT_GE(flow.result.hot_links[i - 1].utilisation, flow.result.hot_links[i].utilisation);
  for (const auto& c : flow.result.comm) {
    EXPECT_GT(c.max_call_s, 0) << c.kind << " " << c.group;
    EXPECT_LE(c.max_call_s, c.time_s + 1e-15);
    EXPECT_GE(c.max_call_s * static_cast<double>(c.count), c.time_s - 1e-12);
  }
}

TEST(FlowRun, OversubscribedClassicFatTreeIsSlower) {
  const double rail = run_scenario(job()).result.iteration_time_s;
  const double tree = run_scenario(job({"cluster.network.topology=fat-tree", "cluster.network.switch_radix=32",
                                        "cluster.network.oversubscription=4"}))
                          .result.iteration_time_s;
  EXPECT_GT(tree, rail * 1.02);
}

TEST(FlowRun, FaultsAreReportedAgainstTheFaultFreeRun) {
  const RunOutput r = run_scenario(job({"faults=[{kind: nic_down, node: 1, nic: 0, always: true}]"}));
  ASSERT_TRUE(r.result.faults.has_value());
  EXPECT_EQ(r.result.faults->faults, 1);
  EXPECT_NEAR(r.result.faults->fault_free_iteration_time_s, run_scenario(job()).result.iteration_time_s, 1e-12);
  EXPECT_GT(r.result.faults->slowdown, 1.0);
  // A straggler at 80 % speed: the job runs at its speed (compute 1/0.8 longer). Kernels priced alone:
  // with interference, how much of the compute overlaps collectives changes with the straggler too.
  const RunOutput slow = run_scenario(
      job({"faults=[{kind: gpu_slow, rank: 13, factor: 0.8, always: true}]", "compute.interference=false"}));
  EXPECT_NEAR(
      slow.result.breakdown.compute / run_scenario(job({"compute.interference=false"})).result.breakdown.compute, 1.25,
      1e-6);
}

// A NIC that dies mid-run: what starts after it goes through another NIC; nothing deadlocks.
TEST(FlowRun, NicFailingMidRunSlowsWhatFollows) {
  const double clean = run_scenario(job()).result.iteration_time_s;
  const RunOutput late = run_scenario(job({"faults=[{kind: nic_down, node: 1, nic: 0, at_s: 1000}]"}));
  EXPECT_DOUBLE_EQ(late.result.iteration_time_s, clean);  // after the iteration: no effect
  const RunOutput early = run_scenario(job({"faults=[{kind: nic_down, node: 1, nic: 0, at_s: 0.01}]"}));
  const RunOutput always = run_scenario(job({"faults=[{kind: nic_down, node: 1, nic: 0, always: true}]"}));
  EXPECT_GT(early.result.iteration_time_s, clean);
  EXPECT_LE(early.result.iteration_time_s, always.result.iteration_time_s * (1 + 1e-9));
}

TEST(FlowRun, SameSeedSameResult) {
  const auto a = run_scenario(job({"cluster.network.topology=fat-tree", "cluster.network.switch_radix=32"}));
  const auto b = run_scenario(job({"cluster.network.topology=fat-tree", "cluster.network.switch_radix=32"}));
  EXPECT_EQ(a.result.iteration_time_s, b.result.iteration_time_s);
}

TEST(FlowRun, WhatTheBackendsCannotDoIsAnErrorNamingTheKey) {
  auto expect_key = [](const std::vector<std::string>& overrides, const std::string& key) {
    try {
      run_scenario(job(overrides));
      ADD_FAILURE() << "no error for " << key;
    } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), key) << e.what(); }
  };
  expect_key({"simulation.network_model=packet", "simulation.max_packets=1000"}, "simulation.network_model");
  expect_key({"simulation.network_model=analytical", "faults=[{kind: nic_down, node: 1, nic: 0, always: true}]"},
             "faults[0].kind");
  expect_key({"faults=[{kind: link_down, link: nowhere, always: true}]"}, "faults[0].link");
  expect_key({"faults=[{kind: node_down, node: 1, always: true}]"}, "faults[0].kind");
  expect_key({"faults=[{kind: gpu_slow, rank: 1, factor: 0.5, at_s: 1}]"}, "faults[0].at_s");
}

}  // namespace
