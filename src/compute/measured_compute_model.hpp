#pragma once
// A ComputeModel that answers from a measured op database (compute/op_database.hpp) and falls back
// to another model (the roofline) op by op. Three sources, in order (KernelTiming.source):
//   "measured"  the database has the op's group on the target GPU (exact, interpolated or extrapolated);
//   "scaled"    it has it on the scale_from GPU: SimAI-CP-Model scaling (SimAI, NSDI'25, §"SimAI-CP"):
//               classify the op on the source GPU's roofline (FLOPs/bytes vs its ridge point
//               peak(dtype)/hbm); compute-bound: time x peak_src/peak_dst for the dtype,
//               memory-bound: time x hbm_src/hbm_dst;
//   fallback    otherwise the fallback model's timing, and the op is recorded in fallbacks().
// Details and examples: docs/op-database.md.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "compute/compute_model.hpp"
#include "compute/op_database.hpp"

namespace trainsim {

// One op shape that was priced by the fallback model, with how many calls asked for it.
struct FallbackEntry {
  KernelKind kind = KernelKind::Gemm;
  Precision dtype = Precision::BF16;
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  bool causal = false;
  double bytes = 0;  // the shape of memory-bound kinds; 0 for GEMM / attention
  std::size_t count = 0;
};

// "gemm bf16 m=8192 n=12288 k=4096 batch=1" / "layernorm bf16 bytes=67108864", for reports.
std::string describe(const FallbackEntry& e);

// SimAI-CP-Model classification on `gpu`'s roofline: arithmetic intensity flops/bytes against the
// ridge point peak_tflops(dtype)*1e12 / (hbm_GBps*1e9). A kernel without FLOPs is memory-bound; one
// with FLOPs and no bytes is compute-bound. Throws Error if the GPU lacks the dtype and it matters.
bool simai_compute_bound(const GpuSpec& gpu, const KernelDesc& k);

// Time on `dst` of a kernel measured as `measured_s` on `src`, by SimAI-CP-Model scaling.
double simai_scale_time(double measured_s, const GpuSpec& src, const GpuSpec& dst, const KernelDesc& k);

class MeasuredComputeModel final : public ComputeModel {
 public:
  // `source` is the scale_from GPU (nullopt: no scaling). Throws Error when the fallback is null,
  // a GPU has no positive hbm_GBps, or the database has no rows for the scale_from GPU.
  MeasuredComputeModel(OpDatabase db, GpuSpec target, std::optional<GpuSpec> source,
                       std::unique_ptr<ComputeModel> fallback);

  KernelTiming time(const KernelDesc& k) const override;
  std::string describe() const override;
  // A measured kernel was timed alone; what collectives beside it take is the fallback model's
  // estimate of the same stretch (the roofline's: SMs and HBM bandwidth left).
  double interference_slowdown(const KernelDesc& k, const CommLoad& load) const override {
    return fallback_->interference_slowdown(k, load);
  }

  // Ops the fallback priced, sorted by kind name, then shape (m, n, k, batch, causal, bytes), then
  // dtype. Recorded under a lock, so the order never depends on which thread asked first.
  std::vector<FallbackEntry> fallbacks() const;

  // Calls answered by each source so far.
  struct SourceCounts {
    std::size_t measured = 0, scaled = 0, fallback = 0;
  };
  SourceCounts counts() const;

  const OpDatabase& database() const { return db_; }

 private:
  using FallbackKey =
      std::tuple<std::string, std::int64_t, std::int64_t, std::int64_t, std::int64_t, bool, double, std::string>;
  void record_fallback(const KernelDesc& k) const;

  OpDatabase db_;
  GpuSpec target_;
  std::optional<GpuSpec> source_;
  std::unique_ptr<ComputeModel> fallback_;

  mutable std::mutex mutex_;
  mutable std::map<FallbackKey, FallbackEntry> fallbacks_;
  mutable std::atomic<std::size_t> measured_{0}, scaled_{0}, fallback_calls_{0};
};

// The factory the scenario uses. `fallback` null: the roofline model of `target`.
std::unique_ptr<ComputeModel> make_measured_model(OpDatabase db, const GpuSpec& target,
                                                  std::optional<GpuSpec> scale_from = std::nullopt,
                                                  std::unique_ptr<ComputeModel> fallback = nullptr);

}  // namespace trainsim
