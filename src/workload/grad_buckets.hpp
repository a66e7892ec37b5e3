#pragma once
// Megatron's DDP gradient buckets on one rank (distributed/param_and_grad_buffer.py, _ParamAndGradBuffer): parameters
// laid out in backprop order (LM head, final norm, last layer ... first layer, embedding); a bucket
// closes once it holds `bucket_size` elements. Only pipeline rank 0 (model chunk 0) splits into
// buckets, and only with overlap_grad_reduce; every other rank/chunk has one bucket.
#include <vector>

namespace trainsim {

struct ParamItem {
  int layer = -1;        // global layer id; -1 for embedding / LM head / final norm
  double params = 0;     // elements on this rank
  double quantized = 0;  // of which linear weights Transformer Engine quantizes (LayerDims::*_quantized_by_layer)
};

struct GradBucket {
  int first_item = 0, last_item = 0;  // inclusive range in backprop order
  double params = 0;
  double quantized = 0;
};

// `items` in backprop order. `bucket_elems` <= 0 means one bucket for everything.
std::vector<GradBucket> make_buckets(const std::vector<ParamItem>& items, double bucket_elems);

}  // namespace trainsim
