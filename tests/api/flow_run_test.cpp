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

// Hosts of 4 GPUs in NVLink domains of 16, 24 GPUs: TP 4 stays on a host, but each DP group of 6 holds 4 ranks on
// the first domain and 2 on the second. The flows lay a communicator out as equal nodes, so such groups are priced
// by NCCL's cost model, and the run says so (it used to stop: "flow endpoint rank 7 is outside its group of 6").
TEST(FlowRun, GroupsSpreadUnevenlyOverDomainsArePricedByTheModel) {
  const std::vector<std::string> uneven{
      "cluster.num_gpus=24",
      "cluster.gpus_per_node=4",
      "cluster.nics_per_node=4",
      "parallelism.tensor=4",
      "cluster.scale_up={kind: nvswitch, bandwidth_GBps: 450, domain_size: 16, job_gpus_per_domain: 16}",
      "training.global_batch_size=48"};
  const RunOutput flow = run_scenario(job(uneven));
  auto analytical_overrides = uneven;
  analytical_overrides.push_back("simulation.network_model=analytical");
  const RunOutput analytical = run_scenario(job(analytical_overrides));
  EXPECT_EQ(flow.result.simulation.network_model, "flow");
  EXPECT_DOUBLE_EQ(flow.result.iteration_time_s, analytical.result.iteration_time_s);
  int said = 0;
  for (const auto& w : flow.result.warnings)
    if (w.key == "simulation.network_model" && w.message.find("dp groups spread their 6 ranks unevenly over 2 NVLink "
                                                              "domains (up to 4 on one)") != std::string::npos)
      ++said;
  EXPECT_EQ(said, 1);
  for (const auto& w : analytical.result.warnings) EXPECT_NE(w.key, "simulation.network_model");
  // Even groups still move as flows: the same job on 32 GPUs (DP 8 groups of 4 + 4) has no such warning.
  const RunOutput even = run_scenario(job({"cluster.gpus_per_node=4", "cluster.nics_per_node=4", "parallelism.tensor=4",
                                           "cluster.scale_up={kind: nvswitch, bandwidth_GBps: 450, domain_size: 16}"}));
  EXPECT_GT(even.result.simulation.flows, 0);
  for (const auto& w : even.result.warnings) EXPECT_NE(w.key, "simulation.network_model");
}

// TP 8 on NVLink domains of 12 GPUs: the TP group of GPUs 8-15 straddles two domains and runs over the NICs while
// the others stay on NVLink. One simulated rank stands for all TP groups, so each of its TP calls runs on every
// copy at once: the flow level moves them all, the analytical level prices the slowest copy; both wait for it.
TEST(FlowRun, TheSlowestCopyOfAGroupSetsThePaceInBothModels) {
  const std::vector<std::string> straddling{"cluster.num_gpus=24", "cluster.gpus_per_node=4", "cluster.nics_per_node=4",
                                            "cluster.scale_up={kind: nvswitch, bandwidth_GBps: 450, domain_size: 12}",
                                            "training.global_batch_size=48"};
  auto analytical_overrides = straddling;
  analytical_overrides.push_back("simulation.network_model=analytical");
  const double flow = run_scenario(job(straddling)).result.iteration_time_s;
  const RunOutput analytical = run_scenario(job(analytical_overrides));
  EXPECT_NEAR(analytical.result.iteration_time_s / flow, 1.0, 0.05);
  // The same job with one 24-GPU domain: every TP group on NVLink.
  auto one_domain = analytical_overrides;
  one_domain[3] = "cluster.scale_up={kind: nvswitch, bandwidth_GBps: 450, domain_size: 24}";
  EXPECT_GT(analytical.result.iteration_time_s, 2 * run_scenario(job(one_domain)).result.iteration_time_s);
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
