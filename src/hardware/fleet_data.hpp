#pragma once
// Fleet data for planning a whole run (docs/run-planning.md): how often the parts of a cluster fail and how long a
// restart takes (data/resilience.yaml), and what GPUs, hosts, the network and the facility draw (data/power.yaml).
// Each value in those files carries its source; this code reads them and checks their shape.
#include <array>
#include <map>
#include <string>

#include "hardware/gpu_spec.hpp"

namespace trainsim {

// The parts whose failures interrupt a job, as training.resilience.failure_rates names them; "other" is a node's
// faults whose cause was never attributed (a quarter of a public fleet trace's, data/resilience.yaml).
inline constexpr std::array<const char*, 8> kFailureComponents = {"gpu",    "hbm",  "host",     "nic",
                                                                  "switch", "link", "software", "other"};

struct FleetResilience {
  std::map<std::string, double> failure_rates;  // per device per day, by component
  double detect_restart_min = 0;
  double repair_hours = 0;
  double bad_machine_recurrence = 0;
};
// data/resilience.yaml, read once. Throws Error naming the file and field when it is malformed.
const FleetResilience& fleet_resilience();
FleetResilience read_fleet_resilience(const std::string& file);

// What one GPU draws, by what it is doing.
struct GpuPower {
  double idle_w = 0, communication_w = 0, compute_w = 0;
  // Where the numbers come from: "data/power.yaml" for a GPU it lists, else how they were scaled.
  std::string basis;
};
struct FleetPower {
  std::map<std::string, GpuPower> gpus;  // by catalog name
  double node_overhead_w_per_gpu = 0;
  double network_w_per_gpu = 0;
  double pue = 1;
};
const FleetPower& fleet_power();
FleetPower read_fleet_power(const std::string& file);

// The GPU's power states: data/power.yaml's entry for it; for a GPU the file does not list, its rated power
// (power_w) times the listed GPUs' median share of theirs for each state. Throws Error when neither is known.
GpuPower gpu_power(const GpuSpec& gpu, const FleetPower& fleet = fleet_power());

}  // namespace trainsim
