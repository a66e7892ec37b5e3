#include "workload/stage_layout.hpp"

#include "core/error.hpp"

namespace trainsim {

StageLayout::StageLayout(const Scenario& s) : stages_(s.parallelism.pipeline), chunks_(s.parallelism.virtual_pipeline) {
  const int L = s.model.num_layers, p = stages_, v = chunks_;
  std::vector<int> per_stage(static_cast<std::size_t>(p), 0);
  if (p == 1) {
    per_stage[0] = L;
  } else {
    int first = s.parallelism.first_stage_layers.value_or(-1);
    int last = s.parallelism.last_stage_layers.value_or(-1);
    int middle_stages = p - (first >= 0 ? 1 : 0) - (last >= 0 ? 1 : 0);
    int rest = L - (first >= 0 ? first : 0) - (last >= 0 ? last : 0);
    if (middle_stages <= 0 ? rest != 0 : rest % middle_stages != 0)
      throw Error("layers cannot be split evenly over the pipeline stages");  // the scenario layer validates this first
    const int each = middle_stages > 0 ? rest / middle_stages : 0;
    for (int r = 0; r < p; ++r) per_stage[static_cast<std::size_t>(r)] = each;
    if (first >= 0) per_stage[0] = first;
    if (last >= 0) per_stage[static_cast<std::size_t>(p - 1)] = last;
  }
  for (int c : per_stage)
    if (c % v != 0) throw Error("stage layers not divisible by virtual_pipeline");
  // Chunk-major global order: chunk j of every stage, then chunk j+1 (Megatron's layer offset).
  layers_.assign(static_cast<std::size_t>(p * v), {});
  int next = 0;
  for (int j = 0; j < v; ++j)
    for (int r = 0; r < p; ++r) {
      auto& dst = layers_[static_cast<std::size_t>(r * v + j)];
      for (int i = 0; i < per_stage[static_cast<std::size_t>(r)] / v; ++i) dst.push_back(next++);
    }
}

int StageLayout::layers_on_stage(int stage) const {
  int n = 0;
  for (int j = 0; j < chunks_; ++j) n += static_cast<int>(layers(stage, j).size());
  return n;
}

}  // namespace trainsim
