// Per-rank memory of every pipeline stage. The model and its sources are explained in docs/memory-model.md;
// each formula below names where it comes from. All counts are bytes until the final conversion to GiB.
//
//   weights + grads + optimizer   parameters on the rank x bytes per parameter of each state, divided by the
//                                 data-parallel degree where the framework shards that state
//                                 (ZeRO paper, Rajbhandari et al. 2020 §5; PyTorch FSDP fully_sharded_data_parallel.py;
//                                 Megatron distributed optimizer: distributed/param_and_grad_buffer.py,
//                                 optimizer/distrib_optimizer.py, docs/user-guide/features/dist_optimizer.md)
//   activations                   per layer per micro-batch after Korthikanti et al. 2022 ("Reducing Activation
//                                 Recomputation in Large Transformer Models", §4), generalised to GQA/gated MLPs/MoE
//                                 (MoE layers: docs/moe.md §5), times the micro-batches the pipeline schedule keeps in
//                                 flight (schedules.py, forward_backward_pipelining_without/with_interleaving)
//   other                         fixed allowance (CUDA context, NCCL buffers, workspaces) + fragmentation: judgment;
//                                 DeepSpeed's ipg gradient bucket(s) (stage_1_and_2.py, stage3.py; reduce_bucket_size)
#include "workload/memory_model.hpp"

#include <algorithm>
#include <cmath>

#include "collective/deepep_buffers.hpp"
#include "core/units.hpp"
#include "model/layer_shapes.hpp"
#include "workload/frameworks/training_framework.hpp"
#include "workload/recompute.hpp"
#include "workload/stage_layout.hpp"

