#pragma once
// Helpers shared by the workload tests: counting a rank's ops by name, and memory figures in GiB.
#include <algorithm>
#include <string>

#include "core/units.hpp"
#include "workload/workload.hpp"

namespace trainsim::test {

// How many of rank program `prog`'s ops are named `name`.
inline int count_named(const Workload& wl, const RankProgram& prog, const std::string& name) {
  return static_cast<int>(
      std::count_if(prog.ops.begin(), prog.ops.end(), [&](const Op& op) { return wl.names[op.name] == name; }));
}

// `bytes` in GiB, the unit of the memory model's per-stage figures.
inline double gib(double bytes) { return bytes / kGiB; }

}  // namespace trainsim::test
