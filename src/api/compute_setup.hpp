#pragma once
// The compute model a scenario asks for: the calibrated roofline, or a measured op database
// (compute.database, optionally measured on compute.scale_from) that falls back to the roofline op
// by op; and, after a run, how many ops each source priced (docs/op-database.md).
#include <memory>

#include "compute/compute_model.hpp"
#include "engine/engine.hpp"
#include "report/result.hpp"
#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace trainsim {

// Throws ScenarioError naming compute.database when the file cannot be read or is malformed, or has
// no rows for cluster.gpu (nor for compute.scale_from when given).
std::unique_ptr<ComputeModel> make_compute_model(const Scenario& s);

// Ops of every simulated rank by the source of their kernel's time, and the modelled kernels (the
// database's gaps), longest total time first.
ComputeSources compute_sources(const Scenario& s, const Workload& wl, const SimulationOutput& out);

}  // namespace trainsim
