// `trainsim plan`'s text report and --json object (include/trainsim/plan.hpp).
#include <cmath>
#include <sstream>

#include <fmt/format.h>

#include "report/format_utils.hpp"
#include "trainsim/plan.hpp"

namespace trainsim {

namespace {

// A run's durations reach months: minutes, hours and days above the report's usual seconds.
std::string duration(double s) {
  if (s >= 2 * 86400) return fmt::format("{:.2f} days", s / 86400);
  if (s >= 2 * 3600) return fmt::format("{:.2f} h", s / 3600);
  if (s >= 120) return fmt::format("{:.1f} min", s / 60);
  return report_format::human_duration(s);
}

std::string share(double part, double whole) { return whole > 0 ? report_format::share_of(part, whole) + "%" : "-"; }

}  // namespace

std::string plan_text(const PlanResult& p) {
  std::ostringstream o;
  o << fmt::format("trainsim plan: {}\n", p.scenario);
  o << fmt::format("  {} GPUs on {} nodes; iteration {:.3f} s ({:.4g} tokens)\n", p.num_gpus, p.num_nodes,
                   p.iteration_time_s, p.tokens_per_iteration);
  o << fmt::format("  run: {:.4g} iterations, {:.4g} tokens, {} of training\n\n", p.iterations, p.tokens,
                   duration(p.useful_s));
  o << fmt::format("  expected wall-clock time   {}   goodput {:.1f}%\n", duration(p.wall_s), 100 * p.goodput);
  if (p.trials > 0)
    o << fmt::format(
        "  Monte Carlo ({} trials, seed {}): p10 {:.2f}  p50 {:.2f}  p90 {:.2f} days (mean {:.2f}, {:.1f} "
        "interruptions)\n",
        p.trials, p.seed, p.p10_days, p.p50_days, p.p90_days, p.mean_days, p.mean_failures);
  o << "\n  where the time goes                     time    share\n";
  const auto row = [&](const char* what, double s) {
    o << fmt::format("    {:<34} {:>12}  {:>7}\n", what, duration(s), share(s, p.wall_s));
  };
  row("training", p.useful_s);
  row("stragglers", p.straggler_s);
  row("checkpoint stalls", p.checkpoint_stall_total_s);
  row("work redone after failures", p.lost_work_s);
  row("restarts (detect, relaunch, load)", p.restart_total_s);
  row("waiting for a spare node", p.spare_wait_s);

  o << fmt::format("\n  interruptions: {:.1f} expected, {:.3g} a day (MTBF {:.3g} h)\n", p.failures, p.failures_per_day,
                   p.mtbf_hours);
  o << "    cause       devices  per device-day   expected\n";
  for (const PlanCause& c : p.causes)
    o << fmt::format("    {:<10} {:>8}  {:>14.3g}  {:>9.1f}\n", c.name, c.devices, c.rate_per_device_day,
                     c.expected_failures);
  o << fmt::format("    restart {} per interruption; spares: {}{}\n", duration(p.restart_s),
                   p.spare_nodes ? std::to_string(*p.spare_nodes) : "always at hand",
                   p.spare_wait_per_failure_s > 0
                       ? fmt::format(" (a hardware failure waits {} on average)", duration(p.spare_wait_per_failure_s))
                       : "");
  if (p.checkpoints) {
    o << fmt::format(
        "\n  checkpoints: {:.3g} TB, {} write{}, {} load; every {} ({})\n", p.checkpoint_bytes / 1e12,
        duration(p.checkpoint_write_s),
        p.async_checkpoint ? fmt::format(" behind training (stall {})", duration(p.checkpoint_stall_s)) : "",
        duration(p.checkpoint_load_s), duration(p.interval_s), p.interval_basis);
    o << fmt::format("    Young {}, Daly {}, model optimum {}{}\n", duration(p.young_interval_s),
                     duration(p.daly_interval_s), duration(p.model_optimal_interval_s),
                     p.simulated_optimal_interval_s
                         ? fmt::format(", simulated optimum {}", duration(*p.simulated_optimal_interval_s))
                         : "");
  } else {
    o << "\n  checkpoints: none (a failure starts the run again)\n";
  }
  o << fmt::format(
      "\n  power per GPU: compute {:.0f} W, communication {:.0f} W, idle {:.0f} W ({}); iteration average "
      "{:.0f} W; hosts {:.0f} W and network {:.0f} W per GPU; PUE {:.2f}\n",
      p.gpu_compute_w, p.gpu_communication_w, p.gpu_idle_w, p.power_basis, p.gpu_average_w, p.node_overhead_w_per_gpu,
      p.network_w_per_gpu, p.pue);
  o << fmt::format("  energy: {:.4g} MJ per iteration ({:.4g} tokens per joule), {:.4g} MWh for the run\n",
                   p.iteration_energy_j / 1e6, p.tokens_per_joule, p.run_energy_mwh);
  if (p.cost_usd) {
    o << fmt::format("  cost: ${:.4g}", *p.cost_usd);
    if (p.gpu_hour_cost_usd) o << fmt::format("  (GPU-hours ${:.4g}", *p.gpu_hour_cost_usd);
    if (p.energy_cost_usd) o << fmt::format("{}energy ${:.4g}", p.gpu_hour_cost_usd ? ", " : "  (", *p.energy_cost_usd);
    o << ")\n";
  }
  return o.str();
}

nlohmann::ordered_json plan_json(const PlanResult& p) {
  nlohmann::ordered_json j;
  j["scenario"] = p.scenario;
  j["num_gpus"] = p.num_gpus;
  j["num_nodes"] = p.num_nodes;
  j["iteration_time_s"] = p.iteration_time_s;
  j["straggler_iteration_time_s"] = p.straggler_iteration_time_s;
  j["tokens_per_iteration"] = p.tokens_per_iteration;
  j["iterations"] = p.iterations;
  j["tokens"] = p.tokens;
  j["wall_days"] = p.wall_s / 86400;
  j["goodput"] = p.goodput;
  j["time_s"] = {{"training", p.useful_s},
                 {"stragglers", p.straggler_s},
                 {"checkpoint_stalls", p.checkpoint_stall_total_s},
                 {"lost_work", p.lost_work_s},
                 {"restarts", p.restart_total_s},
                 {"spare_wait", p.spare_wait_s},
                 {"wall", p.wall_s}};
  nlohmann::ordered_json causes = nlohmann::ordered_json::array();
  for (const PlanCause& c : p.causes)
    causes.push_back({{"cause", c.name},
                      {"devices", c.devices},
                      {"rate_per_device_day", c.rate_per_device_day},
                      {"needs_node", c.needs_node},
                      {"expected_failures", c.expected_failures}});
  j["failures"] = {{"expected", p.failures},
                   {"per_day", p.failures_per_day},
                   {"mtbf_hours", std::isfinite(p.mtbf_hours) ? nlohmann::ordered_json(p.mtbf_hours) : nullptr},
                   {"restart_s", p.restart_s},
                   {"spare_nodes", p.spare_nodes ? nlohmann::ordered_json(*p.spare_nodes) : nullptr},
                   {"spare_wait_per_failure_s", p.spare_wait_per_failure_s},
                   {"causes", causes}};
  nlohmann::ordered_json ck = {{"enabled", p.checkpoints}};
  if (p.checkpoints) {
    ck["async"] = p.async_checkpoint;
    ck["bytes"] = p.checkpoint_bytes;
    ck["write_s"] = p.checkpoint_write_s;
    ck["stall_s"] = p.checkpoint_stall_s;
    ck["load_s"] = p.checkpoint_load_s;
    ck["interval_s"] = p.interval_s;
    ck["interval_basis"] = p.interval_basis;
    ck["young_interval_s"] = p.young_interval_s;
    ck["daly_interval_s"] = p.daly_interval_s;
    ck["model_optimal_interval_s"] = p.model_optimal_interval_s;
    ck["simulated_optimal_interval_s"] =
        p.simulated_optimal_interval_s ? nlohmann::ordered_json(*p.simulated_optimal_interval_s) : nullptr;
  }
  j["checkpoints"] = ck;
  if (p.trials > 0)
    j["monte_carlo"] = {
        {"trials", p.trials},     {"seed", p.seed},         {"mean_days", p.mean_days},        {"p10_days", p.p10_days},
        {"p50_days", p.p50_days}, {"p90_days", p.p90_days}, {"mean_failures", p.mean_failures}};
  j["energy"] = {{"gpu_compute_w", p.gpu_compute_w},
                 {"gpu_communication_w", p.gpu_communication_w},
                 {"gpu_idle_w", p.gpu_idle_w},
                 {"gpu_average_w", p.gpu_average_w},
                 {"node_overhead_w_per_gpu", p.node_overhead_w_per_gpu},
                 {"network_w_per_gpu", p.network_w_per_gpu},
                 {"pue", p.pue},
                 {"power_basis", p.power_basis},
                 {"iteration_j", p.iteration_energy_j},
                 {"tokens_per_joule", p.tokens_per_joule},
                 {"run_mwh", p.run_energy_mwh}};
  nlohmann::ordered_json cost = nullptr;
  if (p.cost_usd)
    cost = {{"usd", *p.cost_usd},
            {"gpu_hours_usd", p.gpu_hour_cost_usd ? nlohmann::ordered_json(*p.gpu_hour_cost_usd) : nullptr},
            {"energy_usd", p.energy_cost_usd ? nlohmann::ordered_json(*p.energy_cost_usd) : nullptr}};
  j["cost"] = cost;
  return j;
}

}  // namespace trainsim
