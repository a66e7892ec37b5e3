#pragma once
// `trainsim plan`: from one simulated iteration to the whole training run — days to train, goodput, interruptions
// and what each cause costs, checkpoints, stragglers, energy and money (docs/run-planning.md).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/result.hpp"
#include "scenario/scenario.hpp"

namespace trainsim {

// The most Monte-Carlo runs a plan takes (each set of them is repeated at nine intervals for the simulated
// optimum): about a second per thousand on a 16,384-GPU run with ~1,500 failures each.
inline constexpr int kMaxPlanTrials = 100000;

struct PlanRequest {
  enum class Target { Tokens, Iterations, Days };
  Target target = Target::Tokens;
  double amount = 0;       // tokens, iterations or days of wall-clock time
  int trials = 0;          // Monte-Carlo runs (0 = the expectation only)
  std::uint64_t seed = 0;  // of the trials; the same seed gives the same numbers
};

struct PlanCause {
  std::string name;  // gpu, hbm, host, nic, switch, link, software, other
  std::int64_t devices = 0;
  double rate_per_device_day = 0;
  bool needs_node = false;  // hardware: the node is swapped for a spare, or waited for
  double expected_failures = 0;
};

struct PlanResult {
  std::string scenario;
  int num_gpus = 0, num_nodes = 0;
  double iteration_time_s = 0, straggler_iteration_time_s = 0, tokens_per_iteration = 0;
  double iterations = 0, tokens = 0;
  // Checkpoints.
  bool checkpoints = true, async_checkpoint = false;
  double checkpoint_bytes = 0, checkpoint_stall_s = 0, checkpoint_write_s = 0, checkpoint_load_s = 0;
  double interval_s = 0;
  std::string interval_basis;  // "given" or "optimal"
  double young_interval_s = 0, daly_interval_s = 0, model_optimal_interval_s = 0;
  std::optional<double> simulated_optimal_interval_s;  // with trials: the best of a grid around Young's
  // Failures.
  std::vector<PlanCause> causes;
  double failures_per_day = 0, mtbf_hours = 0, restart_s = 0, spare_wait_per_failure_s = 0;
  std::optional<int> spare_nodes;
  // The expected run.
  double useful_s = 0, wall_s = 0, failures = 0, checkpoint_stall_total_s = 0, lost_work_s = 0, restart_total_s = 0,
         spare_wait_s = 0, straggler_s = 0, goodput = 0;
  // Monte Carlo (trials > 0).
  int trials = 0;
  std::uint64_t seed = 0;
  double mean_days = 0, p10_days = 0, p50_days = 0, p90_days = 0, mean_failures = 0;
  // Energy and cost.
  double gpu_idle_w = 0, gpu_communication_w = 0, gpu_compute_w = 0, gpu_average_w = 0;
  double node_overhead_w_per_gpu = 0, network_w_per_gpu = 0, pue = 1;
  std::string power_basis;
  double iteration_energy_j = 0, tokens_per_joule = 0, run_energy_mwh = 0;
  std::optional<double> cost_usd, gpu_hour_cost_usd, energy_cost_usd;
};

// Throws ScenarioError naming the key for a plan the scenario cannot support (checkpoints without a storage
// bandwidth, an interval longer than the run), Error when the run cannot finish, and what run_scenario throws.
PlanResult plan_run(const Scenario& s, const PlanRequest& request);
// What plan_run checks before it simulates anything (a training job, a storage bandwidth for checkpoints, the GPU's
// power): throws the same ScenarioError. Searches over many scenarios check their base first.
void check_plan_inputs(const Scenario& s);
// The same from an iteration already simulated (`iteration` = run_scenario(s).result, as a sweep or a search has
// it): only the straggler's iteration is simulated here, when the scenario has stragglers.
PlanResult plan_from_iteration(const Scenario& s, const RunResult& iteration, const PlanRequest& request);

std::string plan_text(const PlanResult& plan);
nlohmann::ordered_json plan_json(const PlanResult& plan);

}  // namespace trainsim
