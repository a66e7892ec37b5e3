#include "workload/recompute.hpp"

#include <algorithm>

#include "workload/stage_layout.hpp"

namespace trainsim {

int recomputed_layers_on_stage(const Scenario& s, int stage, int layers_on_stage) {
  if (s.training.recompute != RecomputeGranularity::Full) return 0;
  const auto& n = s.training.recompute_num_layers;
  int r = layers_on_stage;  // default: every layer of the stage
  if (n.size() == 1) r = n[0];
  if (n.size() > 1 && stage < static_cast<int>(n.size())) r = n[static_cast<std::size_t>(stage)];
  return std::clamp(r, 0, layers_on_stage);
}

int recomputed_layers_total(const Scenario& s) {
  if (s.training.recompute != RecomputeGranularity::Full) return 0;
  const StageLayout layout(s);
  int total = 0;
  for (int st = 0; st < layout.stages(); ++st) total += recomputed_layers_on_stage(s, st, layout.layers_on_stage(st));
  return total;
}

}  // namespace trainsim
