#pragma once
// The kernels and TP/CP collectives of one transformer layer, the embedding and the LM head with
// vocab-parallel cross-entropy, for one micro-batch on one rank, in the order Megatron-Core with
// Transformer Engine issues them (../shared/reference/megatron.md §2, §3, §8, §11.1).
#include <cstdint>

#include "workload/layer_dims.hpp"
#include "workload/program_builder.hpp"

namespace trainsim {

struct LayerGroups {
  std::uint32_t tp = 0;  // tensor-parallel communicator (unused when t == 1)
  std::uint32_t cp = 0;  // context-parallel communicator (unused when c == 1)
};

class LayerEmitter {
 public:
  LayerEmitter(RankBuilder& rb, const LayerDims& d, LayerGroups groups, bool tp_comm_overlap)
      : rb_(rb), d_(d), g_(groups), tp_overlap_(tp_comm_overlap && d.sp) {}

  // `phase` is Forward, or Recompute for the forward re-run of full recomputation.
  void forward(int layer, int mb, Phase phase);
  // With selective recompute the attention forward is re-run right before its backward.
  void backward(int layer, int mb, bool recompute_attention);

  void embedding_forward(int mb);
  void embedding_backward(int mb);
  void lm_head_forward(int mb);   // final norm, LM head GEMM, cross-entropy
  void lm_head_backward(int mb);

 private:
  void norm(const OpContext& ctx, const char* name, bool backward);
  void elementwise(const OpContext& ctx, const char* name, double bytes);
  void attention_forward(const OpContext& ctx);
  void attention_backward(const OpContext& ctx);
  // TP collective of one activation tensor; synchronous unless TP comm overlap hides it behind
  // the GEMM issued right after (returned op must then be waited for after that GEMM).
  std::uint32_t tp_collective(const OpContext& ctx, const char* name, CollKind kind, bool sync);
  std::uint32_t cp_exchange(const OpContext& ctx, bool backward);
  // A (T x n x h) GEMM whose input is sequence-sharded under SP: the TP all-gather, then the GEMM.
  // Column-parallel forwards (QKV, fc1) and row-parallel dgrads (proj, fc2) both have this shape.
  void gathered_gemm(const OpContext& ctx, const char* name, std::int64_t n, const char* ag_name);
  // Row-parallel linear (proj, fc2): GEMM then its TP reduction.
  void row_parallel_forward(const OpContext& ctx, const char* name, std::int64_t k, const char* rs_name,
                            const char* ar_name);
  std::uint32_t gemm_op(const OpContext& ctx, const char* name, std::int64_t m, std::int64_t n, std::int64_t k);

  RankBuilder& rb_;
  const LayerDims& d_;
  LayerGroups g_;
  bool tp_overlap_;
};

}  // namespace trainsim
