#pragma once
// How much work a run is, estimated before anything is built: a value typed in the wrong unit (tokens
// where training.global_batch_size counts sequences) is refused in milliseconds, naming the key to
// change, instead of filling memory for minutes; and a run that will take minutes says so first.
#include <string>

#include "network/flow_backend.hpp"
#include "scenario/scenario.hpp"
#include "workload/workload.hpp"

namespace trainsim {

struct WorkEstimate {
  // The factors. Without per-rank simulation each layer runs once per micro-batch on one simulated rank
  // (one per pipeline stage), so the ops hardly depend on the pipeline size.
  double micro_batches = 0;        // per iteration: global_batch_size / (micro_batch_size x data)
  double layers = 0;               // decoder layers plus MTP layers
  double ranks_per_stage = 1;      // simulated ranks per stage: 1, or tensor x context x data per rank
  double ops_per_micro_batch = 0;  // one micro-batch through every stage, forward and backward
  double ops = 0;                  // every simulated rank's ops: what the workload holds
  double bytes = 0;                // memory of the workload and the engine's state, roughly
};

// From the scenario alone, in well under a millisecond for any input: the ops of one micro-batch of
// each kind of layer (dense, MoE, MTP, the embedding and the output head) are counted by emitting
// them with the generator's own LayerEmitter, and the rest (pipeline transfers, sharded-DP gathers,
// the optimizer) is added by formula. Within -8% to +15% of Workload::op_count() on all 265
// published training cases and within 1% on the examples.
WorkEstimate estimate_work(const Scenario& s, bool per_rank);

// Throws ScenarioError when e.ops exceeds simulation.max_ops (0: no limit), naming the key that makes
// the work largest (training.global_batch_size through the micro-batch count, model.num_layers, or
// simulation.per_rank), the limit, and simulation.max_ops as the way to go past it.
void check_work_limit(const Scenario& s, const WorkEstimate& e);

// Transfers the flow-level backend will put on the fabric for this workload (what the report's
// simulation.flows counts, within the routing's merging): each collective call counted once, its
// flow DAG built (and cached, as the run would) but not started.
double planned_flows(const Workload& wl, FlowBackend& backend);
// The packets of `mtu_bytes` payload a packet-level run of the workload moves over the fabric.
double planned_packets(const Workload& wl, FlowBackend& backend, int mtu_bytes);

// Wall-clock seconds a run of this many ops and flows takes on one core, roughly (measured on the
// examples and the DeepSeek-V3 cases; within a factor of about 2).
double estimated_seconds(double ops, double flows);

}  // namespace trainsim
