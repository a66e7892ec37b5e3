#pragma once
// How many layers full activation recomputation re-runs: one rule shared by the workload generator,
// the memory model and the HFU accounting.
#include "scenario/scenario.hpp"

namespace trainsim {

// Layers of pipeline stage `stage` (holding `layers_on_stage`) recomputed in backward: all of them by
// default, or training.recompute_num_layers (one value for every stage, or one per stage), at most
// the stage's layers; 0 unless recompute is full.
int recomputed_layers_on_stage(const Scenario& s, int stage, int layers_on_stage);

// The sum over all pipeline stages.
int recomputed_layers_total(const Scenario& s);

}  // namespace trainsim
