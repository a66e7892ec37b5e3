#pragma once
// Which global layers each pipeline rank holds, per model chunk (Megatron's get_transformer_layer_offset and
// get_num_layers_to_build in transformer_layer.py / transformer_block.py): the even split, uneven first/last stages
// (first/last_stage_layers), the embedding and loss counted as layers (account_for_*_in_pipeline_split), or an
// explicit parallelism.pipeline_layout. MTP layers (model.mtp_layers; global ids num_layers + k) sit where the
// layout puts them, else in the last chunk of the last stage (Megatron builds them with the post-process chunk).
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim {

class StageLayout {
 public:
  explicit StageLayout(const Scenario& s);
  // Global decoder layer ids of chunk `chunk` on pipeline rank `stage`, in forward order.
  const std::vector<int>& layers(int stage, int chunk) const {
    return layers_[static_cast<std::size_t>(stage * chunks_ + chunk)];
  }
  // MTP layers (ids num_layers + k) of that chunk, in forward order; they run after its decoder layers.
  const std::vector<int>& mtp_layers(int stage, int chunk) const {
    return mtp_[static_cast<std::size_t>(stage * chunks_ + chunk)];
  }
  int layers_on_stage(int stage) const;  // decoder layers of all its chunks
  int mtp_layers_on_stage(int stage) const;
  int chunks() const { return chunks_; }
  int stages() const { return stages_; }

 private:
  int stages_ = 1, chunks_ = 1;
  std::vector<std::vector<int>> layers_, mtp_;
};

}  // namespace trainsim
