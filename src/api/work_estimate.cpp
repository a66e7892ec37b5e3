#include "api/work_estimate.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "core/error.hpp"
#include "workload/frameworks/training_framework.hpp"
#include "workload/layer_dims.hpp"
#include "workload/layer_ops.hpp"
#include "workload/program_builder.hpp"
#include "workload/recompute.hpp"

namespace trainsim {

namespace {

// Bytes per op of the workload (the op, its dependencies, deduplicated tables) and of the engine's
// state (start and end times, readiness counters, reverse edges): 65 to 160 measured (peak RSS / ops of
// the largest published case and of small jobs with many micro-batches); the upper end, to be safe.
constexpr double kBytesPerOp = 160;
// Per simulated rank and iteration, outside the micro-batches: zeroing the gradient buffers, bucket
// reductions, the optimizer and its all-reduces (Workload dumps of the examples: 10 to 40).
constexpr double kOpsPerStageOnce = 24;

// One micro-batch of one layer of each kind on a scratch rank: the generator's LayerEmitter writes
// the ops, so the count follows any change to what a layer issues. One communicator stands for all
// of a rank's (the ops a layer issues do not depend on which one it is).
class LayerCounter {
 public:
  LayerCounter(const Scenario& s, const LayerDims& d) : wb_(2, {0}), rb_(wb_.rank_builder(0)) {
    const std::uint32_t g = wb_.group(GroupKind::TP, {0, 1});
    emitter_.emplace(rb_, d, LayerGroups{g, g, g, g, g}, s.parallelism.tp_comm_overlap);
    if (s.training.recompute == RecomputeGranularity::Selective)
      emitter_->set_selective_recompute(s.training.recompute_modules);
    // DeepSpeed ZeRO gathers and reduces per module at these hooks (deepspeed_zero.cpp).
    emitter_->set_module_hook(
        [this](int, const char*, bool backward) { (backward ? hooks_backward : hooks_forward) += 1; });
  }

  template <class Emit>
  double count(Emit&& emit) {
    const std::size_t before = rb_.op_count();
    emit(*emitter_);
    return static_cast<double>(rb_.op_count() - before);
  }

  double hooks_forward = 0, hooks_backward = 0;

