#pragma once
// Per-rank memory, in GiB, for each pipeline stage: weights, gradients, optimizer states,
// activations of the micro-batches in flight under the schedule, and a documented allowance.
// Activation formulas: Korthikanti et al. 2022 ("Reducing Activation Recomputation in Large
// Transformer Models"), per layer sbh(34 + 5as/h) without parallelism.
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim {

struct StageMemory {
  int stage = 0;
  int layers = 0;             // transformer layers on the stage (all its model chunks)
  int recomputed_layers = 0;  // of which fully recomputed (only their input is kept)
  double weights_gib = 0;
  double grads_gib = 0;
  double optimizer_gib = 0;
  double activations_gib = 0;
  double other_gib = 0;  // workspace, NCCL buffers, fragmentation allowance
  int in_flight_micro_batches = 0;
  double activations_per_micro_batch_gib = 0;  // the stage's layers for one micro-batch
  double total_gib() const { return weights_gib + grads_gib + optimizer_gib + activations_gib + other_gib; }
};

std::vector<StageMemory> estimate_memory(const Scenario& s);

}  // namespace trainsim
