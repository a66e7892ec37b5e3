// plan_run (include/trainsim/plan.hpp): the scenario's iteration simulated once (and once more with a straggler),
// its fleet resolved (failure rates x the devices the job uses, spares, restarts, checkpoint sizes and bandwidths),
// and the run model of run_model.hpp applied. docs/run-planning.md has the formulas and the data's sources.
#include <cmath>

#include <fmt/format.h>

#include "core/error.hpp"
#include "hardware/fleet_data.hpp"
#include "model/layer_shapes.hpp"
#include "plan/run_model.hpp"
#include "topology/generate.hpp"
#include "topology/summary.hpp"
#include "trainsim/plan.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {

namespace {

constexpr double kSecondsPerDay = 86400;
// What Megatron's distributed checkpoint writes per parameter: the bf16 weights (2 bytes) and the optimizer's
// fp32 master copy and two Adam moments (12 bytes); gradients are not saved.
constexpr double kCheckpointBytesPerParam = 14;
constexpr const char* kKey = "training.resilience";
constexpr const char* kUnknownGpuPower =
    "the GPU's power is not known: give power.gpu_idle_w, power.gpu_communication_w and power.gpu_compute_w";

std::string key(const char* name) { return std::string(kKey) + "." + name; }

// Devices of each failing kind the job uses: GPUs, nodes, NICs, and the fabric's switches and cables.
std::map<std::string, std::int64_t> device_counts(const Scenario& s) {
  std::map<std::string, std::int64_t> n;
  const ClusterSpec& c = s.cluster;
  n["gpu"] = n["hbm"] = c.num_gpus;
  n["host"] = n["software"] = n["other"] = c.num_nodes();
  n["nic"] = static_cast<std::int64_t>(c.num_nodes()) * c.nics_per_node;
  const NetworkSummary net = summarize(build_network(c), c.network);
  std::int64_t switches = 0, cables = 0;
  for (const SwitchTierSummary& t : net.switches) switches += t.count;
  for (const LinkClassSummary& l : net.links)
    if (l.kind != LinkKind::ScaleUp && l.kind != LinkKind::Pcie) cables += l.links / 2;  // directed: two a cable
  n["switch"] = switches;
  n["link"] = cables;
  return n;
}

double resolved(const std::map<std::string, double>& given, const std::string& name,
                const std::map<std::string, double>& fleet) {
  const auto it = given.find(name);
  return it != given.end() ? it->second : fleet.at(name);
}

}  // namespace

void check_plan_inputs(const Scenario& s) {
  if (!s.has_training_job) throw ScenarioError(s.file, "model", "a run plan needs a training job (a model block)");
  const ResilienceSpec& rs = s.resilience;
  if (rs.checkpoints && !rs.storage_GBps)
    throw ScenarioError(s.file, key("storage_GBps"),
                        fmt::format("checkpoints of {:.3g} TB need the storage's write bandwidth in GB/s (or "
                                    "checkpoint_interval_min: none to plan without checkpoints)",
                                    total_params(s.model) * kCheckpointBytesPerParam / 1e12));
  const PowerSpec& ps = s.power;
  if (!(ps.gpu_idle_w && ps.gpu_communication_w && ps.gpu_compute_w)) {
    try {
      gpu_power(s.cluster.gpu, fleet_power());
    } catch (const Error&) { throw ScenarioError(s.file, "power.gpu_compute_w", kUnknownGpuPower); }
  }
}

namespace {

void check_plan_request(const PlanRequest& request) {
  if (!(request.amount > 0) || !std::isfinite(request.amount))
    throw Error(fmt::format("the run's size must be a positive number, got {:g}", request.amount));
  if (request.trials < 0 || request.trials > kMaxPlanTrials)
    throw Error(fmt::format("trials: expected 0 to {} Monte-Carlo runs, got {}", kMaxPlanTrials, request.trials));
}

PlanResult plan_checked(const Scenario& s, const RunResult& r, const PlanRequest& request);

}  // namespace