 private:
  WorkloadBuilder wb_;
  RankBuilder rb_;
  std::optional<LayerEmitter> emitter_;
};

struct LayerKind {
  double forward = 0, backward = 0, hooks_forward = 0, hooks_backward = 0;
};

LayerKind count_layer(LayerCounter& c, int layer, bool mtp, bool recompute_attention) {
  LayerKind k;
  const double hf = c.hooks_forward, hb = c.hooks_backward;
  k.forward = c.count([&](LayerEmitter& e) { mtp ? e.mtp_forward(layer, 0) : e.forward(layer, 0, Phase::Forward); });
  k.backward = c.count([&](LayerEmitter& e) {
    mtp ? e.mtp_backward(layer, 0, recompute_attention) : e.backward(layer, 0, recompute_attention);
  });
  k.hooks_forward = c.hooks_forward - hf;
  k.hooks_backward = c.hooks_backward - hb;
  return k;
}

// "3.4 million", "1.2 billion": counts in a message.
std::string amount(double n) {
  if (n >= 1e9) return fmt::format("{:.1f} billion", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f} million", n / 1e6);
  return fmt::format("{:.0f}", n);
}

std::string memory_text(double bytes) {
  if (bytes >= 1e12) return fmt::format("{:.1f} TB", bytes / 1e12);
  if (bytes >= 1e9) return fmt::format("{:.1f} GB", bytes / 1e9);
  return fmt::format("{:.0f} MB", bytes / 1e6);
}

}  // namespace

WorkEstimate estimate_work(const Scenario& s, bool per_rank) {
  WorkEstimate e;
  if (!s.has_training_job) return e;
  const ParallelSpec& p = s.parallelism;
  const ModelSpec& m = s.model;
  // In doubles: a runaway value must be estimated, not overflow on the way.
  e.micro_batches = std::floor(static_cast<double>(s.training.global_batch_size) /
                               (static_cast<double>(s.training.micro_batch_size) * std::max(1, p.data)));
  const int decoder = std::max(0, m.num_layers), mtp = std::max(0, m.mtp_layers);
  e.layers = decoder + mtp;
  e.ranks_per_stage = per_rank ? static_cast<double>(p.tensor) * p.context * p.data : 1.0;

  const LayerDims d = LayerDims::of(s);
  LayerCounter counter(s, d);
  const bool selective =
      s.training.recompute == RecomputeGranularity::Selective && s.training.recompute_modules.core_attn;
  std::optional<LayerKind> dense, moe;
  int dense_layers = 0;
  for (int l = 0; l < decoder; ++l) {
    std::optional<LayerKind>& kind = d.is_moe(l) ? moe : dense;
    if (!kind) kind = count_layer(counter, l, false, selective);
    dense_layers += d.is_moe(l) ? 0 : 1;
  }
  const int moe_layers = decoder - dense_layers;
  LayerKind total;
  auto add = [&total](const LayerKind& k, double times) {
    total.forward += k.forward * times;
    total.backward += k.backward * times;
    total.hooks_forward += k.hooks_forward * times;
    total.hooks_backward += k.hooks_backward * times;
  };
  if (dense) add(*dense, dense_layers);
  if (moe) add(*moe, moe_layers);
  if (mtp > 0) add(count_layer(counter, decoder, true, selective), mtp);
  double per_mb = total.forward + total.backward;
  // Full recompute re-runs the forward of the recomputed layers before their backward.
  if (s.training.recompute == RecomputeGranularity::Full && decoder > 0)
    per_mb += total.forward / (decoder + mtp) * recomputed_layers_total(s);
  per_mb += counter.count([](LayerEmitter& x) {
    x.embedding_forward(0);
    x.embedding_backward(0);
    x.lm_head_forward(0);
    x.lm_head_backward(0);
  });
  const int stages = std::max(1, p.pipeline);
  const int chunks = std::max(1, p.virtual_pipeline);
  per_mb += 4.0 * (stages * chunks - 1);           // a send and a receive each way at every chunk boundary
  if (p.tensor > 1) per_mb += stages > 1 ? 2 : 1;  // the batch broadcast over TP on the first and last stage
  // Per layer its parameter gathers, a gradient reduce-scatter and what feeds it (FSDP1: the cast and the pre-divide;
  // FSDP2: the chunk-cat, and a copy-out per gather).
  if (const int gathers = fsdp_layer_gathers(p); gathers > 0)
    per_mb += (p.fsdp_version == 2 ? 2.0 * gathers + 2.0 : gathers + 3.0) * e.layers + stages;
  if (p.framework == Framework::DeepSpeed && p.zero_stage >= 1)
    per_mb += (p.zero_stage == 3 ? total.hooks_forward : 0) + 2.0 * total.hooks_backward;  // gathers, grad copies
  e.ops_per_micro_batch = per_mb;
  // Once per iteration: each stage's optimizer and gradient buckets, and one reduction per layer at most.
  const double once = kOpsPerStageOnce * stages + 2.0 * e.layers;
  e.ops = e.ranks_per_stage * (e.micro_batches * per_mb + once);
  e.bytes = e.ops * kBytesPerOp;
  return e;
}

void check_work_limit(const Scenario& s, const WorkEstimate& e) {
  const std::int64_t limit = s.simulation.max_ops;
  if (limit <= 0 || e.ops <= static_cast<double>(limit)) return;
  const std::string size = fmt::format("about {} ops to simulate (~{} of memory), more than simulation.max_ops {}",
                                       amount(e.ops), memory_text(e.bytes), limit);
  const std::string raise = "raise simulation.max_ops (0: no limit) to simulate it anyway";
  const ParallelSpec& p = s.parallelism;
  // The key whose factor is the largest: the one that is most likely out of its usual range.
  if (e.ranks_per_stage > e.micro_batches && e.ranks_per_stage > e.layers)
    throw ScenarioError(s.file, "simulation.per_rank",
                        fmt::format("simulating every rank ({} per pipeline stage) is {}; leave per_rank (and "
                                    "--per-rank) off, one rank per stage is exact on a symmetric fabric, or {}",
                                    e.ranks_per_stage, size, raise));
  if (e.layers > e.micro_batches)
    throw ScenarioError(s.file, "model.num_layers",
                        fmt::format("{} layers, each run by {} micro-batches, are {}; lower model.num_layers or {}",
                                    e.layers, e.micro_batches, size, raise));
  const std::int64_t gbs = s.training.global_batch_size;
  std::string tokens;
  if (s.model.seq_length > 0 && gbs >= s.model.seq_length)
    tokens = fmt::format(" ({} tokens at model.seq_length {} would be {} sequences)", gbs, s.model.seq_length,
                         gbs / s.model.seq_length);
  throw ScenarioError(
      s.file, "training.global_batch_size",
      fmt::format("{} sequences per iteration make {} micro-batches (training.global_batch_size / "
                  "(training.micro_batch_size {} x parallelism.data {})), each through {} layers: {}. "
                  "global_batch_size counts sequences, not tokens{}; lower it, or {}",
                  gbs, amount(e.micro_batches), s.training.micro_batch_size, p.data, e.layers, size, tokens, raise));
}

namespace {

// The sum over the iteration's calls of `per_call` (evaluated once per distinct call): every member of a call
// issues it, and the first simulated rank with an op on the group counts it.
template <class PerCall>
double sum_over_calls(const Workload& wl, PerCall per_call) {
  std::vector<std::size_t> counter_rank(wl.groups.size(), wl.ranks.size());
  std::vector<double> per_desc(wl.collectives.size(), -1.0);
  double sum = 0;
  for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
    for (const Op& op : wl.ranks[r].ops) {
      if (op.type != Op::Type::Collective) continue;
      const CollectiveDesc& cd = wl.collectives[op.desc];
      std::size_t& owner = counter_rank[cd.group];
      if (owner == wl.ranks.size()) owner = r;
      if (owner != r) continue;
      double& v = per_desc[op.desc];
      if (v < 0) v = per_call(CollectiveCall{cd.kind, cd.bytes, cd.group, cd.sender, cd.exchange});
      sum += v;
    }
  }
  return sum;
}

}  // namespace

double planned_flows(const Workload& wl, FlowBackend& backend) {
  return sum_over_calls(wl, [&](const CollectiveCall& c) { return static_cast<double>(backend.planned_transfers(c)); });
}

double planned_packets(const Workload& wl, FlowBackend& backend, int mtu_bytes) {
  return sum_over_calls(wl, [&](const CollectiveCall& c) { return backend.planned_fabric_bytes(c); }) / mtu_bytes;
}

double estimated_seconds(double ops, double flows) {
  // Analytical runs: 1 to 2.5 us per op (engine events, interference re-timing). Flow-level runs add
  // the max-min sharing of each transfer with those in flight: 8-13 us per transfer measured on 2
  // busy cores (Llama-3 405B on 16,384 H100, 493 K transfers in 4.2 s; an all-to-all-heavy MoE job,
  // 14.5 K in 0.19 s).
  constexpr double kSecondsPerOp = 2.5e-6;
  constexpr double kSecondsPerFlow = 1e-5;
  return ops * kSecondsPerOp + flows * kSecondsPerFlow;
}

}  // namespace trainsim
