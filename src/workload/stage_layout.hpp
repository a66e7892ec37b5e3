#pragma once
// Which global layers each pipeline rank holds, per model chunk (Megatron's
// get_transformer_layer_offset; uneven first/last stages via first/last_stage_layers, §4.2).
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim {

class StageLayout {
 public:
  explicit StageLayout(const Scenario& s);
  // Global layer ids of chunk `chunk` on pipeline rank `stage`, in forward order.
  const std::vector<int>& layers(int stage, int chunk) const { return layers_[static_cast<std::size_t>(stage * chunks_ + chunk)]; }
  int layers_on_stage(int stage) const;
  int chunks() const { return chunks_; }
  int stages() const { return stages_; }

 private:
  int stages_ = 1, chunks_ = 1;
  std::vector<std::vector<int>> layers_;
};

}  // namespace trainsim
