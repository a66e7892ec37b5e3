#pragma once
// Scenario -> Workload: the per-rank op programs of one steady-state training iteration.
#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace trainsim {

struct WorkloadOptions {
  // Simulate every rank. By default only one rank per pipeline stage is simulated: on a symmetric
  // fabric the TP, CP and DP peers of a rank run provably identical timelines, so one timeline
  // stands for all of them and collectives over those peers start when that one rank reaches them.
  bool per_rank = false;
};

// Megatron's rank layout for the scenario: the dense view and, for MoE models, the expert view
// (expert, expert_tensor); the flow-level network builds group copies from it (group_replicas.hpp).
ParallelPlan parallel_plan_of(const Scenario& s);

// The simulated ranks for these options (global rank ids, ascending).
std::vector<int> simulated_ranks(const Scenario& s, const WorkloadOptions& o);

Workload generate_workload(const Scenario& s, const WorkloadOptions& o = {});

}  // namespace trainsim
