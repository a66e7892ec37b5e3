// plan_run: a scenario and a simulated iteration turned into the whole run, the fleet's devices counted, and every
// invalid plan refused with the key that makes it so.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.hpp"
#include "hardware/fleet_data.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/plan.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

// GPT-3 1.3B on 4 DGX H100 (32 GPUs), with every fleet value given so that the numbers can be checked by hand.
const char* kJob = R"(
model: {preset: gpt3-1.3b}
training:
  global_batch_size: 64
  micro_batch_size: 2
  resilience:
    failure_rates: {gpu: 0.001, hbm: 0.0005, host: 0.002, nic: 0.0002, switch: 0.0001, link: 0.00005, software: 0.001}
    detect_restart_min: 10
    repair_hours: 24
    bad_machine_recurrence: 0
    storage_GBps: 10
parallelism: {tensor: 2}
cluster: {gpu: H100-SXM, num_gpus: 32, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}
power: {gpu_idle_w: 100, gpu_communication_w: 400, gpu_compute_w: 700, node_overhead_w_per_gpu: 300,
        network_w_per_gpu: 50, pue: 1.2}
cost: {usd_per_gpu_hour: 2.0, usd_per_mwh: 100}
)";

Scenario job(const std::vector<std::string>& overrides = {}) { return parse_scenario(kJob, "job.yaml", overrides); }

PlanRequest iterations(double n, int trials = 0) {
  PlanRequest r;
  r.target = PlanRequest::Target::Iterations;
  r.amount = n;
  r.trials = trials;
  r.seed = 1;
  return r;
}

const PlanCause& cause(const PlanResult& p, const std::string& name) {
  for (const PlanCause& c : p.causes)
    if (c.name == name) return c;
  throw std::runtime_error("no cause " + name);
}

TEST(PlanRun, CountsTheDevicesTheJobUses) {
  const PlanResult p = plan_run(job(), iterations(1000));
  EXPECT_EQ(cause(p, "gpu").devices, 32);
  EXPECT_EQ(cause(p, "hbm").devices, 32);
  EXPECT_EQ(cause(p, "host").devices, 4);
  EXPECT_EQ(cause(p, "software").devices, 4);
  EXPECT_EQ(cause(p, "nic").devices, 32);
  EXPECT_GT(cause(p, "switch").devices, 0);
  EXPECT_GE(cause(p, "link").devices, 32);  // at least every NIC's cable
  double per_day = 0;
  for (const PlanCause& c : p.causes) per_day += c.rate_per_device_day * static_cast<double>(c.devices);
  EXPECT_NEAR(p.failures_per_day, per_day, 1e-12);
  EXPECT_NEAR(p.mtbf_hours, 24 / per_day, 1e-9);
}

TEST(PlanRun, WithoutFailuresGoodputIsOneMinusTheCheckpointStalls) {
  std::vector<std::string> none;
  for (const char* c : kFailureComponents) none.push_back(std::string("training.resilience.failure_rates.") + c + "=0");
  none.push_back("training.resilience.checkpoint_interval_min=1");
  const PlanResult p = plan_run(job(none), iterations(20000));
  EXPECT_EQ(p.failures, 0);
  // 1.3B parameters x 14 bytes at 10 GB/s.
  EXPECT_NEAR(p.checkpoint_write_s, p.checkpoint_bytes / 10e9, 1e-9);
  EXPECT_NEAR(p.checkpoint_bytes / 14 / 1e9, 1.3, 0.1);
  EXPECT_NEAR(p.goodput, 1 - p.checkpoint_stall_total_s / p.wall_s, 1e-12);
  EXPECT_NEAR(p.wall_s, p.useful_s + p.checkpoint_stall_total_s, 1e-6);
  const double checkpoints = std::ceil(p.useful_s / 60 - 1e-9) - 1;
  EXPECT_NEAR(p.checkpoint_stall_total_s, checkpoints * p.checkpoint_write_s, 1e-6);
}

