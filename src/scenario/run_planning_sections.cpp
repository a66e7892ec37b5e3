// The blocks `trainsim plan` reads (docs/run-planning.md): training.resilience (failures, restarts, checkpoints,
// stragglers), power and cost. Values left out take the fleet defaults of data/resilience.yaml and
// data/power.yaml when the plan is made; here each given value is checked.
#include <fmt/format.h>

#include "hardware/fleet_data.hpp"
#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

// A failure rate far above any fleet's (one failure per device per hour) is a unit slip (per day vs per year).
constexpr double kMaxFailuresPerDeviceDay = 24;

}  // namespace

ResilienceSpec read_resilience(const Section& r) {
  ResilienceSpec s;
  const Section rates = r.child("failure_rates");
  for (const char* c : kFailureComponents) {
    std::optional<double> v;
    rates.read(c, v, Bound::NonNegative);
    if (!v) continue;
    require_at_most(rates, c, *v, kMaxFailuresPerDeviceDay, "failures per device-day",
                    "fleets report about 1e-4 to 1e-2 per device-day; is the rate per year, or per job?");
    s.failure_rates[c] = *v;
  }
  r.read("detect_restart_min", s.detect_restart_min, Bound::NonNegative);
  if (s.detect_restart_min)
    require_at_most(r, "detect_restart_min", *s.detect_restart_min, 7 * 24 * 60, "min",
                    "a restart that takes more than a week is a repair, not a restart");
  r.read("spare_nodes", s.spare_nodes, Bound::NonNegative);
  r.read("repair_hours", s.repair_hours, Bound::NonNegative);
  if (s.repair_hours)
    require_at_most(r, "repair_hours", *s.repair_hours, 24 * 365, "hours", "a repair longer than a year");
  r.read("bad_machine_recurrence", s.bad_machine_recurrence, Bound::NonNegative);
  if (s.bad_machine_recurrence && *s.bad_machine_recurrence >= 1)
    r.fail("bad_machine_recurrence",
           fmt::format("expected a probability below 1, got {:g}: at 1 every failure brings another, without end",
                       *s.bad_machine_recurrence));
  if (r.has("checkpoint_interval_min") && r.get("checkpoint_interval_min").IsScalar()) {
    const std::string text = r.get("checkpoint_interval_min").Scalar();
    if (text == "none") {
      s.checkpoints = false;
    } else if (text != "optimal") {
      double v = 0;
      r.read("checkpoint_interval_min", v, Bound::Positive);
      require_at_most(r, "checkpoint_interval_min", v, 365 * 24 * 60, "min", "a checkpoint a year is none");
      s.checkpoint_interval_min = v;
    }
  } else if (r.has("checkpoint_interval_min")) {
    r.fail("checkpoint_interval_min", "expected minutes (a number), optimal or none");
  }
  r.read("storage_GBps", s.storage_GBps, Bound::Positive);
  r.read("read_GBps", s.read_GBps, Bound::Positive);
  for (auto [key, value] : {std::pair{"storage_GBps", s.storage_GBps}, std::pair{"read_GBps", s.read_GBps}})
    if (value)
      require_at_least(r, key, *value, 0.01, "GB/s", "10 MB/s is slower than one disk; a storage system is faster");
  r.read("async_checkpoint", s.async_checkpoint);
  r.read("straggler_fraction", s.straggler_fraction, Bound::NonNegative);
  if (s.straggler_fraction > 1)
    r.fail("straggler_fraction", fmt::format("expected a share of the GPUs, 0 to 1, got {:g}", s.straggler_fraction));
  r.read("straggler_slowdown", s.straggler_slowdown, Bound::Positive);
  if (s.straggler_slowdown < 1)
    r.fail("straggler_slowdown",
           fmt::format("expected a slowdown of at least 1 (1.2 = 20% slower), got {:g}", s.straggler_slowdown));
  require_at_most(r, "straggler_slowdown", s.straggler_slowdown, 100, "x", "a GPU 100x slower is down, not slow");
  return s;
}

PowerSpec read_power(const Section& p) {
  PowerSpec s;
  for (auto [key, target] :
       {std::pair{"gpu_idle_w", &s.gpu_idle_w}, std::pair{"gpu_communication_w", &s.gpu_communication_w},
        std::pair{"gpu_compute_w", &s.gpu_compute_w}, std::pair{"node_overhead_w_per_gpu", &s.node_overhead_w_per_gpu},
        std::pair{"network_w_per_gpu", &s.network_w_per_gpu}}) {
    p.read(key, *target, Bound::NonNegative);
    if (*target) require_at_most(p, key, **target, 1e5, "W", "100 kW per GPU is a rack, not a GPU");
  }
  p.read("pue", s.pue, Bound::Positive);
  if (s.pue && (*s.pue < 1 || *s.pue > 5))
    p.fail("pue",
           fmt::format("expected a power usage effectiveness from 1 (every watt reaches IT) to 5, got {:g}", *s.pue));
  // Each state draws at least what the one before it does: idle <= communication <= compute (those given).
  const auto order = [&](const char* low_key, const std::optional<double>& low, const char* high_key,
                         const std::optional<double>& high) {
    if (low && high && *low > *high)
      p.fail(low_key, fmt::format("{:g} W is more than {} ({:g} W): a GPU draws least idle, most computing", *low,
                                  high_key, *high));
  };
  order("gpu_idle_w", s.gpu_idle_w, "gpu_compute_w", s.gpu_compute_w);
  order("gpu_idle_w", s.gpu_idle_w, "gpu_communication_w", s.gpu_communication_w);
  order("gpu_communication_w", s.gpu_communication_w, "gpu_compute_w", s.gpu_compute_w);
  return s;
}

CostSpec read_cost(const Section& c) {
  CostSpec s;
  c.read("usd_per_gpu_hour", s.usd_per_gpu_hour, Bound::NonNegative);
  c.read("usd_per_mwh", s.usd_per_mwh, Bound::NonNegative);
  return s;
}

}  // namespace trainsim::scenario_detail
