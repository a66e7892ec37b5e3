#pragma once
// The number formats a kernel or a GPU's peak is given in: shared vocabulary of the hardware catalog, the
// workload's kernels and the compute model.
namespace trainsim {

enum class Precision { FP32, TF32, BF16, FP16, FP8 };

const char* to_string(Precision p);  // "bf16", ...

}  // namespace trainsim
