#include "workload/layer_dims.hpp"

#include <algorithm>

#include "model/layer_shapes.hpp"
#include "workload/kernels_factory.hpp"
#include "workload/token_exchange.hpp"

namespace trainsim {

namespace {

MlaDims mla_dims(const ModelSpec& m, int t) {
  MlaDims x;
  if (!m.mla) return x;
  x.on = true;
  x.q_lora = m.mla->q_lora_rank;
  x.kv_lora = m.mla->kv_lora_rank;
  x.nope = m.mla->qk_nope_head_dim;
  x.rope = m.mla->qk_rope_head_dim;
  x.v = m.mla->v_head_dim;
  const std::int64_t heads = m.num_attention_heads / t;
  x.q_local = heads * (x.nope + x.rope);
  x.kv_local = heads * (x.nope + x.v);
  x.v_local = heads * x.v;
  return x;
}

MoeDims moe_dims(const Scenario& sc, std::int64_t rows) {
  const MoeSpec& spec = sc.model.moe;
  const ParallelSpec& p = sc.parallelism;
  MoeDims x;
  if (!spec.enabled()) return x;
  x.on = true;
  x.experts = spec.num_experts;
  x.topk = spec.router_topk;
  x.ep = std::max(1, p.expert);
  x.etp = p.expert_tensor > 0 ? p.expert_tensor : std::max(1, p.tensor);
  x.local_experts = std::max(1, x.experts / x.ep);
  x.fe = spec.expert_ffn_hidden_size;
  x.fs = static_cast<std::int64_t>(spec.shared_experts) * spec.expert_ffn_hidden_size;
  x.dispatcher = p.moe_dispatcher;
  x.tokens = rows;
  // A capacity factor pads every expert to its capacity (Megatron's drop-and-pad,
  // moe_pad_expert_input_to_capacity): cf x the dropless row count under balanced routing.
  const double cf = spec.capacity_factor.value_or(1.0);
  x.routed = std::max<std::int64_t>(1, static_cast<std::int64_t>(static_cast<double>(rows * x.topk) * cf + 0.5));
  x.rows = x.routed * x.etp;
  x.rows_per_expert = std::max<std::int64_t>(1, (x.rows + x.local_experts - 1) / x.local_experts);
  if (x.dispatcher == MoeDispatcher::Flex && x.ep > 1) {
    // The expert-parallel group is ep consecutive ranks (expert_tensor 1), whole nodes of them or part of one.
    const int per_node = std::min(x.ep, std::max(1, sc.cluster.gpus_per_node));
    const ExpertRouting routing{x.experts, x.topk, spec.router_num_groups, spec.router_group_topk};
    x.exchange = deepep_exchange(routing, x.ep, per_node);
    x.received = static_cast<std::int64_t>(static_cast<double>(rows) * ranks_per_token(routing, x.ep) + 0.5);
  }
  return x;
}

}  // namespace

LayerDims LayerDims::of(const Scenario& sc) {
  const auto& m = sc.model;
  const auto& p = sc.parallelism;
  LayerDims d;
  d.s = m.seq_length;
  d.b = sc.training.micro_batch_size;
  d.h = m.hidden_size;
  d.a = m.num_attention_heads;
  d.g = m.num_query_groups;
  d.d = m.kv_channels;
  d.ffn = m.ffn_hidden_size;
  d.t = p.tensor;
  d.c = p.context;
  d.G = m.gated_mlp ? 2 : 1;
  d.sp = p.sequence_parallel && p.tensor > 1;
  d.flash = sc.training.flash_attention;
  d.window = m.sliding_window.value_or(0);
  d.eager = eager_pytorch(sc);
  d.dtensor_tp = p.framework == Framework::FSDP;
  d.torch_cp = p.framework == Framework::FSDP;
  // Megatron's FusedScaleMaskSoftmax.is_kernel_available (megatron/core/fusions/fused_softmax.py): fp16/bf16 input,
  // 16 < key length <= 16384, query length and b * heads / t multiples of 4. Megatron-based stacks
  // (Megatron-LM, Megatron-DeepSpeed) build it; an eager PyTorch model takes the unfused path.
  {
    // Under an FP8 or NVFP4 recipe the attention scores are BF16 too.
    const bool half = sc.training.precision == Precision::FP16 || sc.training.precision == Precision::BF16 ||
                      quantized_gemms(sc.training.precision);
    const std::int64_t kv = m.seq_length, q = m.seq_length / p.context;
    const std::int64_t batches = sc.training.micro_batch_size * (m.num_attention_heads / p.tensor);
    d.fused_softmax = !d.eager && half && kv > 16 && kv <= 16384 && q % 4 == 0 && batches % 4 == 0;
  }
  d.rope = m.position_embedding == PositionEmbedding::Rope;
  d.bias = m.add_bias_linear;
  d.layernorm = m.normalization == Normalization::LayerNorm;
  d.precision = sc.training.precision;
  d.fp8_recipe = sc.training.fp8_recipe;
  d.fp8_params = d.precision == Precision::FP8 && sc.training.fp8_param_gather;
  d.fp8_tn_only = !sc.cluster.gpu.fp8_gemms_take_any_layout();
  for (int l = 0; l < m.num_layers; ++l)
    d.bf16_linear_layer.push_back(sc.training.keeps_bf16_linears(l, m.num_layers) ? 1 : 0);
  d.vocab_padded = padded_vocab_size(m.vocab_size, p.tensor);
  d.T = d.s / d.c * d.b;
  d.rows = d.sp ? d.T / d.t : d.T;
  d.qkv_out = (static_cast<std::int64_t>(d.a) + 2 * static_cast<std::int64_t>(d.g)) * d.d / d.t;
  d.attn_local = static_cast<std::int64_t>(d.a) * d.d / d.t;
  d.ffn_local = d.ffn / d.t;
  d.act_bytes = static_cast<std::int64_t>(static_cast<double>(d.T * d.h) * activation_bytes(d.precision));
  d.mla = mla_dims(m, d.t);
  d.moe = moe_dims(sc, d.rows);
  // Decoder layers, then the MTP blocks' transformer layers (ids num_layers + k, the last decoder layer's type).
  const int all_layers = std::max(0, m.num_layers) + std::max(0, m.mtp_layers);
  d.moe_layer.assign(static_cast<std::size_t>(all_layers), 0);
  for (int l = 0; l < all_layers; ++l) d.moe_layer[static_cast<std::size_t>(l)] = is_moe_layer(m, l) ? 1 : 0;

  const double t_ranks = static_cast<double>(d.t);
  const double expert_ranks = static_cast<double>(d.moe.ep) * static_cast<double>(d.moe.on ? d.moe.etp : 1);
  const bool quantized = quantized_gemms(d.precision);
  const auto add_quantized = [&](int l) {
    const LayerParams w = quantized && !sc.training.keeps_bf16_linears(l, m.num_layers)
                              ? trainsim::block_linear_weights(m, l)
                              : LayerParams{};
    d.dense_quantized_by_layer.push_back(w.tp_sharded / t_ranks + w.replicated);
    d.expert_quantized_by_layer.push_back(w.expert / expert_ranks);
  };
  for (int l = 0; l < m.num_layers; ++l) {
    const LayerParams lp = trainsim::layer_params(m, l);
    d.dense_params_by_layer.push_back(lp.tp_sharded / t_ranks + lp.replicated);
    d.expert_params_by_layer.push_back(lp.expert / expert_ranks);
    d.sp_params_by_layer.push_back(lp.replicated);
    add_quantized(l);
  }
  // An MTP block: its transformer layer plus eh_proj (TP-sharded, a Transformer Engine linear) and its three norms
  // (replicated).
  const LayerParams mtp = mtp_extra_params(m);
  for (int k = 0; k < m.mtp_layers; ++k) {
    const LayerParams lp = trainsim::layer_params(m, m.num_layers + k);
    d.dense_params_by_layer.push_back((lp.tp_sharded + mtp.tp_sharded) / t_ranks + lp.replicated + mtp.replicated);
    d.expert_params_by_layer.push_back(lp.expert / expert_ranks);
    d.sp_params_by_layer.push_back(lp.replicated + mtp.replicated);
    add_quantized(m.num_layers + k);
  }
  const LayerParams lp = trainsim::layer_params(m, 0);  // dense models: every layer has the same shape
  d.layer_params = lp.tp_sharded / t_ranks + lp.replicated;
  d.layer_sp_params = lp.replicated;
  d.lm_head_params = word_embedding_params(m, d.t) / t_ranks;
  d.embedding_params = d.lm_head_params + position_embedding_params(m);
  d.final_norm_params = trainsim::final_norm_params(m);
  return d;
}

}  // namespace trainsim