TEST(PlanRun, TokensIterationsAndDaysDescribeTheSameRun) {
  const PlanResult by_iterations = plan_run(job(), iterations(100000));
  PlanRequest tokens;
  tokens.amount = by_iterations.tokens;
  const PlanResult by_tokens = plan_run(job(), tokens);
  EXPECT_NEAR(by_tokens.iterations, 100000, 1e-6);
  EXPECT_NEAR(by_tokens.wall_s, by_iterations.wall_s, 1e-6 * by_iterations.wall_s);
  PlanRequest days;
  days.target = PlanRequest::Target::Days;
  days.amount = by_iterations.wall_s / 86400;
  const PlanResult by_days = plan_run(job(), days);
  EXPECT_NEAR(by_days.wall_s / by_iterations.wall_s, 1.0, 0.002);
  EXPECT_NEAR(by_days.iterations / 100000, 1.0, 0.002);
}

TEST(PlanRun, EnergyFollowsTheIterationsBreakdown) {
  const Scenario s = job();
  const PlanResult p = plan_run(s, iterations(1000));
  const RunResult r = run_scenario(s).result;
  const double busy = r.breakdown.compute + r.breakdown.optimizer, comm = r.breakdown.exposed_comm;
  const double idle = r.iteration_time_s - busy - comm;
  const double gpu_w = (busy * 700 + comm * 400 + idle * 100) / r.iteration_time_s;
  EXPECT_NEAR(p.gpu_average_w, gpu_w, 1e-9);
  EXPECT_NEAR(p.iteration_energy_j, 1.2 * 32 * (gpu_w + 300 + 50) * r.iteration_time_s, 1e-6);
  EXPECT_NEAR(p.tokens_per_joule, 64.0 * 2048 / p.iteration_energy_j, 1e-12);
  // The run draws at least its iterations' energy, and costs its GPU-hours plus its energy.
  EXPECT_GE(p.run_energy_mwh * 3.6e9, 1000 * p.iteration_energy_j * (1 - 1e-9));
  ASSERT_TRUE(p.cost_usd.has_value());
  EXPECT_NEAR(*p.cost_usd, 2.0 * 32 * p.wall_s / 3600 + 100 * p.run_energy_mwh, 1e-6);
}

TEST(PlanRun, StragglersSlowTheRunByTheirExpectedShare) {
  const PlanResult clean = plan_run(job(), iterations(10000));
  const PlanResult slow =
      plan_run(job({"training.resilience.straggler_fraction=0.01", "training.resilience.straggler_slowdown=1.5"}),
               iterations(10000));
  EXPECT_GT(slow.straggler_iteration_time_s, 1.2 * slow.iteration_time_s);  // the step waits for the slow GPU
  const double chance = 1 - std::pow(0.99, 32);
  EXPECT_NEAR(slow.straggler_s, 10000 * chance * (slow.straggler_iteration_time_s - slow.iteration_time_s), 1e-6);
  EXPECT_GT(slow.wall_s, clean.wall_s + 0.9 * slow.straggler_s);
}

TEST(PlanRun, MonteCarloIsDeterministicAndSpreadsAroundTheExpectation) {
  const PlanResult a = plan_run(job(), iterations(2e6, 200));
  const PlanResult b = plan_run(job(), iterations(2e6, 200));
  EXPECT_EQ(plan_json(a).dump(), plan_json(b).dump());
  EXPECT_LE(a.p10_days, a.p50_days);
  EXPECT_LE(a.p50_days, a.p90_days);
  EXPECT_NEAR(a.mean_days * 86400 / a.wall_s, 1.0, 0.02);
  ASSERT_TRUE(a.simulated_optimal_interval_s.has_value());
  EXPECT_GT(*a.simulated_optimal_interval_s, 0);
}

TEST(PlanRun, FleetDefaultsComeFromTheDataFile) {
  const FleetResilience& fleet = fleet_resilience();
  const Scenario s = parse_scenario(R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 64, micro_batch_size: 2, resilience: {storage_GBps: 10}}
parallelism: {tensor: 2}
cluster: {gpu: H100-SXM, num_gpus: 32, gpus_per_node: 8}
)",
                                    "defaults.yaml");
  const PlanResult p = plan_run(s, iterations(1000));
  for (const PlanCause& c : p.causes) EXPECT_EQ(c.rate_per_device_day, fleet.failure_rates.at(c.name)) << c.name;
  EXPECT_EQ(p.restart_s, fleet.detect_restart_min * 60);
  const GpuPower g = gpu_power(s.cluster.gpu);
  EXPECT_EQ(p.gpu_compute_w, g.compute_w);
  EXPECT_EQ(p.pue, fleet_power().pue);
}

