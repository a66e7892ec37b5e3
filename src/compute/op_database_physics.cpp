#include "compute/op_database_physics.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.hpp"

namespace trainsim {

namespace {

// The fastest dense rate `gpu` has for `dtype`, TFLOP/s; nullopt if it has none. An fp32 GEMM may run on TF32
// tensor cores (PyTorch's allow_tf32, cuBLAS's default math mode), so fp32 rows are held to the larger peak.
std::optional<double> peak_for(const GpuSpec& gpu, Precision dtype) {
  std::optional<double> peak = gpu.supports(dtype) ? std::optional<double>(gpu.peak_tflops(dtype)) : std::nullopt;
  if (dtype == Precision::FP32 && gpu.supports(Precision::TF32))
    peak = std::max(peak.value_or(0.0), gpu.peak_tflops(Precision::TF32));
  return peak;
}

std::string shape_of(const OpRecord& r) {
  if (is_tensor_kind(r.kind)) return fmt::format("{}x{}x{} (batch {})", r.m, r.n, r.k, r.batch);
  return fmt::format("of {:g} bytes", r.bytes);
}

}  // namespace

std::optional<std::string> beyond_peak(const OpRecord& r, const GpuSpec& gpu) {
  const double seconds = r.time_us * 1e-6;
  const double work = op_work(r.kind, r.m, r.n, r.k, r.batch, r.causal, r.bytes);
  if (!(seconds > 0) || !(work > 0)) return std::nullopt;
  const char* hint = "; faster than the GPU can run: is time_us in microseconds (not milliseconds or seconds)?";
  if (is_tensor_kind(r.kind)) {
    const std::optional<double> peak = peak_for(gpu, r.dtype);
    const double tflops = work / seconds / 1e12;
    if (!peak || tflops <= *peak) return std::nullopt;
    return fmt::format("{} {} {} in {:g} us is {:.1f} TFLOP/s, above {}'s dense {} peak of {:g} TFLOP/s{}",
                       to_string(r.kind), to_string(r.dtype), shape_of(r), r.time_us, tflops, gpu.name,
                       to_string(r.dtype), *peak, hint);
  }
  // Memory-bound rows: `bytes` is the kernel's HBM traffic (docs/op-database.md). A row faster than HBM was
  // either mistyped or measured with its data in L2, which a training step's activations are not.
  if (!(gpu.hbm_GBps > 0)) return std::nullopt;
  const double GBps = work / seconds / 1e9;
  if (GBps <= gpu.hbm_GBps) return std::nullopt;
  return fmt::format(
      "{} {} {} in {:g} us moves {:.0f} GB/s, above {}'s HBM bandwidth of {:g} GB/s{} (or was it "
      "measured from L2?)",
      to_string(r.kind), to_string(r.dtype), shape_of(r), r.time_us, GBps, gpu.name, gpu.hbm_GBps, hint);
}

void check_rows_within_peak(const OpDatabase& db, const std::string& gpu_name, const GpuSpec& gpu) {
  for (const OpRecord& r : db.records()) {
    if (r.gpu != gpu_name) continue;
    if (const auto what = beyond_peak(r, gpu)) throw Error(fmt::format("{}:{}: {}", db.path(), r.line, *what));
  }
}

}  // namespace trainsim
