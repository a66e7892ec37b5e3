#pragma once
// FLOPs of one training iteration, counted as Megatron-LM does
// (megatron/training/training.py::num_floating_point_operations; ../shared/reference/megatron.md §10).
// One source of truth: reports, MFU/HFU and tests all call these.
#include <cstdint>

#include "model/model_spec.hpp"

namespace trainsim {

enum class RecomputeGranularity { None, Selective, Full };

// Model FLOPs (MFU convention): forward + backward, no recomputation, causal attention halved,
// GQA through the KV projection, gated MLP with 3 matrices, LM head with the padded vocabulary.
// `tensor_parallel` only matters through vocabulary padding.
double model_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel);

// Hardware FLOPs (HFU convention): model FLOPs plus the recomputed forward work.
// Selective recompute adds the attention-core forward of every layer; full recompute adds the whole
// layer forward of `recomputed_layers` layers (embedding/LM head are never recomputed).
double hardware_flops_per_iteration(const ModelSpec& m, std::int64_t global_batch_size, int tensor_parallel,
                                    RecomputeGranularity recompute, int recomputed_layers);

}  // namespace trainsim
