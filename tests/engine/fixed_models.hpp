#pragma once
// Compute and collective models with fixed times for the engine tests, so that every expected time
// is simple arithmetic.
#include "collective/collective_model.hpp"
#include "collective/flows/flow_dag.hpp"
#include "compute/compute_model.hpp"
#include "engine/engine.hpp"

namespace trainsim::test {

// Kernel time = `flops` microseconds. Beside collectives holding c CTAs a kernel runs 1 + c x
// `per_cta` times slower (0: no interference).
class FixedCompute : public ComputeModel {
 public:
  explicit FixedCompute(double per_cta = 0) : per_cta_(per_cta) {}
  KernelTiming time(const KernelDesc& k) const override { return KernelTiming{from_microseconds(k.flops)}; }
  std::string describe() const override { return "fixed"; }
  double interference_slowdown(const KernelDesc&, const CommLoad& load) const override {
    return 1.0 + per_cta_ * load.ctas;
  }

 private:
  double per_cta_;
};

// Every collective takes `bytes` microseconds and holds `channels` CTAs.
class FixedCollectives : public CollectiveModel {
 public:
  explicit FixedCollectives(int channels = 0) : channels_(channels) {}
  CollectiveEstimate estimate(CollKind, std::int64_t bytes, const GroupPlacement&) const override {
    CollectiveEstimate e;
    e.time = from_microseconds(static_cast<double>(bytes));
    e.channels = channels_;
    return e;
  }
  FlowDag flows(CollKind, std::int64_t, const GroupPlacement&, FlowGranularity) const override { return {}; }

 private:
  int channels_;
};

inline KernelDesc kernel_us(double us, KernelKind kind = KernelKind::Elementwise) {
  KernelDesc k;
  k.kind = kind;
  k.flops = us;
  return k;
}

inline ClusterSpec cluster(int gpus) {
  ClusterSpec c;
  c.num_gpus = gpus;
  c.gpus_per_node = 8;
  return c;
}

inline double us(SimTime t) { return to_microseconds(t); }

// Simulates `wl` on cluster(world size) with the fixed models (no interference, no host launches by default).
inline SimulationOutput simulate_fixed(const Workload& wl, const EngineOptions& opt = {},
                                       const FixedCompute& compute = FixedCompute(),
                                       const FixedCollectives& collectives = FixedCollectives()) {
  return simulate(wl, compute, collectives, cluster(wl.world_size), opt);
}

}  // namespace trainsim::test