void expect_key(const std::vector<std::string>& overrides, const std::string& key,
                PlanRequest request = iterations(1000)) {
  try {
    plan_run(job(overrides), request);
    ADD_FAILURE() << "expected a ScenarioError on " << key;
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), key) << e.what(); }
}

TEST(PlanRun, BadInputNamesTheKey) {
  expect_key({"training.resilience.storage_GBps=null"}, "training.resilience.storage_GBps");
  expect_key({"training.resilience.checkpoint_interval_min=100000"}, "training.resilience.checkpoint_interval_min");
  expect_key({"training.resilience.async_checkpoint=true", "training.resilience.storage_GBps=0.01",
              "training.resilience.checkpoint_interval_min=1"},
             "training.resilience.checkpoint_interval_min");
  expect_key({"training.resilience.failure_rates.gpu=-1"}, "training.resilience.failure_rates.gpu");
  expect_key({"training.resilience.failure_rates.gpu=100"}, "training.resilience.failure_rates.gpu");
  expect_key({"training.resilience.bad_machine_recurrence=1"}, "training.resilience.bad_machine_recurrence");
  expect_key({"training.resilience.checkpoint_interval_min=often"}, "training.resilience.checkpoint_interval_min");
  expect_key({"training.resilience.straggler_fraction=2"}, "training.resilience.straggler_fraction");
  expect_key({"training.resilience.straggler_slowdown=0.5"}, "training.resilience.straggler_slowdown");
  expect_key({"training.resilience.spare_nodes=-1"}, "training.resilience.spare_nodes");
  expect_key({"power.pue=0.8"}, "power.pue");
  expect_key({"power.gpu_idle_w=800"}, "power.gpu_idle_w");
  expect_key({"power.gpu_communication_w=800"}, "power.gpu_communication_w");
  expect_key({"power.gpu_idle_w=500"}, "power.gpu_idle_w");  // above communication, below compute
  expect_key({"cost.usd_per_gpu_hour=-2"}, "cost.usd_per_gpu_hour");
  expect_key({"training.resilience.failure_rate=1"}, "training.resilience.failure_rate");  // unknown key
}

// A sweep or a search has the iteration already: planning from it gives the plan plan_run gives, and what plan_run
// refuses before simulating, check_plan_inputs refuses the same way.
TEST(PlanRun, FromAnIterationAlreadySimulatedIsThePlanOfTheScenario) {
  const Scenario s = job({"training.resilience.straggler_fraction=0.001", "training.resilience.straggler_slowdown=2"});
  const PlanResult direct = plan_run(s, iterations(50000));
  const PlanResult from = plan_from_iteration(s, run_scenario(s).result, iterations(50000));
  EXPECT_EQ(plan_json(from).dump(), plan_json(direct).dump());
  EXPECT_GT(from.straggler_iteration_time_s, from.iteration_time_s);  // the straggler's iteration was simulated
  for (const auto& [overrides, key] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"training.resilience.storage_GBps=null"}, "training.resilience.storage_GBps"},
           {{"cluster.gpu=null",
             "cluster.gpu_spec={name: unrated, architecture: hopper, peak_tflops: {bf16: 1000}, memory_gib: 80, "
             "hbm_GBps: 3000, scale_up_GBps: 450}",
             "power.gpu_idle_w=null", "power.gpu_communication_w=null", "power.gpu_compute_w=null"},
            "power.gpu_compute_w"}}) {
    try {
      check_plan_inputs(job(overrides));
      ADD_FAILURE() << "expected a ScenarioError on " << key;
    } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), key) << e.what(); }
  }
  EXPECT_NO_THROW(check_plan_inputs(
      job({"training.resilience.storage_GBps=null", "training.resilience.checkpoint_interval_min=none"})));
}

TEST(PlanRun, ARunThatCannotFinishIsAnError) {
  EXPECT_THROW(plan_run(job({"training.resilience.failure_rates.software=20",
                             "training.resilience.checkpoint_interval_min=none"}),
                        iterations(1e7)),
               Error);
  PlanRequest nothing = iterations(0);
  EXPECT_THROW(plan_run(job(), nothing), Error);
  EXPECT_THROW(plan_run(job(), iterations(1000, kMaxPlanTrials + 1)), Error);
  EXPECT_THROW(plan_run(job(), iterations(1000, -1)), Error);
}

}  // namespace
}  // namespace trainsim