namespace trainsim {

namespace {

// ---------------------------------------------------------------------------------------------------------------
// Model states: bytes per parameter and which of them the data-parallel group shards.
struct StateBytes {
  double weight = 2, grad = 4, optimizer = 12;
  bool shard_weight = false, shard_grad = false, shard_optimizer = false;
};

// Adam and LAMB keep two fp32 moments (8 B); SGD with momentum one (4 B). Mixed precision adds an fp32 master
// copy (4 B) unless the sharded parameter itself is fp32 (FSDP).
double moment_bytes(Optimizer o) { return o == Optimizer::SGD ? 4 : 8; }

StateBytes state_bytes(const Scenario& s) {
  const ParallelSpec& par = s.parallelism;
  const bool fp32 = s.training.precision == Precision::FP32;
  const double moments = moment_bytes(s.training.optimizer);
  StateBytes b;
  switch (par.framework) {
    case Framework::Megatron:
      // bf16/fp16 params (2 B); the main-grad buffer in the dtype the data-parallel reduction moves (param_and_
      // grad_buffer.py: fp32 for bf16 and fp8, whose --bf16 turns on accumulate_allreduce_grads_in_fp32, unless
      // --grad-reduce-in-bf16; fp16 for fp16), so the framework's own rule gives it; optimizer fp32 master +
      // moments. zero_stage 1 = distributed optimizer (shards only the optimizer over dp x cp,
      // optimizer/distrib_optimizer.py); 2 and 3 additionally shard grads / weights (Megatron-FSDP).
      b.weight = fp32 ? 4 : 2;
      b.grad = megatron_grad_reduce_bytes(s);
      b.optimizer = fp32 ? moments : 4 + moments;
      break;
    case Framework::DeepSpeed:
      // ZeRO paper: 2 B lp params + 2 B lp grads + K = 12 B (fp32 master, m, v) (arXiv 1910.02054 §3.1).
      b.weight = fp32 ? 4 : 2;
      b.grad = fp32 ? 4 : 2;
      b.optimizer = fp32 ? moments : 4 + moments;
      break;
    case Framework::FSDP:
      // FSDP keeps the sharded parameter in fp32 (no separate master) and fp32 grads: 4 + 4 + 8 (PyTorch FSDP
      // MixedPrecision).
      b.weight = 4;
      b.grad = 4;
      b.optimizer = moments;
      break;
  }
  const int z = par.zero_stage;
  if (par.framework == Framework::FSDP) {
    // FULL_SHARD (3) and SHARD_GRAD_OP (2) both keep only shards between iterations; 0/1 = NO_SHARD.
    b.shard_weight = b.shard_grad = b.shard_optimizer = z >= 2;
  } else {
    b.shard_optimizer = z >= 1;
    b.shard_grad = z >= 2;
    b.shard_weight = z >= 3;
  }
  return b;
}

// Parameters held by one rank of a stage: dense (sharded over dp x cp by ZeRO) and routed-expert (sharded over the
// expert-data-parallel group). TP divides linear weights and the vocabulary; norms, row-parallel biases, the
// router and learned position embeddings are replicated (Megatron tensor_parallel/layers.py).
struct RankParams {
  double dense = 0, expert = 0;
  double largest_unit = 0;  // largest FSDP/ZeRO-3 gather unit on this rank (a layer or the embedding)
};

// Expert-tensor-parallel size: parallelism.expert_tensor, which validation resolves to `tensor` when not given.
int expert_tensor(const ParallelSpec& p) { return p.expert_tensor > 0 ? p.expert_tensor : std::max(1, p.tensor); }

RankParams params_on_stage(const Scenario& s, int stage, const std::vector<int>& layers, int mtp_layers,
                           bool has_loss) {
  const ModelSpec& m = s.model;
  const int t = std::max(1, s.parallelism.tensor);
  const int e = std::max(1, s.parallelism.expert);
  const int te = expert_tensor(s.parallelism);
  const int p = std::max(1, s.parallelism.pipeline);
  RankParams r;
  for (int layer : layers) {
    const LayerParams lp = layer_params(m, layer);
    const double dense = lp.tp_sharded / t + lp.replicated;
    const double expert = lp.expert / (static_cast<double>(e) * te);  // E/e experts, each split over expert-TP
    r.dense += dense;
    r.expert += expert;
    r.largest_unit = std::max(r.largest_unit, dense + expert);
  }
  const double vocab = word_embedding_params(m, t) / t;
  if (mtp_layers > 0) {
    // MTP blocks (ids in `layers` from num_layers on) add eh_proj and three norms each, and their stage holds a
    // copy of the word embedding unless it is the first, and the output layer unless it also holds the loss
    // (gpt_model.py builds embedding / output_layer where mtp_process).
    const LayerParams extra = mtp_extra_params(m);
    r.dense += mtp_layers * (extra.tp_sharded / t + extra.replicated);
    if (stage != 0) r.dense += vocab;
    if (!has_loss) r.dense += vocab;
  }
  if (stage == 0) {
    r.dense += vocab + position_embedding_params(m);
    r.largest_unit = std::max(r.largest_unit, vocab);
  }
  if (stage == p - 1) {
    r.dense += final_norm_params(m);
    // Untied: the LM head is its own weight. Tied with p > 1: the last stage keeps a copy
    // (LanguageModule.setup_embeddings_and_output_layer).
    if (m.untie_embeddings || p > 1) {
      r.dense += vocab;
      r.largest_unit = std::max(r.largest_unit, vocab);
    }
  }
  return r;
}

// ---------------------------------------------------------------------------------------------------------------
// Activations of one layer for one micro-batch, bytes per token held by this rank's sequence slice.
// Korthikanti et al. 2022 §4.1 (bf16, per layer, no parallelism): attention 11sbh + 5as^2b, MLP 19sbh, norms 4sbh:
//   replicated under TP without SP (10sbh): both norm inputs (2+2), QKV input (2), fc1 input (2), 2 dropout masks (1+1)
//   TP-sharded (24sbh for MHA, 4h GELU MLP): Q, K (2+2), V (2), projection input (2), GELU input (8), output (8)
//   softmax (5as^2b): scores (2) + dropout mask (1) + dropout output (2)
// Generalised here: Q is 2q and K, V are 2kv each (GQA); the MLP activation input is 2*F (4*F when gated) and its
// output 2F; dropout masks exist only when the model trains with dropout (trains_with_dropout below),
// so without dropout the softmax keeps only its 2 bytes. Under Transformer Engine's FP8 or NVFP4 the linears' saved
// inputs (QKV, fc1, fc2 and the projection's) are their quantized copies (linear_saved_input_bytes).
// Dropout (and so its 1-byte masks) is on for GPT models trained with Megatron or Megatron-DeepSpeed, whose default
// hidden/attention dropout is 0.1 (megatron/training/arguments.py, Korthikanti's setup). Llama-family recipes
// set it to 0, and the FSDP stacks we model (llm-foundry MPT: MPTConfig's attn/resid/emb pdrop default 0.0)
// train without it.
bool trains_with_dropout(const Scenario& s) {
  return s.model.family == "gpt" && s.parallelism.framework != Framework::FSDP;
}

// Bytes per element of the input a linear layer keeps for its wgrad. Transformer Engine's linears (Megatron-Core's
// layers) keep the quantized column-wise copy they made for the GEMM, not the BF16 input (transformer_engine/pytorch/
// module/linear.py: update_usage(rowwise_usage=False, columnwise_usage=True), saved_inputmat = inputmat): 1 B under
// FP8, 0.5625 B under NVFP4 (4-bit value + one E4M3 scale per 16). Other stacks' FP8 (torchao's Float8Linear saves
// input_hp), every unquantized recipe and the layers kept in BF16 (training.bf16_layers_at_start / _at_end) keep 2 B.
double linear_saved_input_bytes(const Scenario& s, int layer) {
  if (s.parallelism.framework != Framework::Megatron) return 2;
  if (s.training.keeps_bf16_linears(layer, s.model.num_layers)) return 2;
  switch (s.training.precision) {
    case Precision::FP8: return 1;
    case Precision::FP4: return 0.5 + 1.0 / 16.0;
    default: return 2;
  }
}

struct LayerActivation {
  double replicated = 0;  // divided by TP only with sequence parallelism
  double sharded = 0;     // divided by TP
  double softmax = 0;     // divided by TP; absent with flash attention or selective recompute
  double routed = 0;      // MoE routed path, already per token of the rank's T = s/c*b (divided as it should be)
  double whole = 0;       // per token of T, divided by nothing: a row-parallel matmul's output before its reduction
};

// The routed path of an MoE layer, bytes per rank per token of T (docs/moe.md §5). The rank routes its
// T_l = T/t_sp tokens (t_sp = t with sequence parallelism, else 1) to k experts each; under balanced routing it
// receives back T_l*k rows (x capacity factor), t_e*T_l*k after the expert-TP all-gather. Saved for backward:
//   the gathered fc1 input, 2h per row (t_e*T_l*k rows: not divided by t_e, the gather makes it whole; its quantized
//   copy under Transformer Engine's FP8 / NVFP4, as fc2's input below: linear_saved_input_bytes);
//   fc1 output (activation input) 2*G'*F_e/t_e and activation output (fc2 input) 2*F_e/t_e per row, which over the
//   t_e*T_l*k rows is T_l*k*(2G'F_e + 2F_e) whatever t_e is;
//   the router's fp32 scores (4E) and routing map (E) per token of T_l.
double moe_routed_bytes_per_token(const Scenario& s, int layer) {
  const ModelSpec& m = s.model;
  const ParallelSpec& par = s.parallelism;
  const int t = std::max(1, par.tensor);
  const double t_sp = par.sequence_parallel && t > 1 ? t : 1;
  const double h = static_cast<double>(m.hidden_size);
  const double k = m.moe.router_topk * m.moe.capacity_factor.value_or(1.0);
  const double fe = static_cast<double>(m.moe.expert_ffn_hidden_size);
  const double gated = m.gated_mlp ? 2 : 1;
  const double lin = linear_saved_input_bytes(s, layer);  // the experts' fc1 and fc2 inputs
  const double per_routed_token = lin * h * expert_tensor(par) + 2 * gated * fe + lin * fe;
  return (k * per_routed_token + 5.0 * m.moe.num_experts) / t_sp;
}

// Transient buffers of the token dispatcher while one MoE layer runs (not kept for backward): the permuted
// tokens sent and the tokens received, T_l*k rows of h each, bytes per rank per token of T.
double moe_dispatch_buffer_bytes_per_token(const Scenario& s) {
  const ParallelSpec& par = s.parallelism;
  const int t = std::max(1, par.tensor);
  const double t_sp = par.sequence_parallel && t > 1 ? t : 1;
  const double k = s.model.moe.router_topk * s.model.moe.capacity_factor.value_or(1.0);
  return 2 * k * 2 * static_cast<double>(s.model.hidden_size) / t_sp;
}

// Selective recompute (Megatron's --recompute-modules) keeps less of a layer; what each module stops keeping:
//   mla_up_proj: Q, K, V (the up-projections' outputs, the core-attention inputs); output-discarding checkpoint;
//   layernorm:   the output of each separate (not TE-fused) norm: MLA's input norm, the MoE layer's pre-MLP norm;
//   mlp:         a dense MLP's fc1 input and activation input/output (only its input is kept; not MoE layers);
//   moe:         the whole routed path and the shared experts' inner activations (the layer's input is kept);
//   moe_act:     the routed experts' activation output (fc2's input), T_l*k rows of 2 F_e;
//   shared_experts: the shared experts' activation input/output;
//   core_attn:   with flash attention nothing more (the kernel keeps only Q, K, V, the output and its
//                statistics); without it the softmax (handled in layer_bytes).
// torchtitan_op replaces the whole list: what it keeps is written out below.
void apply_selective_recompute(const Scenario& s, int layer, LayerActivation& act) {
  if (s.training.recompute != RecomputeGranularity::Selective) return;
  const RecomputeModules& r = s.training.recompute_modules;
  const ModelSpec& m = s.model;
  if (r.torchtitan_op) {
    // torchtitan's per-op checkpointing (dense blocks, SDPA; validation refuses the rest) keeps the block's input and
    // the outputs of the ops it saves, nothing else: wq's and wv's outputs (column-parallel), SDPA's output, w1's
    // (fc1's when ungated), w2's — the row-parallel matmul's output before its reduce-scatter, whole on every TP
    // rank — and, under TP, the two reduce-scatters' outputs (sequence-sharded). wk, wo, w3 (fc2) are recomputed.
    const double h = static_cast<double>(m.hidden_size);
    const double q = m.num_attention_heads * static_cast<double>(head_dim(m));
    const double kv = kv_heads(m) * static_cast<double>(head_dim(m));
    const double f = static_cast<double>(m.ffn_hidden_size);
    const bool tp = s.parallelism.tensor > 1;
    act.replicated = 2 * h + (tp ? 2 * h + 2 * h : 0);
    act.sharded = 2 * q + 2 * kv + 2 * q + 2 * f;
    act.softmax = 0;
    act.whole = m.gated_mlp ? 2 * h : 0;
    return;
  }
  const double h = static_cast<double>(m.hidden_size);
  const double a = m.num_attention_heads;
  const bool moe = is_moe_layer(m, layer);
  const double lin = linear_saved_input_bytes(s, layer);
  auto mlp_inner = [&](double f) { return 2 * (m.gated_mlp ? 2 * f : f) + lin * f; };
  if (r.mla_up_proj && m.mla) {
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim),
                 v = static_cast<double>(x.v_head_dim);
    act.sharded -= 2 * a * qk * 2 + 2 * a * v;
  }
  if (r.layernorm) {
    if (m.mla) act.replicated -= lin * h;  // input norm output (the down-projections' input)
    if (moe) act.replicated -= 2 * h;      // pre-MLP norm output (router / dispatcher / shared-expert input)
  }
  if (!moe && r.mlp) {
    act.replicated -= lin * h;
    act.sharded -= mlp_inner(static_cast<double>(m.ffn_hidden_size));
  }
  if (moe) {
    const double shared_inner = mlp_inner(static_cast<double>(m.moe.expert_ffn_hidden_size) * m.moe.shared_experts);
    if (r.moe) {
      act.routed = 0;
      act.sharded -= shared_inner;
    } else {
      if (r.shared_experts) act.sharded -= shared_inner;
      if (r.moe_act) {
        const ParallelSpec& par = s.parallelism;
        const double t_sp = par.sequence_parallel && par.tensor > 1 ? par.tensor : 1;
        const double k = m.moe.router_topk * m.moe.capacity_factor.value_or(1.0);
        act.routed -= k * lin * static_cast<double>(m.moe.expert_ffn_hidden_size) / t_sp;
      }
    }
  }
}

LayerActivation layer_activation(const Scenario& s, int layer) {
  const ModelSpec& m = s.model;
  const double h = static_cast<double>(m.hidden_size);
  const double a = m.num_attention_heads;
  const double seq = static_cast<double>(m.seq_length);
  const bool dropout = trains_with_dropout(s);
  const double mask = dropout ? 1 : 0;
  // A linear's saved input: BF16, or Transformer Engine's quantized copy (linear_saved_input_bytes).
  const double lin = linear_saved_input_bytes(s, layer);
  // The projection's input, per element. Unquantized, fused attention's output O (kept for its backward) and the
  // projection's saved input are one BF16 tensor; quantized, the projection keeps its own copy beside O (fused
  // attention) or alone (unfused attention keeps its probabilities and V instead).
  const double proj_input = lin < 2 ? (s.training.flash_attention ? 2 + lin : lin) : 2;
  LayerActivation act;
  // Attention block: norm input + QKV input + dropout mask after the projection.
  act.replicated += 2 * h + lin * h + mask * h;
  if (m.mla) {
    const MlaSpec& x = *m.mla;
    const double qk = static_cast<double>(x.qk_nope_head_dim + x.qk_rope_head_dim),
                 v = static_cast<double>(x.v_head_dim);
    // Compressed latents come from the (replicated) down-projections: q latent, kv latent + shared rope key.
    act.replicated +=
        2 * static_cast<double>(x.q_lora_rank) + 2 * static_cast<double>(x.kv_lora_rank + x.qk_rope_head_dim);
    act.sharded += 2 * a * qk * 2 + 2 * a * v + proj_input * a * v;  // Q, K, V, projection input
  } else {
    const double q = a * static_cast<double>(head_dim(m));
    const double kv = kv_heads(m) * static_cast<double>(head_dim(m));
    act.sharded += 2 * q + 2 * kv + 2 * kv + proj_input * q;  // Q, K, V, projection input
  }
  act.softmax = (dropout ? 5 : 2) * a * seq;  // per query token: one row of a x s scores (Korthikanti 5as/h term)
  // MLP block: norm input + fc1 input (an MoE layer's router, a BF16 linear, keeps it in BF16) + dropout mask after
  // fc2.
  act.replicated += 2 * h + (is_moe_layer(m, layer) ? 2 : lin) * h + mask * h;
  // Activation input (BF16, kept by the activation function) + output (fc2's saved input).
  auto mlp_inner = [&](double f) { return 2 * (m.gated_mlp ? 2 * f : f) + lin * f; };
  if (!is_moe_layer(m, layer)) {
    act.sharded += mlp_inner(static_cast<double>(m.ffn_hidden_size));
  } else {
    // MoE (docs/moe.md §5): the norm input and the router / shared-expert input above, the routed path, and the
    // shared experts as a TP-split MLP of width shared x F_e. A capacity factor pads every expert to capacity.
    act.routed = moe_routed_bytes_per_token(s, layer);
    act.sharded += mlp_inner(static_cast<double>(m.moe.expert_ffn_hidden_size) * m.moe.shared_experts);
  }
  apply_selective_recompute(s, layer, act);
  return act;
}

// Bytes of one layer's activations for one micro-batch on one rank.
double layer_bytes(const Scenario& s, int layer, double tokens) {
  const int t = std::max(1, s.parallelism.tensor);
  const bool sp = s.parallelism.sequence_parallel && t > 1;
  const LayerActivation a = layer_activation(s, layer);
  // Unfused attention keeps its softmax unless selective recompute re-runs core attention (or full recompute).
  const bool keep_softmax =
      !s.training.flash_attention &&
      (s.training.recompute == RecomputeGranularity::None ||
       (s.training.recompute == RecomputeGranularity::Selective && !s.training.recompute_modules.core_attn));
  return tokens * ((sp ? a.replicated / t : a.replicated) + a.sharded / t + (keep_softmax ? a.softmax / t : 0) +
                   a.routed + a.whole);
}

// Full recompute keeps only each checkpointed layer's input, 2sbh (sharded by TP under SP) — Korthikanti §5.
double checkpoint_bytes(const Scenario& s, double tokens) {
  const int t = std::max(1, s.parallelism.tensor);
  const bool sp = s.parallelism.sequence_parallel && t > 1;
  return tokens * 2 * static_cast<double>(s.model.hidden_size) / (sp ? t : 1);
}

// Micro-batches whose activations a stage holds at its peak (Megatron-LM pipeline_parallel/schedules.py).
//   no pipeline: 1 (forward then backward per micro-batch)
//   GPipe: all m (every forward before any backward)
//   1F1B: warm-up (p - stage - 1) + 1 = p - stage, at most m
//   interleaved 1F1B (v chunks): Megatron's warm-up (p - stage - 1)*2 + (v - 1)*p model-chunk micro-batches + 1,
//   at most m*v; returned in chunk units (each chunk holds 1/v of the stage's layers).
int chunks_in_flight(const Scenario& s, int stage, int micro_batches) {
  const int p = std::max(1, s.parallelism.pipeline);
  const int v = std::max(1, s.parallelism.virtual_pipeline);
  const int m = std::max(1, micro_batches);
  if (p == 1) return 1;
  if (s.parallelism.schedule == PipelineSchedule::GPipe) return m * v;
  if (v == 1) return std::min(p - stage, m);
  return std::min((p - stage - 1) * 2 + (v - 1) * p + 1, m * v);
}

// Fixed allowance (judgment, see docs/memory-model.md): CUDA context and kernel images ~1 GiB, cuBLAS/cuDNN/TE
// workspaces ~0.5 GiB, and NCCL FIFOs per communicator: per channel Simple 4 MiB + LL128 4,915,200 B + LL 512 KiB
// (NCCL_BUFFSIZE, NCCL_LL128_BUFFSIZE, NCCL_LL_BUFFSIZE defaults) x 16 channels. Fragmentation of the caching
// allocator: 10% of activations.
constexpr double kContextGiB = 1.0;
constexpr double kWorkspaceGiB = 0.5;
constexpr double kNcclChannels = 16;
constexpr double kNcclBytesPerChannel = 4194304.0 + 4915200.0 + 524288.0;
constexpr double kFragmentation = 0.10;

// DeepSpeed's ipg gradient bucket of reduce_bucket_size lp elements (stage_1_and_2.py, stage3.py): ZeRO-1/2 allocate
// it in every backward, twice with overlap_comm (double buffering); ZeRO-3 keeps one permanently. Its size does not
// depend on the model: DeepSpeed allocates the whole bucket.
double deepspeed_bucket_bytes(const Scenario& s) {
  const ParallelSpec& par = s.parallelism;
  if (par.framework != Framework::DeepSpeed || par.zero_stage < 1) return 0;
  const double lp = s.training.precision == Precision::FP32 ? 4 : 2;
  const bool overlap = par.deepspeed.overlap_comm.value_or(par.zero_stage == 3);
  const double buffers = par.zero_stage < 3 && overlap ? 2 : 1;
  return buffers * par.deepspeed.reduce_bucket_size * lp;
}

int communicators(const Scenario& s, int data) {
  const ParallelSpec& par = s.parallelism;
  int n = 0;
  for (int size : {par.tensor, par.pipeline, data * par.context, par.context}) n += size > 1 ? 1 : 0;
  if (s.model.moe.enabled()) {  // the expert view's communicators: EP, expert-TP, expert-DP (+ etp x ep)
    const int te = expert_tensor(par);
    const int expert_dp = std::max(1, par.tensor * par.context * data / std::max(1, te * par.expert));
    for (int size : {par.expert, te, expert_dp}) n += size > 1 ? 1 : 0;
    if (par.moe_dispatcher == MoeDispatcher::AllGather && te * par.expert > 1) n += 1;
  }
  return n;
}

// ---------------------------------------------------------------------------------------------------------------
// The job as the memory model reads it: every degree at least 1, the data-parallel degree from the GPU count when
// the scenario leaves it out, and the groups ZeRO/FSDP shard over.
struct JobShape {
  int tensor = 1, pipeline = 1, context = 1, expert = 1, virtual_pipeline = 1;
  int data = 1;
  int micro_batches = 1;           // per iteration
  double dense_shard_group = 1;    // ranks sharding dense states: dp x cp (Megatron shards over both)
  double expert_shard_group = 1;   // ranks sharding routed-expert states: the expert-data-parallel group
  double tokens = 0;               // tokens of one micro-batch in this rank's sequence slice
  bool sequence_parallel = false;  // sequence parallelism in effect (asked for, and TP > 1)
};

int data_parallel_degree(const Scenario& s, int tensor, int pipeline, int context) {
  if (s.parallelism.data > 0) return s.parallelism.data;
  return s.cluster.num_gpus > 0 ? std::max(1, s.cluster.num_gpus / (tensor * pipeline * context)) : 1;
}

// At least one, also when the global batch is smaller than one micro-batch per data-parallel rank.
int micro_batches_per_iteration(const Scenario& s, int data) {
  const std::int64_t denom = static_cast<std::int64_t>(s.training.micro_batch_size) * data;
  return denom > 0 ? static_cast<int>(std::max<std::int64_t>(1, s.training.global_batch_size / denom)) : 1;
}

JobShape job_shape(const Scenario& s) {
  const ParallelSpec& par = s.parallelism;
  JobShape shape;
  shape.tensor = std::max(1, par.tensor);
  shape.pipeline = std::max(1, par.pipeline);
  shape.context = std::max(1, par.context);
  shape.expert = std::max(1, par.expert);
  shape.virtual_pipeline = std::max(1, par.virtual_pipeline);
  shape.data = data_parallel_degree(s, shape.tensor, shape.pipeline, shape.context);
  shape.micro_batches = micro_batches_per_iteration(s, shape.data);
  shape.dense_shard_group = static_cast<double>(shape.data) * shape.context;
  // expert-DP = world / (t_e * e * p) = t * c * D / (t_e * e)
  shape.expert_shard_group = std::max(1.0, static_cast<double>(shape.tensor) * shape.dense_shard_group /
                                               (static_cast<double>(expert_tensor(par)) * shape.expert));
  shape.tokens = static_cast<double>(s.model.seq_length) / shape.context * s.training.micro_batch_size;
  shape.sequence_parallel = par.sequence_parallel && shape.tensor > 1;
  return shape;
}

// The layers one stage holds, over all its model chunks (Megatron's layer offsets, uneven first/last stages:
// get_transformer_layer_offset, as the workload places them).
struct StageLayers {
  std::vector<int> decoder;  // transformer layers
  std::vector<int> mtp;      // multi-token-prediction blocks (ids from num_layers on)
  bool any_moe(const ModelSpec& m) const {
    return std::any_of(decoder.begin(), decoder.end(), [&](int l) { return is_moe_layer(m, l); }) ||
           std::any_of(mtp.begin(), mtp.end(), [&](int l) { return is_moe_layer(m, l); });
  }
};

StageLayers stage_layers(const StageLayout& layout, int stage) {
  StageLayers layers;
  for (int chunk = 0; chunk < layout.chunks(); ++chunk) {
    const auto& l = layout.layers(stage, chunk);
    layers.decoder.insert(layers.decoder.end(), l.begin(), l.end());
    const auto& k = layout.mtp_layers(stage, chunk);
    layers.mtp.insert(layers.mtp.end(), k.begin(), k.end());
  }
  return layers;
}

// ---------------------------------------------------------------------------------------------------------------
// Model states of one rank of a stage.
RankParams stage_parameters(const Scenario& s, const JobShape& shape, const StageLayers& layers, int stage) {
  std::vector<int> param_layers = layers.decoder;
  param_layers.insert(param_layers.end(), layers.mtp.begin(), layers.mtp.end());
  return params_on_stage(s, stage, param_layers, static_cast<int>(layers.mtp.size()), stage == shape.pipeline - 1);
}

// One state (weights, gradients or optimizer) at `bytes_per_param`, divided over its data-parallel group when the
// framework shards it.
double state_bytes_on_rank(const RankParams& params, const JobShape& shape, double bytes_per_param, bool shard) {
  return params.dense * bytes_per_param / (shard ? shape.dense_shard_group : 1) +
         params.expert * bytes_per_param / (shard ? shape.expert_shard_group : 1);
}

// Transient full-precision-width copies the sharding frameworks materialise (DeepSpeed
// partitioned_param_coordinator.py, FSDP _runtime_utils.py / _fsdp_param_group.py):
//   DeepSpeed ZeRO-3 / FSDP FULL_SHARD: about two gather units live at once, 2 B each -> 4 B x largest unit;
//   FSDP SHARD_GRAD_OP: every unit's bf16 params stay gathered from forward to backward -> 2 B x all;
//   FSDP NO_SHARD with bf16 compute: a bf16 copy of the fp32 params -> 2 B x all.
double gathered_weight_bytes(const Scenario& s, const RankParams& params) {
  const ParallelSpec& par = s.parallelism;
  const bool low_precision = s.training.precision != Precision::FP32;
  if (par.framework == Framework::FSDP) {
    if (par.zero_stage >= 3) return 4 * params.largest_unit;
    if (low_precision) return 2 * (params.dense + params.expert);
    return 0;
  }
  return par.zero_stage >= 3 ? 4 * params.largest_unit : 0;
}

// Transformer Engine's quantized weights, under Megatron's FP8 and NVFP4 recipes (not its eager te.Linear stand-in,
// which quantizes on every call and keeps nothing). Bytes per element of what TE keeps for a linear weight, which
// both its forward and its dgrad GEMM read (transformer_engine/pytorch/module/base.py quantize_weight,
// _is_weight_workspace_valid):
//   FP8 (delayed, tensorwise): the FP8 data, 1 B, and its transpose, 1 B more, where the GPU's FP8 GEMMs take
//     only the TN layout (GpuSpec::fp8_gemms_take_any_layout);
//   MXFP8: a row-wise and a column-wise copy, each with one E8M0 scale per 32 elements, 2 + 2/32;
//   NVFP4: the same at 4 bits with one E4M3 scale per 16, 2 x (0.5 + 1/16).
double quantized_weight_bytes(const Scenario& s) {
  if (s.training.precision == Precision::FP4) return 2 * (0.5 + 1.0 / 16.0);
  if (s.training.fp8_recipe == Fp8Recipe::Mxfp8) return 2 + 2.0 / 32.0;
  return s.cluster.gpu.fp8_gemms_take_any_layout() ? 1 : 2;
}

bool transformer_engine_weights(const Scenario& s) {
  return s.parallelism.framework == Framework::Megatron && quantized_gemms(s.training.precision) &&
         s.training.fusion != Fusion::Eager;
}

// The linear weights of the stage that Transformer Engine quantizes: every layer's but those kept in BF16
// (training.bf16_layers_at_*), and MTP's eh_proj; not the embedding, the output layer, norms or the router.
RankParams quantized_linear_weights(const Scenario& s, const StageLayers& layers) {
  const ModelSpec& m = s.model;
  const int t = std::max(1, s.parallelism.tensor);
  const double expert_split = static_cast<double>(std::max(1, s.parallelism.expert)) * expert_tensor(s.parallelism);
  RankParams q;
  std::vector<int> ids = layers.decoder;
  ids.insert(ids.end(), layers.mtp.begin(), layers.mtp.end());
  for (int layer : ids) {
    if (s.training.keeps_bf16_linears(layer, m.num_layers)) continue;
    const LayerParams w = block_linear_weights(m, layer);
    q.dense += w.tp_sharded / t + w.replicated;
    q.expert += w.expert / expert_split;
  }
  return q;
}

// Weights: the training dtype's copy (sharded as the framework shards it) and the transient gathered copies; under
// Transformer Engine's quantized recipes also its quantized copy of the linear weights. Megatron passes
// is_first_microbatch, so TE casts each weight once per step into a workspace it keeps across steps (`_fp8_workspaces`,
// quantize_weight(cache=True)): quantized_weight_bytes beside the BF16 weight. With fp8_param_gather the linear
// weights are FP8 parameters themselves: the quantized bytes instead of the BF16 ones, no workspace.
double weight_bytes(const Scenario& s, const JobShape& shape, const StateBytes& bytes, const RankParams& params,
                    const StageLayers& layers) {
  double total =
      state_bytes_on_rank(params, shape, bytes.weight, bytes.shard_weight) + gathered_weight_bytes(s, params);
  if (!transformer_engine_weights(s)) return total;
  const RankParams q = quantized_linear_weights(s, layers);
  const double quantized = quantized_weight_bytes(s);
  if (s.training.fp8_param_gather)
    return total + state_bytes_on_rank(q, shape, quantized - bytes.weight, bytes.shard_weight);
  return total + state_bytes_on_rank(q, shape, quantized, false);
}

// FSDP under a pipeline (SHARD_GRAD_OP; the schedule turns gradient sync off for all but the last micro-batch:
// set_requires_gradient_sync(False)) accumulates each unit's unsharded gradient across micro-batches, upcast to the
// reduce dtype when it differs from the parameter dtype (FSDP2 unsharded_accumulated_grad, zero-fsdp.md §3.2), beside
// the fp32 shard the last micro-batch reduces into.
double accumulated_unsharded_grad_bytes(const Scenario& s, const RankParams& params) {
  const ParallelSpec& par = s.parallelism;
  // SHARD_GRAD_OP whose gradients go through the buckets (fsdp_layer_gathers 0): the pipelined case.
  if (par.framework != Framework::FSDP || par.zero_stage != 2 || fsdp_layer_gathers(par) != 0) return 0;
  return make_training_framework(Framework::FSDP)->grad_reduce_bytes(s) * (params.dense + params.expert);
}

double gradient_bytes(const Scenario& s, const JobShape& shape, const StateBytes& bytes, const RankParams& params) {
  return state_bytes_on_rank(params, shape, bytes.grad, bytes.shard_grad) + accumulated_unsharded_grad_bytes(s, params);
}

double optimizer_state_bytes(const JobShape& shape, const StateBytes& bytes, const RankParams& params) {
  return state_bytes_on_rank(params, shape, bytes.optimizer, bytes.shard_optimizer);
}

// ---------------------------------------------------------------------------------------------------------------
// Activations of one stage.

// Cross-entropy storage per logit, kept for backward (see last_stage_output_bytes). Megatron's and DeepSpeed's
// vocab-parallel cross-entropy keeps an fp32 softmax; FSDP's fused cross-entropy only the bf16 logits.
double cross_entropy_kept_bytes_per_logit(const Scenario& s) {
  return s.parallelism.framework != Framework::FSDP ? 4 : 2;
}

// The stage's vocabulary slice per TP rank (the padded vocabulary divided by TP).
double local_vocab(const Scenario& s, const JobShape& shape) {
  return static_cast<double>(padded_vocab_size(s.model.vocab_size, shape.tensor)) / shape.tensor;
}

// One micro-batch's activations on the stage, and its largest layer (which a recompute materialises once more).
struct MicroBatchActivations {
  double bytes = 0;
  double largest_layer = 0;
};

// Megatron's block method checkpoints the first `recomputed` layers of the stage
// (TransformerBlock.forward -> recompute.py checkpointed_forward): they keep only their input.
void add_decoder_layer_activations(const Scenario& s, const JobShape& shape, const std::vector<int>& decoder,
                                   int recomputed, MicroBatchActivations& acc) {
  const int n_layers = static_cast<int>(decoder.size());
  for (int i = 0; i < n_layers; ++i) {
    const double full = layer_bytes(s, decoder[static_cast<std::size_t>(i)], shape.tokens);
    acc.largest_layer = std::max(acc.largest_layer, full);
    acc.bytes += i < recomputed ? checkpoint_bytes(s, shape.tokens) : full;
  }
}

// MTP blocks (multi_token_prediction.py): their transformer layer, the enorm/hnorm inputs (2 B each), the
// concatenated eh_proj input (4h B) and the eh_proj output gathered over TP (2h B, whole under SP before the
// scatter: counted sharded), then the final-norm input, LM-head input and cross-entropy like the last stage's.
void add_mtp_block_activations(const Scenario& s, const JobShape& shape, const std::vector<int>& mtp,
                               MicroBatchActivations& acc) {
  const double h = static_cast<double>(s.model.hidden_size);
  const double sp_div = shape.sequence_parallel ? shape.tensor : 1;
  const double ce_kept = cross_entropy_kept_bytes_per_logit(s);
  const double vocab_local = local_vocab(s, shape);
  const double tokens = shape.tokens;
  for (int l : mtp) {
    const double full = layer_bytes(s, l, tokens);
    acc.largest_layer = std::max(acc.largest_layer, full);
    acc.bytes +=
        full + tokens * ((2 * h + 2 * h + 4 * h + 2 * h) / sp_div) + tokens * (4 * h / sp_div + ce_kept * vocab_local);
  }
}

// The dispatcher's send and receive buffers while an MoE layer runs (one layer, one micro-batch).
double moe_dispatch_bytes(const Scenario& s, const JobShape& shape, const StageLayers& layers) {
  return layers.any_moe(s.model) ? shape.tokens * moe_dispatch_buffer_bytes_per_token(s) : 0;
}

// First stage: the embedding dropout mask (Korthikanti §4.3), 1 B per element, GPT only.
double embedding_dropout_mask_bytes(const Scenario& s, const JobShape& shape, int stage, int held_micro_batches) {
  if (stage != 0 || !trains_with_dropout(s)) return 0;
  const double h = static_cast<double>(s.model.hidden_size);
  return held_micro_batches * shape.tokens * h / (shape.sequence_parallel ? shape.tensor : 1);
}

// Last stage (Korthikanti §4.3): final-norm input and LM-head input (2 B each, sharded under SP), and what the
// loss keeps per logit for backward plus a transient copy for the micro-batch being evaluated:
//   Megatron / DeepSpeed: the vocab-parallel cross-entropy keeps an fp32 softmax (4 B x V/t) and the bf16
//     logits exist while they are upcast (2 B) (tensor_parallel/cross_entropy.py, _VocabParallelCrossEntropy);
//   FSDP (llm-foundry): flash-attn's fused cross-entropy (ComposerMPTCausalLM's default loss_fn
//     'fused_crossentropy') keeps only the bf16 logits (2 B) and allocates a bf16 gradient in backward (2 B).
double last_stage_output_bytes(const Scenario& s, const JobShape& shape, int stage, int held_micro_batches) {
  if (stage != shape.pipeline - 1) return 0;
  const double h = static_cast<double>(s.model.hidden_size);
  const double ce_kept = cross_entropy_kept_bytes_per_logit(s), ce_transient = 2;
  const double vocab_local = local_vocab(s, shape);
  const double tokens = shape.tokens;
  return held_micro_batches * tokens * (4 * h / (shape.sequence_parallel ? shape.tensor : 1) + ce_kept * vocab_local) +
         tokens * ce_transient * vocab_local;
}

// PyTorch's context-parallel attention (framework fsdp with context > 1; layer_ops_cp.cpp): while one layer's
// backward runs, the all-gathered K and V of all c chunks (expanded to every query head by torchtitan's repeat_kv,
// in the training dtype), the fp32 dQ and dK/dV accumulators and the fp32 dK/dV send and receive buffers exist
// beside the saved activations.
double torch_context_parallel_bytes(const Scenario& s, const JobShape& shape) {
  if (s.parallelism.framework != Framework::FSDP || shape.context <= 1) return 0;
  const double q = shape.tokens * static_cast<double>(s.model.num_attention_heads) / shape.tensor *
                   static_cast<double>(head_dim(s.model));
  const double kv = 2 * q;
  return shape.context * kv * activation_bytes(s.training.precision) + 4 * (q + kv) + 2 * 4 * kv;
}

// Peak activation bytes of the stage: the micro-batches in flight under the schedule, then the transient terms in
// a fixed order (the sum is rounded step by step). Also fills the stage's activation counters.
double activation_bytes(const Scenario& s, const JobShape& shape, const StageLayers& layers, int stage,
                        StageMemory& mem) {
  const int n_layers = static_cast<int>(layers.decoder.size());
  const int recomputed = recomputed_layers_on_stage(s, stage, n_layers);
  MicroBatchActivations per_micro_batch;
  add_decoder_layer_activations(s, shape, layers.decoder, recomputed, per_micro_batch);
  add_mtp_block_activations(s, shape, layers.mtp, per_micro_batch);
  mem.layers = n_layers;
  mem.recomputed_layers = recomputed;
  mem.activations_per_micro_batch_gib = per_micro_batch.bytes / kGiB;
  const int chunks = chunks_in_flight(s, stage, shape.micro_batches);
  const int v = shape.virtual_pipeline;
  double activations = per_micro_batch.bytes * chunks / v;
  mem.in_flight_micro_batches = (chunks + v - 1) / v;
  // While a checkpointed layer is recomputed its full activations exist once more (one micro-batch).
  if (recomputed > 0) activations += per_micro_batch.largest_layer;
  activations += moe_dispatch_bytes(s, shape, layers);
  activations += torch_context_parallel_bytes(s, shape);
  activations += embedding_dropout_mask_bytes(s, shape, stage, mem.in_flight_micro_batches);
  // The loss's buffers belong to the last model chunk, whose forward the interleaved schedule follows at once with
  // its backward on the last rank (megatron.md §4.6: forward step (v-1)p + k and backward step k are the same chunk
  // and micro-batch there): one micro-batch's at a time.
  activations += last_stage_output_bytes(s, shape, stage, v > 1 ? 1 : mem.in_flight_micro_batches);
  return activations;
}

// DeepEP's NVLink and RDMA buffers (moe_dispatcher: flex): Megatron's DeepEP manager allocates them once per process
// for the expert-parallel group, sized by DeepEP's hints for the hidden size.
double deepep_bytes(const Scenario& s) {
  const ParallelSpec& par = s.parallelism;
  if (par.moe_dispatcher != MoeDispatcher::Flex || par.expert < 2 || !s.model.moe.enabled()) return 0;
  return deepep_buffer_bytes(s.model.hidden_size * 2, par.expert, kDeepEpSms);
}

// Transformer Engine's userbuffers (tp_comm_overlap; transformer_engine/pytorch/module/base.py initialize_ub):
// one communication buffer per overlapped GEMM, 10 by default (ring exchange qkv_fprop, fc1_fprop, proj_dgrad,
// fc2_dgrad; pipeline proj_fprop, fc2_fprop; bulk qkv_dgrad, qkv_wgrad, fc1_dgrad, fc1_wgrad), each of the shape
// Megatron passes, [s x b / c, h], in bf16; under FP8 the six all-gather buffers (layers_all_gather_overlap) are
// FP8, 1 B. Allocated once, for the job.
double userbuffers_bytes(const Scenario& s) {
  const ParallelSpec& par = s.parallelism;
  if (!par.tp_comm_overlap || par.tensor <= 1 || par.framework != Framework::Megatron) return 0;
  const double tokens = static_cast<double>(s.model.seq_length) * static_cast<double>(s.training.micro_batch_size) /
                        std::max(1, par.context);
  const double buffer = tokens * static_cast<double>(s.model.hidden_size);
  const double gather_bytes = s.training.precision == Precision::FP8 ? 1.0 : 2.0;
  return buffer * (6 * gather_bytes + 4 * 2.0);
}

// ---------------------------------------------------------------------------------------------------------------
// Everything else: the fixed allowance, NCCL's buffers, fragmentation, DeepSpeed's gradient bucket, DeepEP's buffers,
// Transformer Engine's userbuffers.
double other_gib(const Scenario& s, const JobShape& shape, double activations_gib) {
  const double nccl = communicators(s, shape.data) * kNcclChannels * kNcclBytesPerChannel;
  return kContextGiB + kWorkspaceGiB + nccl / kGiB + kFragmentation * activations_gib +
         deepspeed_bucket_bytes(s) / kGiB + deepep_bytes(s) / kGiB + userbuffers_bytes(s) / kGiB;
}

StageMemory stage_memory(const Scenario& s, const JobShape& shape, const StateBytes& bytes, const StageLayout& layout,
                         int stage) {
  const StageLayers layers = stage_layers(layout, stage);
  const RankParams params = stage_parameters(s, shape, layers, stage);
  StageMemory mem;
  mem.stage = stage;
  const double activations = activation_bytes(s, shape, layers, stage, mem);
  mem.weights_gib = weight_bytes(s, shape, bytes, params, layers) / kGiB;
  mem.grads_gib = gradient_bytes(s, shape, bytes, params) / kGiB;
  mem.optimizer_gib = optimizer_state_bytes(shape, bytes, params) / kGiB;
  mem.activations_gib = activations / kGiB;
  mem.other_gib = other_gib(s, shape, mem.activations_gib);
  return mem;
}

}  // namespace

std::vector<StageMemory> estimate_memory(const Scenario& s) {
  const JobShape shape = job_shape(s);
  const StateBytes bytes = state_bytes(s);
  const StageLayout layout(s);
  std::vector<StageMemory> out;
  out.reserve(static_cast<std::size_t>(shape.pipeline));
  for (int stage = 0; stage < shape.pipeline; ++stage) out.push_back(stage_memory(s, shape, bytes, layout, stage));
  return out;
}

}  // namespace trainsim