// Everything that can be refused is refused before the iteration is simulated.
PlanResult plan_run(const Scenario& s, const PlanRequest& request) {
  check_plan_inputs(s);
  check_plan_request(request);
  return plan_checked(s, run_scenario(s).result, request);
}

PlanResult plan_from_iteration(const Scenario& s, const RunResult& r, const PlanRequest& request) {
  check_plan_inputs(s);
  check_plan_request(request);
  return plan_checked(s, r, request);
}

namespace {

PlanResult plan_checked(const Scenario& s, const RunResult& r, const PlanRequest& request) {
  const ResilienceSpec& rs = s.resilience;
  const FleetResilience& fleet = fleet_resilience();
  PlanResult p;
  p.scenario = s.name;
  p.num_gpus = s.cluster.num_gpus;
  p.num_nodes = s.cluster.num_nodes();

  // The iteration (given), and with one GPU slowed by straggler_slowdown: a synchronous step waits for its slowest GPU.
  if (!r.energy)  // before any more work: the run's energy needs the GPU's power
    throw ScenarioError(s.file, "power.gpu_compute_w", kUnknownGpuPower);
  p.iteration_time_s = r.iteration_time_s;
  p.tokens_per_iteration = static_cast<double>(s.training.global_batch_size) * static_cast<double>(s.model.seq_length);
  p.straggler_iteration_time_s = p.iteration_time_s;
  double straggled_share = 0;  // chance that at least one GPU is a straggler at a given time
  if (rs.straggler_fraction > 0 && rs.straggler_slowdown > 1) {
    Scenario slow = s;
    FaultSpec f;
    f.kind = FaultKind::GpuSlow;
    f.rank = 0;
    f.factor = 1 / rs.straggler_slowdown;  // the share of its speed a slow GPU keeps
    slow.faults.push_back(f);
    p.straggler_iteration_time_s = run_scenario(slow).result.iteration_time_s;
    straggled_share = -std::expm1(static_cast<double>(p.num_gpus) * std::log1p(-rs.straggler_fraction));
  }
  const double expected_iteration_s =
      p.iteration_time_s + straggled_share * (p.straggler_iteration_time_s - p.iteration_time_s);

  // Checkpoints: size from the model, write / read times from the storage, the stall from sync or async.
  p.checkpoints = rs.checkpoints;
  p.async_checkpoint = rs.async_checkpoint;
  p.checkpoint_bytes = total_params(s.model) * kCheckpointBytesPerParam;
  if (p.checkpoints) {  // check_plan_inputs: the storage bandwidth is given
    p.checkpoint_write_s = p.checkpoint_bytes / (*rs.storage_GBps * 1e9);
    p.checkpoint_load_s = p.checkpoint_bytes / (rs.read_GBps.value_or(*rs.storage_GBps) * 1e9);
    // Asynchronous: each GPU copies its shard to host memory over PCIe, then training goes on during the write.
    p.checkpoint_stall_s =
        rs.async_checkpoint
            ? std::min(p.checkpoint_write_s, p.checkpoint_bytes / p.num_gpus / (s.cluster.network.pcie_GBps * 1e9))
            : p.checkpoint_write_s;
  }

  // Failures: each component's rate (given, or the fleet's) times the devices of its kind the job uses.
  plan::RunModelInputs in;
  const auto counts = device_counts(s);
  for (const char* c : kFailureComponents) {
    PlanCause cause;
    cause.name = c;
    cause.devices = counts.at(c);
    cause.rate_per_device_day = resolved(rs.failure_rates, c, fleet.failure_rates);
    cause.needs_node = cause.name != "software";
    in.failure_rate_per_s[c] = cause.rate_per_device_day * static_cast<double>(cause.devices) / kSecondsPerDay;
    in.needs_node[c] = cause.needs_node;
    p.causes.push_back(cause);
  }
  in.recurrence = rs.bad_machine_recurrence.value_or(fleet.bad_machine_recurrence);
  in.restart_s = rs.detect_restart_min.value_or(fleet.detect_restart_min) * 60;
  in.load_s = p.checkpoint_load_s;
  in.spare_nodes = rs.spare_nodes;
  in.repair_s = rs.repair_hours.value_or(fleet.repair_hours) * 3600;
  in.checkpoints = p.checkpoints;
  in.checkpoint_stall_s = p.checkpoint_stall_s;
  in.checkpoint_write_s = p.checkpoint_write_s;
  p.spare_nodes = rs.spare_nodes;
  p.restart_s = in.restart_s;
  const double rate = plan::total_failure_rate(in);
  p.failures_per_day = rate * kSecondsPerDay;
  p.mtbf_hours = rate > 0 ? 1 / rate / 3600 : std::numeric_limits<double>::infinity();
  p.spare_wait_per_failure_s = plan::expected_spare_wait_s(in);

  // How much training: tokens or iterations directly; days by inverting the expectation (linear in the work).
  const auto set_work = [&](double iterations) {
    p.iterations = iterations;
    p.tokens = iterations * p.tokens_per_iteration;
    p.useful_s = iterations * p.iteration_time_s;
    in.useful_s = p.useful_s;
    in.straggler_s = iterations * (expected_iteration_s - p.iteration_time_s);
  };
  switch (request.target) {
    case PlanRequest::Target::Tokens: set_work(request.amount / p.tokens_per_iteration); break;
    case PlanRequest::Target::Iterations: set_work(request.amount); break;
    case PlanRequest::Target::Days: set_work(1); break;  // scaled below, once the interval is known
  }

  // The checkpoint interval: given, or the optimum of the expected wall time (Young's and Daly's beside it).
  const auto choose_interval = [&] {
    p.young_interval_s = plan::young_interval_s(in);
    p.daly_interval_s = plan::daly_interval_s(in);
    p.model_optimal_interval_s = plan::optimal_interval_s(in);
    if (rs.checkpoint_interval_min) {
      p.interval_s = *rs.checkpoint_interval_min * 60;
      p.interval_basis = "given";
    } else {
      p.interval_s = p.model_optimal_interval_s;
      p.interval_basis = "optimal";
    }
  };
  choose_interval();
  if (request.target == PlanRequest::Target::Days) {
    // Wall time grows linearly with the work at a fixed interval (stalls and failures are per unit of work):
    // scale one iteration's expectation to the days asked, then settle the interval for that run.
    for (int pass = 0; pass < 3; ++pass) {
      const double per_iteration = plan::expect_run(in, std::min(p.interval_s, in.useful_s + in.straggler_s)).wall_s /
                                   std::max(p.iterations, 1e-300);
      set_work(request.amount * kSecondsPerDay / per_iteration);
      choose_interval();
    }
  }
  if (p.checkpoints && rs.checkpoint_interval_min) {
    const double work = in.useful_s + in.straggler_s;
    if (p.interval_s > work)
      throw ScenarioError(s.file, key("checkpoint_interval_min"),
                          fmt::format("{:g} min between checkpoints is longer than the run's {:.4g} min of training",
                                      *rs.checkpoint_interval_min, work / 60));
    if (p.interval_s + p.checkpoint_stall_s < p.checkpoint_write_s)
      throw ScenarioError(s.file, key("checkpoint_interval_min"),
                          fmt::format("{:g} min between checkpoints is shorter than one asynchronous write ({:.3g} "
                                      "min): the next checkpoint would start before the last is stored",
                                      *rs.checkpoint_interval_min, p.checkpoint_write_s / 60));
  }

  const plan::RunExpectation e = plan::expect_run(in, p.interval_s);
  p.wall_s = e.wall_s;
  p.failures = e.failures;
  p.checkpoint_stall_total_s = e.checkpoint_stall_s;
  p.lost_work_s = e.lost_work_s;
  p.restart_total_s = e.restart_s;
  p.spare_wait_s = e.spare_wait_s;
  p.straggler_s = e.straggler_s;
  p.goodput = e.goodput;
  for (PlanCause& c : p.causes) {  // recurrences count with their cause
    const double effective = in.failure_rate_per_s[c.name] * (c.needs_node ? 1 / (1 - in.recurrence) : 1);
    c.expected_failures = rate > 0 ? e.failures * effective / rate : 0;
  }

  if (request.trials > 0) {
    p.trials = request.trials;
    p.seed = request.seed;
    const plan::RunTrials t = plan::simulate_runs(in, p.interval_s, request.trials, request.seed);
    p.mean_days = t.mean_wall_s / kSecondsPerDay;
    p.p10_days = t.percentile(0.1) / kSecondsPerDay;
    p.p50_days = t.percentile(0.5) / kSecondsPerDay;
    p.p90_days = t.percentile(0.9) / kSecondsPerDay;
    p.mean_failures = t.mean_failures;
    if (p.checkpoints) {  // the same draws at intervals around Young's: the simulated optimum
      double best = std::numeric_limits<double>::infinity();
      for (double f : {0.25, 0.35, 0.5, 0.7, 1.0, 1.4, 2.0, 2.8, 4.0}) {
        const double interval = p.young_interval_s * f;
        if (interval + p.checkpoint_stall_s < p.checkpoint_write_s || interval > in.useful_s + in.straggler_s) continue;
        const double mean = plan::simulate_runs(in, interval, request.trials, request.seed).mean_wall_s;
        if (mean < best) {
          best = mean;
          p.simulated_optimal_interval_s = interval;
        }
      }
    }
  }

  // Energy: the iteration's (RunResult::energy: each GPU's power by what the critical rank does, the hosts' and the
  // network's per GPU, the facility's PUE); stalls, restarts and waits for a node draw idle power.
  const IterationEnergy& ie = *r.energy;
  p.gpu_idle_w = ie.gpu_idle_w;
  p.gpu_communication_w = ie.gpu_communication_w;
  p.gpu_compute_w = ie.gpu_compute_w;
  p.gpu_average_w = ie.gpu_average_w;
  p.power_basis = ie.basis;
  p.node_overhead_w_per_gpu = ie.node_overhead_w_per_gpu;
  p.network_w_per_gpu = ie.network_w_per_gpu;
  p.pue = ie.pue;
  p.iteration_energy_j = ie.joules;
  p.tokens_per_joule = ie.tokens_per_joule;
  const double per_gpu_running = p.gpu_average_w + p.node_overhead_w_per_gpu + p.network_w_per_gpu;
  const double per_gpu_idle = p.gpu_idle_w + p.node_overhead_w_per_gpu + p.network_w_per_gpu;
  const double running_s = e.running_s - e.checkpoint_stall_s;
  const double idle_s = e.checkpoint_stall_s + e.restart_s + e.spare_wait_s;
  const double run_j = p.pue * p.num_gpus * (per_gpu_running * running_s + per_gpu_idle * idle_s);
  p.run_energy_mwh = run_j / 3.6e9;
  if (s.cost.usd_per_gpu_hour) p.gpu_hour_cost_usd = *s.cost.usd_per_gpu_hour * p.num_gpus * p.wall_s / 3600;
  if (s.cost.usd_per_mwh) p.energy_cost_usd = *s.cost.usd_per_mwh * p.run_energy_mwh;
  if (p.gpu_hour_cost_usd || p.energy_cost_usd)
    p.cost_usd = p.gpu_hour_cost_usd.value_or(0) + p.energy_cost_usd.value_or(0);
  return p;
}

}  // namespace

}  // namespace trainsim
