#pragma once
// Compute and collective models with fixed times, for the api tests that count exposed communication by hand.
#include <functional>
#include <string>
#include <utility>

#include "collective/collective_model.hpp"
#include "collective/flows/flow_dag.hpp"
#include "compute/compute_model.hpp"

namespace trainsim::test {

// Every kernel takes 100 us.
class HundredMicrosecondKernels : public ComputeModel {
 public:
  KernelTiming time(const KernelDesc&) const override { return KernelTiming{from_microseconds(100)}; }
  std::string describe() const override { return "fixed"; }
};

// A collective of kind k takes us_of(k) microseconds, whatever its size and placement.
class FixedCollectiveTimes : public CollectiveModel {
 public:
  explicit FixedCollectiveTimes(std::function<double(CollKind)> us_of) : us_of_(std::move(us_of)) {}
  CollectiveEstimate estimate(CollKind kind, std::int64_t, const GroupPlacement&) const override {
    CollectiveEstimate e;
    e.time = from_microseconds(us_of_(kind));
    return e;
  }
  FlowDag flows(CollKind, std::int64_t, const GroupPlacement&, FlowGranularity) const override { return {}; }

 private:
  std::function<double(CollKind)> us_of_;
};

}  // namespace trainsim::test
