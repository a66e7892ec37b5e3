#pragma once
// The number formats a kernel or a GPU's peak is given in: shared vocabulary of the hardware catalog, the
// workload's kernels and the compute model.
namespace trainsim {

enum class Precision { FP32, TF32, BF16, FP16, FP8, FP4 };

const char* to_string(Precision p);  // "bf16", ...

// A Transformer Engine recipe that quantizes the linear layers' GEMMs (FP8; NVFP4 on Blackwell): everything else
// (attention, norms, activations, the output layer) runs in BF16.
constexpr bool quantized_gemms(Precision p) { return p == Precision::FP8 || p == Precision::FP4; }

}  // namespace trainsim
