#include "api/iteration_energy.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.hpp"
#include "hardware/fleet_data.hpp"

namespace trainsim {

std::optional<IterationEnergy> iteration_energy(const Scenario& s, const RunResult& r, std::string& why_not) {
  const PowerSpec& ps = s.power;
  const FleetPower& fleet = fleet_power();
  IterationEnergy e;
  const bool all_given = ps.gpu_idle_w && ps.gpu_communication_w && ps.gpu_compute_w;
  GpuPower gpu;
  if (!all_given) {
    try {
      gpu = gpu_power(s.cluster.gpu, fleet);
    } catch (const Error& err) {
      why_not = err.what();
      return std::nullopt;
    }
  }
  // Under a power limit the GPU draws at most the limit: the defaults are capped there (a value the power block
  // gives is the user's measurement and stands).
  if (const double limit = s.cluster.gpu.power_limit_w; limit > 0) {
    gpu.idle_w = std::min(gpu.idle_w, limit);
    gpu.communication_w = std::min(gpu.communication_w, limit);
    gpu.compute_w = std::min(gpu.compute_w, limit);
    if (!all_given) gpu.basis += fmt::format(", at most the {:g} W power limit", limit);
  }
  e.gpu_idle_w = ps.gpu_idle_w.value_or(gpu.idle_w);
  e.gpu_communication_w = ps.gpu_communication_w.value_or(gpu.communication_w);
  e.gpu_compute_w = ps.gpu_compute_w.value_or(gpu.compute_w);
  e.basis = all_given ? "the power block" : gpu.basis;
  e.node_overhead_w_per_gpu = ps.node_overhead_w_per_gpu.value_or(fleet.node_overhead_w_per_gpu);
  e.network_w_per_gpu = ps.network_w_per_gpu.value_or(fleet.network_w_per_gpu);
  e.pue = ps.pue.value_or(fleet.pue);
  // The critical rank's iteration: kernels computing (the optimizer's too) at compute power, exposed communication
  // at communication power, the rest (bubbles, host waits) idle. Communication hidden behind compute is in compute.
  const Breakdown& b = r.breakdown;
  const double t = r.iteration_time_s, busy = b.compute + b.optimizer, comm = b.exposed_comm;
  const double idle = std::max(0.0, t - busy - comm);
  e.gpu_average_w =
      t > 0 ? (busy * e.gpu_compute_w + comm * e.gpu_communication_w + idle * e.gpu_idle_w) / t : e.gpu_idle_w;
  e.joules = e.pue * r.num_gpus * (e.gpu_average_w + e.node_overhead_w_per_gpu + e.network_w_per_gpu) * t;
  const double tokens = static_cast<double>(r.global_batch_size) * static_cast<double>(r.seq_length);
  e.tokens_per_joule = e.joules > 0 && r.throughput_known ? tokens / e.joules : 0;
  return e;
}

}  // namespace trainsim
