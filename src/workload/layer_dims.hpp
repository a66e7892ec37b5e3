#pragma once
// Per-rank, per-micro-batch shapes of one dense transformer layer (../shared/reference/megatron.md §0.1):
// T = s/c * b token rows entering the TP-sharded GEMMs, T_sp = T/t rows of the residual stream with SP.
#include <cstdint>

#include "scenario/scenario.hpp"

namespace trainsim {

struct LayerDims {
  std::int64_t s = 0, b = 0, h = 0, d = 0, ffn = 0, vocab_padded = 0;
  int a = 0, g = 0, t = 1, c = 1;
  int G = 1;  // 2 for a gated MLP
  bool sp = false;
  bool flash = true;
  bool rope = false;
  bool bias = true;
  bool layernorm = true;
  Precision precision = Precision::BF16;
  std::int64_t T = 0;      // s/c * b
  std::int64_t rows = 0;   // residual-stream rows on this rank: T/t with SP, T without
  std::int64_t qkv_out = 0;  // (a + 2g) * d / t
  std::int64_t attn_local = 0;  // a * d / t
  std::int64_t ffn_local = 0;   // F / t
  // Bytes of one activation tensor [T, h] in the activation dtype: the unit of TP collectives.
  std::int64_t act_bytes = 0;

  static LayerDims of(const Scenario& s);

  // Parameters per TP rank, from model/layer_shapes (the same counts the FLOP and memory formulas use):
  // one dense layer, the word + position embedding, the LM head and the final norm.
  double layer_params = 0;
  double embedding_params = 0;
  double lm_head_params = 0;
  double final_norm_params = 0;
  // Parameters of one layer replicated across TP (norms, row-parallel biases): Megatron flags them
  // sequence_parallel and all-reduces their grads over TP when SP is on.
  double layer_sp_params = 0;
};

}  // namespace trainsim
