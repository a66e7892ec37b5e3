#include "compute/measured_compute_model.hpp"

#include <utility>

#include <fmt/format.h>

#include "core/check.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

std::string gpu_name(const GpuSpec& g) { return g.name.empty() ? std::string("(unnamed GPU)") : g.name; }

void check_bandwidth(const GpuSpec& g, const char* role) {
  if (!(g.hbm_GBps > 0)) {
    throw Error(fmt::format("{} GPU {}: the measured compute model needs a positive hbm_GBps (got {})", role,
                            gpu_name(g), g.hbm_GBps));
  }
}

// A timing from a time in seconds; achieved_tflops from the rounded time, as the roofline does.
KernelTiming timing(double seconds, const KernelDesc& k, bool compute_bound, const char* source) {
  KernelTiming t;
  t.time = from_seconds(seconds);
  t.achieved_tflops = t.time > 0 ? k.flops / to_seconds(t.time) / 1e12 : 0.0;
  t.compute_bound = compute_bound;
  t.source = source;
  return t;
}

}  // namespace

std::string describe(const FallbackEntry& e) {
  if (is_tensor_kind(e.kind)) {
    return fmt::format("{} {} m={} n={} k={} batch={}{}", to_string(e.kind), to_string(e.dtype), e.m, e.n, e.k, e.batch,
                       e.causal ? " causal" : "");
  }
  return fmt::format("{} {} bytes={}", to_string(e.kind), to_string(e.dtype), e.bytes);
}

bool simai_compute_bound(const GpuSpec& gpu, const KernelDesc& k) {
  if (!(k.flops > 0)) return false;  // pure data movement (layernorm rows of the database, memset...)
  if (!(k.bytes > 0)) return true;   // all arithmetic, nothing to move
  const double ridge = gpu.peak_tflops(k.dtype) * 1e12 / (gpu.hbm_GBps * 1e9);  // FLOP per byte
  return k.flops / k.bytes >= ridge;
}

double simai_scale_time(double measured_s, const GpuSpec& src, const GpuSpec& dst, const KernelDesc& k) {
  // SimAI (NSDI'25), SimAI-CP-Model: a compute-bound kernel runs at a fixed fraction of peak FLOPS,
  // a memory-bound one at a fixed fraction of HBM bandwidth, on both GPUs; so the measured time
  // scales by the inverse ratio of the resource that binds, classified on the measured GPU.
  if (simai_compute_bound(src, k)) return measured_s * src.peak_tflops(k.dtype) / dst.peak_tflops(k.dtype);
  return measured_s * src.hbm_GBps / dst.hbm_GBps;
}

MeasuredComputeModel::MeasuredComputeModel(OpDatabase db, GpuSpec target, std::optional<GpuSpec> source,
                                           std::unique_ptr<ComputeModel> fallback)
    : db_(std::move(db)), target_(std::move(target)), source_(std::move(source)), fallback_(std::move(fallback)) {
  TRAINSIM_CHECK(fallback_ != nullptr, "measured compute model: no fallback model given");
  check_bandwidth(target_, "target");
  if (source_) {
    check_bandwidth(*source_, "compute.scale_from");
    if (!db_.has_gpu(source_->name)) {
      throw Error(fmt::format("compute.scale_from {}: the op database {} has no rows for that GPU (its GPUs: {})",
                              gpu_name(*source_), db_.path(), join(db_.gpus())));
    }
  }
}

KernelTiming MeasuredComputeModel::time(const KernelDesc& k) const {
  if (k.kind == KernelKind::FixedDuration) return fixed_duration_timing(k);  // given, not looked up
  if (const auto hit = db_.time_s(target_.name, k)) {
    measured_.fetch_add(1, std::memory_order_relaxed);
    // Which side binds, for reports: the target's own roofline (tensor kinds when it lacks the dtype).
    const bool bound = target_.supports(k.dtype) ? simai_compute_bound(target_, k) : is_tensor_kind(k.kind);
    return timing(*hit, k, bound, "measured");
  }
  if (source_) {
    if (const auto hit = db_.time_s(source_->name, k)) {
      scaled_.fetch_add(1, std::memory_order_relaxed);
      return timing(simai_scale_time(*hit, *source_, target_, k), k, simai_compute_bound(*source_, k), "scaled");
    }
  }
  fallback_calls_.fetch_add(1, std::memory_order_relaxed);
  // An empty kernel costs nothing in any model; it is not a gap in the database worth reporting.
  if (k.flops > 0 || k.bytes > 0) record_fallback(k);
  return fallback_->time(k);
}

void MeasuredComputeModel::record_fallback(const KernelDesc& k) const {
  FallbackEntry e;
  e.kind = k.kind;
  e.dtype = k.dtype;
  if (is_tensor_kind(k.kind)) {
    e.m = k.m;
    e.n = k.n;
    e.k = k.k;
    e.batch = k.batch;
    e.causal = (k.kind == KernelKind::FlashAttnFwd || k.kind == KernelKind::FlashAttnBwd) && k.causal;
  } else {
    e.bytes = k.bytes;
  }
  const FallbackKey key{to_string(e.kind), e.m, e.n, e.k, e.batch, e.causal, e.bytes, to_string(e.dtype)};
  const std::lock_guard<std::mutex> lock(mutex_);
  ++fallbacks_.try_emplace(key, e).first->second.count;
}

std::vector<FallbackEntry> MeasuredComputeModel::fallbacks() const {
  const std::lock_guard<std::mutex> lock(mutex_);
  std::vector<FallbackEntry> out;
  out.reserve(fallbacks_.size());
  for (const auto& [key, entry] : fallbacks_) out.push_back(entry);  // std::map: already in report order
  return out;
}

MeasuredComputeModel::SourceCounts MeasuredComputeModel::counts() const {
  return SourceCounts{measured_.load(), scaled_.load(), fallback_calls_.load()};
}

std::string MeasuredComputeModel::describe() const {
  const std::string scaling =
      source_ ? fmt::format("; ops measured only on {} scaled SimAI-CP style (FLOPS or HBM ratio)", gpu_name(*source_))
              : std::string();
  return fmt::format("measured op database {} ({} rows; GPUs: {}) for {}{}; otherwise {}", db_.path(),
                     db_.records().size(), join(db_.gpus()), gpu_name(target_), scaling, fallback_->describe());
}

std::unique_ptr<ComputeModel> make_measured_model(OpDatabase db, const GpuSpec& target,
                                                  std::optional<GpuSpec> scale_from,
                                                  std::unique_ptr<ComputeModel> fallback) {
  if (!fallback) fallback = make_roofline_model(target);
  return std::make_unique<MeasuredComputeModel>(std::move(db), target, std::move(scale_from), std::move(fallback));
}

}  // namespace trainsim
