#include "workload/grad_buffers.hpp"

#include <algorithm>

#include "workload/rank_context.hpp"

namespace trainsim {

GradBuffers::GradBuffers(const std::vector<ChunkParamItems>& chunks, GradBufferReduction dense_reduction,
                         GradBufferReduction expert_reduction, double first_chunk_bucket_elements) {
  GradBuffer dense{dense_reduction, {}, {}, 0};
  GradBuffer expert{expert_reduction, {}, {}, 0};
  const auto chunk_count = chunks.size();
  dense.items_by_chunk.assign(chunk_count, {});
  expert.items_by_chunk.assign(chunk_count, {});
  // Last chunk first, as Megatron lays out the buffer (and as the sums have always been taken).
  for (std::size_t c = chunk_count; c-- > 0;) {
    dense.items_by_chunk[c] = chunks[c].dense;
    expert.items_by_chunk[c] = chunks[c].expert;
    for (const auto& i : dense.items_by_chunk[c]) dense.local_params += i.params;
    for (const auto& i : expert.items_by_chunk[c]) expert.local_params += i.params;
  }
  buffers_.push_back(std::move(dense));
  if (expert.local_params > 0) buffers_.push_back(std::move(expert));
  for (GradBuffer& buf : buffers_) {
    buf.buckets_by_chunk.assign(chunk_count, {});
    for (std::size_t c = 0; c < chunk_count; ++c) {
      auto buckets = make_buckets(buf.items_by_chunk[c], c == 0 ? first_chunk_bucket_elements : 0);
      // A bucket of only non-expert items holds nothing in the expert buffer: Megatron has no such bucket.
      std::erase_if(buckets, [](const GradBucket& b) { return b.params <= 0; });
      buf.buckets_by_chunk[c] = std::move(buckets);
    }
  }
}

double GradBuffers::local_params() const {
  double total = 0;
  for (const GradBuffer& buf : buffers_) total += buf.local_params;
  return total;
}

double GradBuffers::optimizer_params(bool sharded) const {
  double total = 0;
  for (const GradBuffer& buf : buffers_)
    total += sharded ? buf.local_params / buf.reduction.shard_ranks : buf.local_params;
  return total;
}

std::vector<ChunkParamItems> rank_param_items(const RankContext& rank) {
  const LayerDims& dims = rank.dims;
  const int stage = rank.pipeline_stage;
  std::vector<ChunkParamItems> chunks(static_cast<std::size_t>(rank.chunks));
  for (int c = rank.chunks - 1; c >= 0; --c) {
    ChunkParamItems& items = chunks[static_cast<std::size_t>(c)];
    auto add = [&](int layer, double dense_params, double expert_params) {
      const auto l = static_cast<std::size_t>(layer);
      const bool linear = layer >= 0 && l < dims.dense_quantized_by_layer.size();
      items.dense.push_back({layer, dense_params, linear ? dims.dense_quantized_by_layer[l] : 0});
      items.expert.push_back({layer, expert_params, linear ? dims.expert_quantized_by_layer[l] : 0});
    };
    if (rank.has_lm_head(c)) {
      if (rank.owns_lm_head_weight()) add(-1, dims.lm_head_params, 0);
      add(-1, dims.final_norm_params, 0);
    }
    const auto& mtp = rank.layout.mtp_layers(stage, c);
    for (auto it = mtp.rbegin(); it != mtp.rend(); ++it) {
      const auto l = static_cast<std::size_t>(*it);
      add(*it, dims.dense_params_by_layer[l], dims.expert_params_by_layer[l]);
    }
    if (rank.has_mtp_embedding(c)) add(-1, dims.lm_head_params, 0);  // word embedding copy, V/t x h
    const auto& layers = rank.layout.layers(stage, c);
    for (auto it = layers.rbegin(); it != layers.rend(); ++it) {
      const auto l = static_cast<std::size_t>(*it);
      add(*it, dims.dense_params_by_layer[l], dims.expert_params_by_layer[l]);
    }
    if (rank.has_embedding(c)) add(-1, dims.embedding_params, 0);
  }
  return chunks;
}

}  // namespace trainsim
