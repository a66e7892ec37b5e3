#pragma once
// training.cuda_graphs: each transformer layer's forward and backward replayed as a CUDA graph, so the host
// launches one graph per layer, micro-batch and pass instead of every kernel in it (docs/compute-model.md §1.5).
#include "workload/workload.hpp"

namespace trainsim {

// Sets Op::launches for graph replay: the first captured op of each (layer, micro-batch, phase) run pays the
// graph's launch, the rest of the run none. Captured: a layer's kernels and the collectives on its
// tensor-, context- and expert-parallel communicators (NCCL calls are graph-capturable). A dropless MoE
// layer's token routing has data-dependent shapes, which a graph cannot hold (Megatron captures the attention
// and the router only): from its first expert-parallel call on, that pass launches eagerly.
// Ops outside layers (embedding, loss, gradient reductions, the optimizer) keep their launches.
void capture_layers_in_cuda_graphs(Workload& wl, bool dropless_moe);

}  // namespace trainsim
