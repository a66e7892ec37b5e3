#pragma once
// Shapes derived from a ModelSpec that FLOP and memory formulas share: effective head sizes, which layers
// are MoE, and parameter counts (whole model, unsharded). Parallelism is applied by the caller.
#include <cstdint>
#include <vector>

#include "model/model_spec.hpp"

namespace trainsim {

// Head dim: kv_channels, or hidden_size / num_attention_heads when unset (Megatron's --kv-channels default).
std::int64_t head_dim(const ModelSpec& m);
// KV heads: num_query_groups, or num_attention_heads when unset (no GQA).
int kv_heads(const ModelSpec& m);
// 3 for a gated (SwiGLU) MLP (gate, up, down), 2 otherwise (Megatron's gated_linear_multiplier / F_eff).
int mlp_matrices(const ModelSpec& m);

// Whether layer `layer` (0-based) is an MoE layer. DeepSeek's rule (HF DeepseekV2 config:
// `layer >= first_k_dense_replace and layer % moe_layer_freq == 0`), which for first_dense_layers = 0 is
// Megatron's integer --moe-layer-freq pattern `layer % freq == 0`. Ids from num_layers on are the MTP blocks'
// transformer layers, which Megatron builds with the last decoder layer's spec (multi_token_prediction.py).
bool is_moe_layer(const ModelSpec& m, int layer);
int num_moe_layers(const ModelSpec& m);  // decoder layers only (MTP layers not counted)

// Parameters of one transformer layer, unsharded, split by how tensor/expert parallelism divides them.
struct LayerParams {
  double tp_sharded = 0;  // column/row-parallel weights (and column-parallel biases): divided by TP
  double replicated = 0;  // norms, row-parallel output biases, MoE router, MLA down-projections: on every TP rank
  double expert = 0;      // routed experts: divided by EP x expert-TP
  double total() const { return tp_sharded + replicated + expert; }
};
LayerParams layer_params(const ModelSpec& m, int layer);
// The weights of layer `layer`'s linear layers alone (QKV or MLA's projections, output projection, fc1, fc2, shared
// and routed experts), split as layer_params splits them: what Transformer Engine quantizes for its GEMMs. Biases,
// norms and the MoE router (a BF16 GEMM outside Transformer Engine) are not among them.
LayerParams layer_linear_weights(const ModelSpec& m, int layer);
// The same for global layer id `layer`, an MTP block's (ids from num_layers on) adding its eh_proj (a Transformer
// Engine linear too).
LayerParams block_linear_weights(const ModelSpec& m, int layer);
// What one MTP block adds to its transformer layer (multi_token_prediction.py MultiTokenPredictionLayer): eh_proj,
// a column-parallel 2h -> h linear without bias (TP-sharded), and the enorm, hnorm and final_layernorm (replicated).
// Its embedding and output layer are the model's own (see the workload and memory model for the copies).
LayerParams mtp_extra_params(const ModelSpec& m);

// One parameter tensor of a transformer layer, unsharded: the module that owns it (DeepSpeed ZeRO-3 gathers
// parameters per module, DeepSpeed parameter_offload.py::_register_deepspeed_module) and whether TP divides it.
struct ParamTensor {
  const char* module;  // "input_norm", "qkv", "proj", "pre_mlp_norm", "fc1", "fc2"; MLA: "attention"
  double numel;
  bool tp_sharded;
  bool vector = false;  // 1-D (a bias or a norm's gain/shift): Megatron's no-weight-decay parameter group
};
// The tensors of dense layer `layer` in forward order (input norm, QKV, output projection, pre-MLP norm, fc1,
// fc2; weight before bias). Multi-latent attention is lumped into module "attention" (its TP-sharded and its
// replicated part). They sum to layer_params(m, layer).total(). Throws Error for an MoE layer.
std::vector<ParamTensor> layer_param_tensors(const ModelSpec& m, int layer);

// Word embedding table V_pad x h (vocab-parallel: divided by TP); the untied LM head has the same size.
double word_embedding_params(const ModelSpec& m, int tensor_parallel);
// Learned absolute position embedding s x h (replicated over TP); 0 with RoPE.
double position_embedding_params(const ModelSpec& m);
// Final norm before the LM head (replicated).
double final_norm_params(const ModelSpec& m);
// Whole model, counting a tied LM head once.
double total_params(const ModelSpec& m, int tensor_parallel = 1);

}  // namespace trainsim
