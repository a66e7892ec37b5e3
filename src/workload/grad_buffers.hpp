#pragma once
// Megatron's DDP gradient buffers on one rank (distributed/param_and_grad_buffer.py _ParamAndGradBuffer,
// distributed_data_parallel.py): Megatron keeps dense and expert parameters in separate buffers (keyed by
// is-expert-parallel), reduced over dp x cp and over expert-DP respectively, with buckets of their own. Both list
// the same items per model chunk in backprop order (an item's expert part is 0 outside MoE layers), so one item
// index drives the bucket firing of both. Bookkeeping only: the ops are issued by
// frameworks/bucketed_data_parallel.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "workload/grad_buckets.hpp"
#include "workload/workload.hpp"

namespace trainsim {

struct RankContext;

// Who reduces a buffer: its communicator and stream, and over how many ranks the distributed optimizer shards it.
struct GradBufferReduction {
  const char* prefix = "dp";  // op names: "dp" (dense, dp x cp) or "edp" (routed experts, expert-DP)
  std::uint32_t group = 0;
  Stream stream = Stream::DpComm;
  double shard_ranks = 1;
};

struct GradBuffer {
  GradBufferReduction reduction;
  std::vector<std::vector<ParamItem>> items_by_chunk;     // per model chunk, backprop order
  std::vector<std::vector<GradBucket>> buckets_by_chunk;  // per model chunk, backprop order
  double local_params = 0;                                // elements on this rank, all chunks
  std::string op_name(const char* what) const { return std::string(reduction.prefix) + "." + what; }
};

// One model chunk's parameters on the rank, backprop order: each item's dense and routed-expert elements.
struct ChunkParamItems {
  std::vector<ParamItem> dense, expert;
};

class GradBuffers {
 public:
  // `chunks[c]`: chunk c's items. Chunk 0 closes a bucket once it holds `first_chunk_bucket_elements` (<= 0: one
  // bucket); every other chunk has one bucket (Megatron splits only pipeline rank 0's first chunk, grad_buckets.hpp).
  // The expert buffer exists only when the rank holds expert parameters, and has no bucket of only dense items.
  GradBuffers(const std::vector<ChunkParamItems>& chunks, GradBufferReduction dense, GradBufferReduction expert,
              double first_chunk_bucket_elements);

  // [0] dense; [1] expert, when the rank holds routed experts.
  const std::vector<GradBuffer>& buffers() const { return buffers_; }
  const GradBuffer& dense() const { return buffers_.front(); }
  int items_in_chunk(int chunk) const {
    return static_cast<int>(dense().items_by_chunk[static_cast<std::size_t>(chunk)].size());
  }
  // Dense + expert elements on this rank.
  double local_params() const;
  // The elements this rank's optimizer updates: each buffer's 1/shard_ranks share when the optimizer state is
  // sharded (distrib_optimizer.py: dense over dp x cp, expert over expert-DP), else all of them.
  double optimizer_params(bool sharded) const;

 private:
  std::vector<GradBuffer> buffers_;
};

// The rank's parameters per model chunk in backprop order: LM head (when a weight of its own) and final norm on the
// last stage's last chunk, the chunk's MTP layers in reverse, the MTP blocks' embedding copy, its decoder layers in
// reverse, and the embedding on the first stage's first chunk.
std::vector<ChunkParamItems> rank_param_items(const RankContext& rank);

}  // namespace trainsim
