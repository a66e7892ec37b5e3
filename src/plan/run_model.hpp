#pragma once
// The whole training run from one iteration (docs/run-planning.md): training time, checkpoint stalls, failures with
// the work they throw away and the restarts they cost, waits for spare nodes, stragglers. Pure arithmetic on
// resolved numbers (RunModelInputs), so that each formula can be checked by hand; plan_inputs.hpp fills them from a
// scenario and a simulated iteration.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trainsim::plan {

struct RunModelInputs {
  double useful_s = 0;     // training time of the run's iterations, fault-free and without stragglers
  double straggler_s = 0;  // what stragglers add to it (expected)
  // Failures per second of running job, by cause; hardware causes need a node swapped (or repaired).
  std::map<std::string, double> failure_rate_per_s;
  std::map<std::string, bool> needs_node;  // by cause: true = hardware (spare or repair), false = restart only
  double recurrence = 0;                   // a hardware failure brings another with this chance (bad machines)
  double restart_s = 0;                    // detection and relaunch, per failure
  double load_s = 0;                       // reading the last checkpoint, per failure
  std::optional<int> spare_nodes;          // nullopt = always one at hand
  double repair_s = 0;                     // a failed node back in service
  bool checkpoints = true;
  double checkpoint_stall_s = 0;  // what the step waits per checkpoint (the write, or the copy to host memory)
  double checkpoint_write_s = 0;  // until the checkpoint is durable (>= the stall; async writes go on behind)
};

// The expected run, first order in the failure rate (failures uniform over a checkpoint interval).
struct RunExpectation {
  double interval_s = 0;          // training time between checkpoints used
  double wall_s = 0;              // expected wall-clock time to finish
  double running_s = 0;           // of which the job runs (training, stalls, redone work)
  double failures = 0;            // expected interruptions
  double checkpoint_stall_s = 0;  // total
  double lost_work_s = 0;         // total redone work
  double restart_s = 0;           // total detection, relaunch and checkpoint loads
  double spare_wait_s = 0;        // total waiting for a repaired node
  double straggler_s = 0;
  double goodput = 0;  // useful_s / wall_s
};

// Failures per second, with bad-machine recurrence: hardware causes scaled by 1 / (1 - recurrence).
double total_failure_rate(const RunModelInputs& in);
// Expected wait for a node per hardware failure: all spares in repair (nodes in repair ~ Poisson(rate x repair)),
// then the earliest of spares + 1 repairs in progress, ~ repair / (spares + 1). No spares: the repair itself.
double expected_spare_wait_s(const RunModelInputs& in);
// Young's first-order optimum sqrt(2 x stall x MTBF), and Daly's refinement (minus the stall) where it applies.
double young_interval_s(const RunModelInputs& in);
double daly_interval_s(const RunModelInputs& in);

// The run at checkpoint interval `interval_s` (ignored without checkpoints). Throws Error when failures come faster
// than the job recovers from them (the run would never finish).
RunExpectation expect_run(const RunModelInputs& in, double interval_s);
// The interval that minimises expect_run's wall time (golden-section search around Young's).
double optimal_interval_s(const RunModelInputs& in);

// Monte Carlo: `trials` runs with failures drawn as a Poisson process on the job's running time, spares and repairs
// tracked node by node, each failure rolling back to the last durable checkpoint. Deterministic for a seed.
struct RunTrials {
  std::vector<double> wall_s;  // one per trial, sorted
  double mean_wall_s = 0, mean_failures = 0, mean_lost_work_s = 0, mean_spare_wait_s = 0;
  double percentile(double p) const;  // p in [0, 1], linear between order statistics
};
RunTrials simulate_runs(const RunModelInputs& in, double interval_s, int trials, std::uint64_t seed);

}  // namespace trainsim::plan
