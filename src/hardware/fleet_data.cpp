#include "hardware/fleet_data.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "core/data_dir.hpp"
#include "core/error.hpp"
#include "hardware/gpu_catalog.hpp"

namespace trainsim {

namespace {

// A field written as {value: x, source: ..., tag: ...}: its value, which must be a non-negative number.
double value_of(const YAML::Node& field, const std::string& file, const std::string& path) {
  const YAML::Node v = field && field.IsMap() ? field["value"] : YAML::Node();
  if (!v || !v.IsScalar()) throw Error(fmt::format("{}: {}: expected {{value: NUMBER, source: ...}}", file, path));
  double x = 0;
  try {
    x = v.as<double>();
  } catch (const YAML::Exception&) {
    throw Error(fmt::format("{}: {}.value: expected a number, got '{}'", file, path, v.Scalar()));
  }
  if (!(x >= 0)) throw Error(fmt::format("{}: {}.value: expected a number >= 0, got {}", file, path, v.Scalar()));
  return x;
}

YAML::Node load(const std::string& file) {
  try {
    return YAML::LoadFile(file);
  } catch (const YAML::Exception& e) { throw Error(fmt::format("{}: cannot read fleet data: {}", file, e.msg)); }
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

}  // namespace

FleetResilience read_fleet_resilience(const std::string& file) {
  const YAML::Node root = load(file);
  FleetResilience f;
  const YAML::Node rates = root["failure_rates_per_device_day"];
  for (const char* c : kFailureComponents)
    f.failure_rates[c] = value_of(rates[c], file, std::string("failure_rates_per_device_day.") + c);
  const YAML::Node restart = root["restart"];
  f.detect_restart_min = value_of(restart["detect_and_restart_min"], file, "restart.detect_and_restart_min");
  f.repair_hours = value_of(restart["repair_hours"], file, "restart.repair_hours");
  f.bad_machine_recurrence = value_of(restart["bad_machine_recurrence"], file, "restart.bad_machine_recurrence");
  if (f.bad_machine_recurrence >= 1)
    throw Error(fmt::format("{}: restart.bad_machine_recurrence: a probability below 1 expected", file));
  return f;
}

const FleetResilience& fleet_resilience() {
  static const FleetResilience f = read_fleet_resilience(data_dir() + "/resilience.yaml");
  return f;
}

FleetPower read_fleet_power(const std::string& file) {
  const YAML::Node root = load(file);
  FleetPower f;
  const YAML::Node gpus = root["gpus"];
  if (!gpus || !gpus.IsMap() || gpus.size() == 0)
    throw Error(fmt::format("{}: gpus: expected a mapping of GPUs", file));
  for (const auto& kv : gpus) {
    const std::string name = kv.first.Scalar();
    const std::string at = "gpus." + name;
    GpuPower p;
    p.idle_w = value_of(kv.second["idle_w"], file, at + ".idle_w");
    p.communication_w = value_of(kv.second["communication_w"], file, at + ".communication_w");
    p.compute_w = value_of(kv.second["compute_w"], file, at + ".compute_w");
    if (p.idle_w > p.communication_w || p.communication_w > p.compute_w)
      throw Error(fmt::format("{}: {}: expected idle_w <= communication_w <= compute_w", file, at));
    p.basis = "data/power.yaml";
    f.gpus.emplace(name, p);
  }
  f.node_overhead_w_per_gpu = value_of(root["node_overhead_w_per_gpu"], file, "node_overhead_w_per_gpu");
  f.network_w_per_gpu = value_of(root["network_w_per_gpu"], file, "network_w_per_gpu");
  f.pue = value_of(root["pue"], file, "pue");
  if (f.pue < 1) throw Error(fmt::format("{}: pue: expected at least 1", file));
  return f;
}

const FleetPower& fleet_power() {
  static const FleetPower f = read_fleet_power(data_dir() + "/power.yaml");
  return f;
}

GpuPower gpu_power(const GpuSpec& gpu, const FleetPower& fleet) {
  if (const auto it = fleet.gpus.find(gpu.name); it != fleet.gpus.end()) return it->second;
  if (!(gpu.power_w > 0))
    throw Error(
        fmt::format("the power of GPU {} is not known (no power_w in the catalog, not in data/power.yaml): "
                    "give power.gpu_idle_w, power.gpu_communication_w and power.gpu_compute_w",
                    gpu.name));
  // Each state as a share of rated power, the median over the GPUs the file lists that the catalog rates.
  std::vector<double> idle, comm, compute;
  for (const auto& [name, p] : fleet.gpus) {
    const GpuSpec* rated = GpuCatalog::builtin().find(name);
    if (!rated || !(rated->power_w > 0)) continue;
    idle.push_back(p.idle_w / rated->power_w);
    comm.push_back(p.communication_w / rated->power_w);
    compute.push_back(p.compute_w / rated->power_w);
  }
  if (compute.empty())
    throw Error(
        fmt::format("the power of GPU {} cannot be scaled: no GPU of data/power.yaml has a rated power in "
                    "the catalog; give power.gpu_idle_w, power.gpu_communication_w and power.gpu_compute_w",
                    gpu.name));
  GpuPower out;
  out.idle_w = gpu.power_w * median(idle);
  out.communication_w = gpu.power_w * median(comm);
  out.compute_w = gpu.power_w * median(compute);
  out.basis = fmt::format("scaled from rated power {:g} W by the median shares of data/power.yaml's GPUs", gpu.power_w);
  return out;
}

}  // namespace trainsim
