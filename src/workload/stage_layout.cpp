#include "workload/stage_layout.hpp"

#include "core/error.hpp"

namespace trainsim {

namespace {

// Decoder layers of each (stage, chunk), indexed stage * v + chunk, when no pipeline_layout is given.
std::vector<int> chunk_counts(const Scenario& s, int p, int v) {
  const int L = s.model.num_layers;
  const ParallelSpec& par = s.parallelism;
  std::vector<int> counts(static_cast<std::size_t>(p * v), 0);
  const auto at = [&](int r, int j) -> int& { return counts[static_cast<std::size_t>(r * v + j)]; };
  if (par.account_for_embedding_in_pipeline_split || par.account_for_loss_in_pipeline_split) {
    // transformer_block.py get_num_layers_to_build: (L + embedding + loss) / (p * v) per chunk, one fewer in
    // the first chunk of the first stage (embedding) and the last chunk of the last stage (loss).
    const int slots =
        L + (par.account_for_embedding_in_pipeline_split ? 1 : 0) + (par.account_for_loss_in_pipeline_split ? 1 : 0);
    if (slots % (p * v) != 0) throw Error("layers cannot be split evenly over the model chunks");  // validated first
    for (int& c : counts) c = slots / (p * v);
    if (par.account_for_embedding_in_pipeline_split) at(0, 0) -= 1;
    if (par.account_for_loss_in_pipeline_split) at(p - 1, v - 1) -= 1;
    for (int c : counts)
      if (c < 0) throw Error("a model chunk would hold a negative number of layers");
    return counts;
  }
  std::vector<int> per_stage(static_cast<std::size_t>(p), 0);
  if (p == 1) {
    per_stage[0] = L;
  } else {
    int first = par.first_stage_layers.value_or(-1);
    int last = par.last_stage_layers.value_or(-1);
    int middle_stages = p - (first >= 0 ? 1 : 0) - (last >= 0 ? 1 : 0);
    int rest = L - (first >= 0 ? first : 0) - (last >= 0 ? last : 0);
    if (middle_stages <= 0 ? rest != 0 : rest % middle_stages != 0)
      throw Error("layers cannot be split evenly over the pipeline stages");  // the scenario layer validates this first
    const int each = middle_stages > 0 ? rest / middle_stages : 0;
    for (int r = 0; r < p; ++r) per_stage[static_cast<std::size_t>(r)] = each;
    if (first >= 0) per_stage[0] = first;
    if (last >= 0) per_stage[static_cast<std::size_t>(p - 1)] = last;
  }
  for (int r = 0; r < p; ++r) {
    const int c = per_stage[static_cast<std::size_t>(r)];
    if (c % v != 0) throw Error("stage layers not divisible by virtual_pipeline");
    for (int j = 0; j < v; ++j) at(r, j) = c / v;
  }
  return counts;
}

}  // namespace

StageLayout::StageLayout(const Scenario& s) : stages_(s.parallelism.pipeline), chunks_(s.parallelism.virtual_pipeline) {
  const int p = stages_, v = chunks_;
  const auto& layout = s.parallelism.pipeline_layout_stages;
  layers_.assign(static_cast<std::size_t>(p * v), {});
  mtp_.assign(static_cast<std::size_t>(p * v), {});
  int next = 0, next_mtp = s.model.num_layers;
  if (!layout.empty()) {
    if (layout.size() != static_cast<std::size_t>(p * v))
      throw Error("pipeline_layout does not have pipeline x virtual_pipeline stages");
    // Entry i is chunk i / p of rank i % p (pipeline_parallel_layer_layout.py); reading the entries in order
    // numbers the layers in Megatron's global order.
    for (std::size_t i = 0; i < layout.size(); ++i) {
      const int r = static_cast<int>(i) % p, j = static_cast<int>(i) / p;
      for (char c : layout[i]) {
        if (c == 't') layers_[static_cast<std::size_t>(r * v + j)].push_back(next++);
        if (c == 'm') mtp_[static_cast<std::size_t>(r * v + j)].push_back(next_mtp++);
      }
    }
    return;
  }
  const std::vector<int> counts = chunk_counts(s, p, v);
  // Chunk-major global order: chunk j of every stage, then chunk j+1 (Megatron's layer offset).
  for (int j = 0; j < v; ++j)
    for (int r = 0; r < p; ++r) {
      auto& dst = layers_[static_cast<std::size_t>(r * v + j)];
      for (int i = 0; i < counts[static_cast<std::size_t>(r * v + j)]; ++i) dst.push_back(next++);
    }
  for (int k = 0; k < s.model.mtp_layers; ++k) mtp_.back().push_back(next_mtp++);
}

int StageLayout::layers_on_stage(int stage) const {
  int n = 0;
  for (int j = 0; j < chunks_; ++j) n += static_cast<int>(layers(stage, j).size());
  return n;
}

int StageLayout::mtp_layers_on_stage(int stage) const {
  int n = 0;
  for (int j = 0; j < chunks_; ++j) n += static_cast<int>(mtp_layers(stage, j).size());
  return n;
}

}  // namespace trainsim
