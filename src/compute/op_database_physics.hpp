#pragma once
// A measured row cannot be faster than the GPU it was measured on: a tensor kernel above the dense peak of its
// dtype, or a memory-bound one moving its HBM bytes faster than HBM, is a unit slip (ms written as µs) or a
// mislabelled row, and would make every kernel priced from it impossibly fast.
#include <optional>
#include <string>

#include "compute/op_database.hpp"
#include "hardware/gpu_spec.hpp"

namespace trainsim {

// What is wrong with `r` on `gpu` ("... is 1015 TFLOP/s, above H100-SXM's dense bf16 peak of 989.4 ..."), or
// nullopt when the row is within the GPU's peaks (or the GPU gives no peak to compare with).
std::optional<std::string> beyond_peak(const OpRecord& r, const GpuSpec& gpu);

// Throws Error "PATH:LINE: <beyond_peak>" for the first row of `gpu_name` that `gpu` could not run.
void check_rows_within_peak(const OpDatabase& db, const std::string& gpu_name, const GpuSpec& gpu);

}  // namespace trainsim
