// Cross-block checks of a training job. The rules are Megatron-LM's own assertions
// (Megatron-LM megatron/training/arguments.py validate_args, megatron/core/parallel_state.py)
// unless a comment says otherwise, so a scenario that passes here is one Megatron would start.
#include "collective/deepep_buffers.hpp"
#include "core/error.hpp"
#include "scenario/validation.hpp"

namespace trainsim::scenario_detail {

namespace {

struct Checker {
  const Scenario& s;
  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw ScenarioError(s.file, key, message);
  }
};

// World size = tensor x pipeline x context x data (experts are carved out of data x context).
void resolve_data_parallel(Scenario& s, const Checker& c) {
  ParallelSpec& p = s.parallelism;
  const std::string product =
      "tensor " + str(p.tensor) + " x pipeline " + str(p.pipeline) + " x context " + str(p.context);
  // Each factor is below 2^31, so the product of three can overflow 64 bits; compare it in floating
  // point first, after which the integer product is known to be at most num_gpus.
  if (static_cast<double>(p.tensor) * p.pipeline * p.context > s.cluster.num_gpus)
    c.fail("cluster.num_gpus", "num_gpus " + str(s.cluster.num_gpus) + " is fewer than " + product);
  const std::int64_t model_parallel = static_cast<std::int64_t>(p.tensor) * p.pipeline * p.context;
  if (p.data > 0) {
    if (model_parallel * p.data != s.cluster.num_gpus)
      c.fail("parallelism.data", "num_gpus " + str(s.cluster.num_gpus) + " is not " + product + " x data " +
                                     str(p.data) + " = " + str(model_parallel * p.data));
    return;
  }
  if (s.cluster.num_gpus % model_parallel != 0)
    c.fail("cluster.num_gpus",
           "num_gpus " + str(s.cluster.num_gpus) + " is not divisible by " + product + " = " + str(model_parallel));
  p.data = static_cast<int>(s.cluster.num_gpus / model_parallel);
}

// Sequence parallelism and TP communication overlap act on the tensor-parallel group; with
// tensor 1 there is nothing to act on. Megatron then turns sequence_parallel off ("Disabling
// sequence parallelism because tensor model parallelism is disabled"); tp_comm_overlap is turned
// off too rather than rejected, so a sweep over tensor sizes can keep both flags on.
void normalise_flags(Scenario& s) {
  // DeepSpeed's config validator: overlap_comm defaults to true for ZeRO-3, false for stages 0-2
  // (DeepSpeed deepspeed/runtime/zero/config.py::DeepSpeedZeroConfig).
  DeepSpeedSpec& ds = s.parallelism.deepspeed;
  if (s.parallelism.framework == Framework::DeepSpeed && !ds.overlap_comm)
    ds.overlap_comm = s.parallelism.zero_stage == 3;
  if (s.parallelism.tensor == 1) {
    s.parallelism.sequence_parallel = false;
    s.parallelism.tp_comm_overlap = false;
  }
}

// parallelism.expert_tensor when not given: Megatron's default (--expert-tensor-parallel-size = tensor). When that
// leaves no valid expert layout (expert must then divide data x context) but expert_tensor 1 does (MoE parallel
// folding: the expert groups span the tensor ranks too), 1 is taken, as every published folding recipe sets it
// (Megatron-Bridge / NeMo DeepSeek-V3, Qwen3-MoE, Moonlight: expert_tensor_parallel_size = 1), and the report
// says so. Anything else is left to check_experts to reject with the numbers.
void resolve_expert_tensor(Scenario& s) {
  ParallelSpec& p = s.parallelism;
  if (p.expert_tensor != 0) return;
  p.expert_tensor = p.tensor;
  if (!s.model.moe.enabled() || p.tensor == 1) return;
  const std::int64_t stage = static_cast<std::int64_t>(p.tensor) * p.context * p.data;
  if (stage % (static_cast<std::int64_t>(p.tensor) * p.expert) == 0) return;
  if (stage % p.expert != 0) return;
  p.expert_tensor = 1;
  s.inferred.push_back({"parallelism.expert_tensor", "1",
                        "not given; Megatron's default (= tensor " + str(p.tensor) + ") leaves expert " +
                            str(p.expert) +
                            " not dividing data x context = " + str(static_cast<std::int64_t>(p.data) * p.context) +
                            ", so the expert groups fold over the tensor ranks (MoE parallel folding, as the "
                            "published recipes set it)"});
}

// training.fusion: auto on an FSDP job means eager PyTorch kernels (docs/compute-model.md §1.3a); the report says
// so, since it prices the layer's memory-bound work several times over what fused kernels take.
void note_eager_fusion(Scenario& s) {
  if (s.training.fusion != Fusion::Auto || !eager_pytorch(s)) return;
  s.inferred.push_back({"training.fusion", "eager",
                        "not given; framework fsdp runs a plain PyTorch model, one kernel per op (norms, activations, "
                        "attention layout); set fused for torch.compile or Transformer Engine layers"});
}

// training.recompute: selective on an FSDP job without recompute_modules prices Megatron's core-attention recompute;
// a PyTorch job's selective checkpointing is usually another policy (torchtitan's per-op one re-runs matmuls, not
// attention), so the report names what was priced and the key for torchtitan's.
void note_fsdp_selective_recompute(Scenario& s) {
  if (s.parallelism.framework != Framework::FSDP || s.training.recompute != RecomputeGranularity::Selective ||
      s.training.recompute_modules_given)
    return;
  s.inferred.push_back({"training.recompute_modules", "[core_attn]",
                        "not given; selective prices Megatron's core-attention recompute. torchtitan's per-op "
                        "checkpointing (selective_ac_option \"op\") is recompute_modules: [torchtitan_op]"});
}

// parallelism.zero_stage on an FSDP job: the default (1, Megatron's distributed optimizer) means NO_SHARD there,
// where PyTorch and Composer default to FULL_SHARD; the report says so rather than let it pass unseen.
void note_fsdp_sharding(Scenario& s) {
  const ParallelSpec& p = s.parallelism;
  if (p.framework != Framework::FSDP || p.zero_stage_given) return;
  s.inferred.push_back({"parallelism.zero_stage", str(p.zero_stage),
                        "not given; for framework fsdp 0 and 1 are NO_SHARD (parameters, gradients and optimizer "
                        "state replicated, gradients all-reduced); set 3 for FULL_SHARD (PyTorch's and Composer's "
                        "default) or 2 for SHARD_GRAD_OP"});
}

// cluster.scale_up.job_gpus_per_domain: auto left part of each domain idle (a scheduler's segment placement);
// the report says so, since it decides which parallel groups stay on the scale-up fabric.
void note_job_placement(Scenario& s) {
  const ScaleUpSpec& u = s.cluster.scale_up;
  if (!u.job_placement_auto || u.domain_size == u.hardware_domain_size) return;
  const int node = s.cluster.gpus_per_node, job_nodes = s.cluster.num_gpus / node;
  s.inferred.push_back({"cluster.scale_up.job_gpus_per_domain", str(u.domain_size),
                        "not given; the job's " + str(job_nodes) + " nodes fill " +
                            str(s.cluster.num_gpus / u.domain_size) + " domains of " + str(u.domain_size / node) +
                            " nodes (of " + str(u.hardware_domain_size / node) +
                            " each), the largest even split, as Slurm's --segment places them in NVIDIA's launch "
                            "scripts; set " +
                            str(u.hardware_domain_size) + " to fill each domain in turn"});
}

void check_tensor_split(const Scenario& s, const Checker& c) {
  const ModelSpec& m = s.model;
  const int t = s.parallelism.tensor;
  const auto divisible = [&](std::int64_t value, const std::string& what) {
    if (value % t != 0)
      c.fail("parallelism.tensor", what + " " + str(value) + " is not divisible by parallelism.tensor " + str(t));
  };
  divisible(m.num_attention_heads, "model.num_attention_heads");
  divisible(m.num_query_groups, "model.num_query_groups");
  // Column-parallel linears split their output columns over the TP ranks (megatron/core/utils.py divide()).
  divisible(m.ffn_hidden_size, "model.ffn_hidden_size");
  // Routed experts split over expert_tensor (check_experts); shared experts are a TP-split MLP.
  if (m.moe.enabled() && m.moe.shared_experts > 0)
    divisible(m.moe.shared_experts * m.moe.expert_ffn_hidden_size,
              "shared-expert width (model.moe.shared_experts x "
              "expert_ffn_hidden_size)");
}

void check_sequence_split(const Scenario& s, const Checker& c) {
  const ParallelSpec& p = s.parallelism;
  const std::int64_t seq = s.model.seq_length;
  if (p.context > 1) {
    // Megatron's context parallelism balances causal attention by cutting the sequence into
    // 2 x context chunks (zig-zag) and giving each rank one from each end.
    if (seq % (2 * static_cast<std::int64_t>(p.context)) != 0)
      c.fail("parallelism.context",
             "model.seq_length " + str(seq) + " is not divisible by 2 x context " + str(p.context) +
                 " (load-balanced context parallelism cuts the sequence into 2 x context chunks)");
    // Ring attention is Transformer Engine's fused/flash attention (TE context_parallel.py); Megatron's local
    // unfused attention has no context-parallel path.
    if (!s.training.flash_attention)
      c.fail("parallelism.context",
             "context " + str(p.context) +
                 " needs training.flash_attention: true (ring attention runs in the fused attention kernel)");
  }
  // Ring attention passes whole KV chunks around the ring; which of them a sliding window skips depends on the
  // window's reach across chunks, which trainsim does not model.
  if (p.context > 1 && s.model.sliding_window && *s.model.sliding_window < seq)
    c.fail("model.sliding_window", "sliding_window " + str(*s.model.sliding_window) + " with context " +
                                       str(p.context) +
                                       " is not modelled (ring attention over a windowed sequence); use context 1");
  if (!s.training.flash_attention && s.training.attention_kernel != AttentionKernel::Auto)
    c.fail("training.attention_kernel", std::string("attention_kernel ") + to_string(s.training.attention_kernel) +
                                            " is a fused attention kernel; it needs training.flash_attention: true");
  if (p.sequence_parallel) {
    const std::int64_t per_rank = seq / p.context;  // sequence each context rank holds
    if (per_rank % p.tensor != 0)
      c.fail("parallelism.sequence_parallel", "sequence parallelism splits the " + str(per_rank) +
                                                  " tokens of each context rank over tensor " + str(p.tensor) +
                                                  ", which does not divide them");
  }
  if (p.tp_comm_overlap && !p.sequence_parallel)
    c.fail("parallelism.tp_comm_overlap", "tp_comm_overlap needs parallelism.sequence_parallel: true");
  if (p.param_gather_in_zero_grad &&
      !(p.framework == Framework::Megatron && p.zero_stage == 1 && p.overlap_param_gather))
    c.fail("parallelism.param_gather_in_zero_grad",
           "it moves where Megatron's distributed optimizer starts its overlapped parameter all-gather: it needs "
           "framework megatron, zero_stage 1 and overlap_param_gather: true");
  if (p.fsdp_version != 1 && p.framework != Framework::FSDP)
    c.fail("parallelism.fsdp_version",
           "it says which PyTorch FSDP API a framework fsdp job uses; this job's framework is " +
               std::string(to_string(p.framework)));
  if (p.param_gather_in_zero_grad && p.virtual_pipeline > 1)
    c.fail("parallelism.param_gather_in_zero_grad",
           "the interleaved schedule starts its parameter all-gathers itself (align_param_gather), in every "
           "Megatron-Core release: the key only applies without virtual_pipeline");
  // A PyTorch job's TP comm overlap is async TP, an Inductor pass (torch/_inductor/fx_passes/micro_pipeline_tp.py)
  // that only a compiled model runs; torchtitan refuses enable_async_tensor_parallel without compile.
  if (p.tp_comm_overlap && p.framework == Framework::FSDP && eager_pytorch(s))
    c.fail("parallelism.tp_comm_overlap",
           "for framework fsdp this is async tensor parallelism, a torch.compile pass; an eager PyTorch model "
           "(training.fusion eager, the fsdp default) cannot run it: set training.fusion: fused");
}

// Mixture of experts (megatron/training/arguments.py, core/model_parallel_config.py,
// parallel_state.py::RankGenerator). The expert view of the ranks is
// world = expert_tensor x expert x expert-data x pipeline, so expert_tensor x expert must divide the
// tensor x context x data ranks of a pipeline stage.
// moe_dispatcher: flex is Megatron's MoEFlexTokenDispatcher on DeepEP's normal kernels (deepseek-ai/DeepEP): what
// either refuses, and what trainsim prices (docs/moe.md).
void check_flex_dispatcher(const Scenario& s, const Checker& c) {
  const ParallelSpec& p = s.parallelism;
  const std::string flex = "moe_dispatcher flex (DeepEP)";
  if (p.expert < 2)
    c.fail("parallelism.moe_dispatcher",
           flex + " needs expert > 1 (Megatron: \"Flex token dispatcher requires EP > 1\")");
  if (p.expert_tensor != 1)
    c.fail("parallelism.expert_tensor", flex +
                                            " is modelled over an expert-parallel group with expert_tensor 1 (as the "
                                            "published DeepEP recipes set it); got expert_tensor " +
                                            str(p.expert_tensor));
  if (s.model.moe.capacity_factor)
    c.fail("model.moe.capacity_factor",
           flex +
               " is dropless: Megatron refuses capacity padding with the flex dispatcher "
               "(\"Flex token dispatcher does not support --moe-pad-expert-input-to-capacity\"); remove the key");
  const GpuSpec& gpu = s.cluster.gpu;
  if (gpu.vendor != "NVIDIA" || (gpu.sm_version / 10 != 8 && gpu.sm_version / 10 != 9))
    c.fail("parallelism.moe_dispatcher", flex +
                                             " runs on NVIDIA Ampere and Hopper GPUs (Megatron-Bridge enables it "
                                             "on compute capability 8.x and 9.x only); " +
                                             gpu.name + " is " + (gpu.vendor.empty() ? "of no vendor" : gpu.vendor) +
                                             " sm " + str(gpu.sm_version));
  if (!deepep_supports(p.expert)) {
    std::string sizes;
    for (const int r : deepep_supported_ranks()) sizes += (sizes.empty() ? "" : ", ") + str(r);
    c.fail("parallelism.expert", flex + " has configs for expert-parallel groups of " + sizes +
                                     " ranks (DeepEP's get_dispatch_config: \"Unsupported number of EP ranks\"); got " +
                                     str(p.expert));
  }
  // DeepEP's internode kernels take 8 NVLink peers per node (NUM_MAX_NVL_PEERS); below that the group is one node.
  const int per_node = s.cluster.gpus_per_node;
  const bool one_node = p.expert <= per_node;
  if (!one_node && (per_node != 8 || p.expert % 8 != 0))
    c.fail("parallelism.moe_dispatcher", flex +
                                             " across nodes needs 8 GPUs per node and expert a multiple of 8 "
                                             "(DeepEP's internode kernels: 8 NVLink peers per node); got expert " +
                                             str(p.expert) + " over nodes of " + str(per_node) + " GPUs");
  if (one_node && per_node % p.expert != 0)
    c.fail("parallelism.moe_dispatcher", flex + ": expert " + str(p.expert) + " does not divide the " + str(per_node) +
                                             " GPUs of a node, so its groups would straddle nodes");
}

void check_experts(const Scenario& s, const Checker& c) {
  const ParallelSpec& p = s.parallelism;
  const MoeSpec& moe = s.model.moe;
  if (!moe.enabled()) {
    if (p.expert != 1)
      c.fail("parallelism.expert", "expert " + str(p.expert) + " needs an MoE model (model.moe.num_experts > 0)");
    if (p.expert_tensor != p.tensor)
      c.fail("parallelism.expert_tensor",
             "expert_tensor " + str(p.expert_tensor) + " needs an MoE model (model.moe.num_experts > 0)");
    return;
  }
  // Only Megatron-Core's MoE layer (router, token dispatcher, grouped experts) is modelled.
  if (p.framework != Framework::Megatron)
    c.fail("parallelism.framework",
           std::string("model.moe is simulated with Megatron-Core's MoE layer only; framework ") +
               to_string(p.framework) +
               " (DeepSpeed-MoE / FSDP expert parallelism) is not "
               "modelled: use framework megatron");
  if (moe.num_experts % p.expert != 0)
    c.fail("parallelism.expert",
           "model.moe.num_experts " + str(moe.num_experts) + " is not divisible by expert " + str(p.expert));
  // "When using MoE and tensor parallelism, sequence parallelism must be used."
  if (p.tensor > 1 && !p.sequence_parallel)
    c.fail("parallelism.sequence_parallel", "an MoE model with tensor " + str(p.tensor) +
                                                " needs sequence_parallel: true (Megatron: \"When using MoE and tensor "
                                                "parallelism, sequence parallelism must be used\")");
  // "Expert parallelism is not supported with fp16 training."
  if (p.expert > 1 && s.training.precision == Precision::FP16)
    c.fail("training.precision", "expert " + str(p.expert) +
                                     ": Megatron does not support expert parallelism with fp16 "
                                     "training; use bf16");
  const std::int64_t stage = static_cast<std::int64_t>(p.tensor) * p.context * p.data;
  const std::int64_t expert_ranks = static_cast<std::int64_t>(p.expert_tensor) * p.expert;
  if (stage % expert_ranks != 0) {
    if (p.expert_tensor == p.tensor) {  // the common case reads in the dense group's terms
      const std::int64_t dp_cp = static_cast<std::int64_t>(p.data) * p.context;
      // MoE parallel folding (parallel_state.py: the expert generator tp=t_e, ep=e, dp=D_e over the same ranks):
      // expert groups may span tensor x context x data, but with expert_tensor = tensor (Megatron's default for
      // --expert-tensor-parallel-size) that still leaves expert dividing data x context.
      c.fail("parallelism.expert",
             "expert " + str(p.expert) + " does not divide data " + str(p.data) + " x context " + str(p.context) +
                 " = " + str(dp_cp) + " (with expert_tensor = tensor " + str(p.tensor) +
                 ", Megatron's default; expert groups may also span the tensor "
                 "ranks when parallelism.expert_tensor x expert divides tensor x context x data = " +
                 str(stage) + ")");
    }
    c.fail("parallelism.expert_tensor", "expert_tensor " + str(p.expert_tensor) + " x expert " + str(p.expert) + " = " +
                                            str(expert_ranks) + " does not divide tensor " + str(p.tensor) +
                                            " x context " + str(p.context) + " x data " + str(p.data) + " = " +
                                            str(stage) + " (the expert ranks of a pipeline stage)");
  }
  if (p.moe_dispatcher == MoeDispatcher::Flex) check_flex_dispatcher(s, c);
  // Expert fc1/fc2 are split over expert-TP (their output columns / input rows), shared experts over TP.
  if (moe.expert_ffn_hidden_size % p.expert_tensor != 0)
    c.fail(p.expert_tensor == p.tensor ? "parallelism.tensor" : "parallelism.expert_tensor",
           "model.moe.expert_ffn_hidden_size " + str(moe.expert_ffn_hidden_size) + " is not divisible by " +
               (p.expert_tensor == p.tensor ? "parallelism.tensor " : "parallelism.expert_tensor ") +
               str(p.expert_tensor));
}

void check_batch(const Scenario& s, const Checker& c) {
  const std::int64_t per_step = static_cast<std::int64_t>(s.training.micro_batch_size) * s.parallelism.data;
  if (s.training.global_batch_size % per_step != 0)
    c.fail("training.global_batch_size",
           "global_batch_size " + str(s.training.global_batch_size) + " is not divisible by micro_batch_size " +
               str(s.training.micro_batch_size) + " x data " + str(s.parallelism.data) + " = " + str(per_step));
}

// fp4 is Transformer Engine's NVFP4 recipe, which trains on NVIDIA Blackwell only (TE nvfp4.rst: "Training: SM 10.0,
// SM 10.3"); an FP4 peak elsewhere (AMD CDNA4's MXFP4) has no training recipe trainsim models.
bool trains_fp4(const GpuSpec& gpu) {
  return gpu.supports(Precision::FP4) && gpu.vendor == "NVIDIA" && gpu.architecture == "blackwell";
}

void check_precision(const Scenario& s, const Checker& c) {
  const GpuSpec& gpu = s.cluster.gpu;
  const Precision want = s.training.precision;
  if (want == Precision::FP4 ? trains_fp4(gpu) : gpu.supports(want)) return;
  std::vector<std::string> supported;
  for (Precision p :
       {Precision::BF16, Precision::FP16, Precision::FP8, Precision::FP4, Precision::TF32, Precision::FP32})
    if (p == Precision::FP4 ? trains_fp4(gpu) : gpu.supports(p)) supported.emplace_back(to_string(p));
  std::string message = gpu.name + " does not support " + to_string(want);
  if (want == Precision::FP4 && gpu.supports(Precision::FP4))
    message +=
        " training (its FP4 peak is there, but trainsim's fp4 is Transformer Engine's NVFP4 recipe, which "
        "trains on NVIDIA Blackwell only)";
  else if (want == Precision::FP4)
    message += " (fp4 is Transformer Engine's NVFP4 recipe: NVIDIA Blackwell GPUs with an FP4 peak)";
  if (!supported.empty()) {
    message += "; it supports ";
    for (std::size_t i = 0; i < supported.size(); ++i) message += (i ? ", " : "") + supported[i];
  }
  // Pre-Ampere GPUs (V100) train in fp16 with loss scaling instead of bf16.
  if (want == Precision::BF16 && gpu.supports(Precision::FP16)) message += "; use training.precision: fp16";
  c.fail("training.precision", message);
}

// Megatron's --optimizer takes adam or sgd (arguments.py); LAMB is DeepSpeed's (FusedLamb) or apex's under PyTorch.
void check_optimizer(const Scenario& s, const Checker& c) {
  if (s.training.optimizer == Optimizer::Lamb && s.parallelism.framework == Framework::Megatron)
    c.fail("training.optimizer",
           "lamb is not one of Megatron's optimizers (--optimizer adam | sgd); use adam or sgd, "
           "or framework deepspeed or fsdp");
  const OptimizerImplementation impl = s.training.optimizer_implementation;
  if (impl == OptimizerImplementation::Auto || impl == OptimizerImplementation::Fused) return;
  const char* what = impl == OptimizerImplementation::Foreach   ? "foreach"
                     : impl == OptimizerImplementation::ForLoop ? "for_loop"
                                                                : "decoupled_adamw";
  if (impl == OptimizerImplementation::DecoupledAdamW && s.training.optimizer != Optimizer::Adam)
    c.fail("training.optimizer_implementation",
           "decoupled_adamw is Composer's DecoupledAdamW, an Adam: set training.optimizer adam (or for_loop for "
           "another optimizer written as a loop)");
  if (s.parallelism.framework == Framework::Megatron)
    c.fail("training.optimizer_implementation",
           std::string(what) +
               ": Megatron's optimizers are Transformer Engine's or Apex's fused multi-tensor kernels "
               "(FusedAdam, FusedSGD); use fused or auto");
  if (s.training.optimizer == Optimizer::Lamb)
    c.fail("training.optimizer_implementation",
           std::string(what) +
               ": LAMB exists only as fused kernels (DeepSpeed's and Apex's FusedLamb); use fused or auto");
}

// training.optimizer_implementation auto: what each framework's usual optimizer is. Megatron's FusedAdam, DeepSpeed's
// FusedAdam (its default unless torch_adam), and PyTorch's torch.optim.AdamW under FSDP, which runs foreach on CUDA
// unless fused=True is passed; the report says so for fsdp, where it prices the update three times the bytes.
void resolve_optimizer_implementation(Scenario& s) {
  OptimizerImplementation& impl = s.training.optimizer_implementation;
  if (impl != OptimizerImplementation::Auto) return;
  if (s.parallelism.framework != Framework::FSDP || s.training.optimizer == Optimizer::Lamb) {
    impl = OptimizerImplementation::Fused;
    return;
  }
  impl = OptimizerImplementation::Foreach;
  s.inferred.push_back({"training.optimizer_implementation", "foreach",
                        "not given; torch.optim's default on CUDA: each elementwise op of the update one multi-tensor "
                        "kernel (set fused for fused=True, as torchtitan sets it since 2025)"});
}

// Megatron's --grad-reduce-in-bf16 acts in its bf16 branch (arguments.py: it turns accumulate_allreduce_grads_in_fp32
// off); fp16 recipes reduce in fp16 already and fp32 ones in fp32, and DeepSpeed reduces in the training dtype
// already: the key would change nothing there, so it is refused rather than ignored.
void check_grad_reduce_dtype(const Scenario& s, const Checker& c) {
  if (!s.training.grad_reduce_in_bf16) return;
  const Precision p = s.training.precision;
  if (p != Precision::BF16 && !quantized_gemms(p))
    c.fail("training.grad_reduce_in_bf16", std::string("needs training.precision bf16, fp8 or fp4 (gradients of ") +
                                               to_string(p) + " training are not reduced in fp32 to begin with)");
  if (s.parallelism.framework == Framework::DeepSpeed)
    c.fail("training.grad_reduce_in_bf16",
           "framework deepspeed reduces gradients in the training dtype already; the key applies to megatron and "
           "fsdp");
}

// Megatron's --first-last-layers-bf16 enters a quantization context per layer: its FP8 delayed scaling (trainsim's
// fp8) refuses it ("Delayed scaling does not support first / last layer in BF16", transformer_config.py), bf16 and
// fp16 have nothing to keep, and only Megatron has the flags. Keeping every layer in BF16 is training.precision bf16.
void check_bf16_layers(const Scenario& s, const Checker& c) {
  const TrainingSpec& t = s.training;
  for (const auto& [key, n] : {std::pair<const char*, int>{"training.bf16_layers_at_start", t.bf16_layers_at_start},
                               std::pair<const char*, int>{"training.bf16_layers_at_end", t.bf16_layers_at_end}}) {
    if (n == 0) continue;
    if (t.precision == Precision::FP8)
      c.fail(key,
             "Megatron's FP8 delayed scaling (training.precision fp8) does not support first / last layers in "
             "BF16; the key applies to fp4");
    else if (t.precision != Precision::FP4)
      c.fail(key, std::string("keeps layers in BF16 under training.precision fp4; with ") + to_string(t.precision) +
                      " there is no quantized layer to keep");
    if (s.parallelism.framework != Framework::Megatron)
      c.fail(key, "is Megatron's --first-last-layers-bf16; framework " +
                      std::string(to_string(s.parallelism.framework)) + " has no such setting");
  }
  const int layers = s.model.num_layers;
  if (t.bf16_layers_at_start + t.bf16_layers_at_end >= layers && t.bf16_layers_at_start + t.bf16_layers_at_end > 0)
    c.fail(t.bf16_layers_at_end > 0 ? "training.bf16_layers_at_end" : "training.bf16_layers_at_start",
           "bf16_layers_at_start " + str(t.bf16_layers_at_start) + " + bf16_layers_at_end " +
               str(t.bf16_layers_at_end) + " keep all " + str(layers) + " layers in BF16; use training.precision bf16");
}

// training.fp8_recipe acts under fp8 only (its default, delayed, is accepted anywhere as writing a default changes
// nothing); MXFP8 needs Blackwell's block-scaled tensor cores (TE: SM 10.0+).
void check_fp8_recipe(const Scenario& s, const Checker& c) {
  const TrainingSpec& t = s.training;
  if (t.fp8_recipe == Fp8Recipe::Delayed) return;
  if (t.precision != Precision::FP8) {
    c.fail("training.fp8_recipe",
           std::string("the scaling recipe applies to training.precision fp8 only; precision is ") +
               to_string(t.precision));
    return;
  }
  const GpuSpec& gpu = s.cluster.gpu;
  if (t.fp8_recipe == Fp8Recipe::Mxfp8 && !(gpu.vendor == "NVIDIA" && gpu.architecture == "blackwell"))
    c.fail("training.fp8_recipe", "mxfp8 needs NVIDIA Blackwell's block-scaled FP8 GEMMs; " + gpu.name +
                                      " is not one (use delayed or tensorwise)");
}

// Megatron's --fp8-param-gather makes FP8 parameters of Transformer Engine's linears, which only its FP8 recipes
// have, and arguments.py asserts the distributed optimizer (or an FSDP) for it; framework fsdp and deepspeed have
// no such flag. Refused rather than ignored.
void check_fp8_param_gather(const Scenario& s, const Checker& c) {
  if (!s.training.fp8_param_gather || !s.training.fp8_param_gather_given) return;
  const ParallelSpec& p = s.parallelism;
  if (s.training.precision != Precision::FP8)
    c.fail("training.fp8_param_gather", std::string("needs training.precision fp8 (FP8 parameters); precision is ") +
                                            to_string(s.training.precision));
  if (p.framework != Framework::Megatron)
    c.fail("training.fp8_param_gather", std::string("is Megatron's --fp8-param-gather; framework ") +
                                            to_string(p.framework) + " has no FP8 parameters");
  else if (p.zero_stage < 1)
    c.fail("training.fp8_param_gather",
           "needs the distributed optimizer (parallelism.zero_stage >= 1), as Megatron's --fp8-param-gather does");
  if (s.training.fusion == Fusion::Eager)
    c.fail("training.fp8_param_gather",
           "needs Megatron's Transformer Engine layers; training.fusion eager swaps in te.Linear modules that keep "
           "BF16 weights");
}

// training.fp8_param_gather not given: on where Megatron takes --fp8-param-gather, as NeMo's and Megatron-Bridge's
// FP8 recipes (bf16_with_fp8_mixed: fp8_param_gather = True) and Megatron's own FP8 examples
// (examples/llama/train_llama3_8b_h100_fp8.sh) run; said in the report.
void resolve_fp8_param_gather(Scenario& s) {
  TrainingSpec& t = s.training;
  if (t.fp8_param_gather_given) return;
  const ParallelSpec& p = s.parallelism;
  t.fp8_param_gather = t.precision == Precision::FP8 && p.framework == Framework::Megatron && p.zero_stage >= 1 &&
                       t.fusion != Fusion::Eager;
  if (t.fp8_param_gather)
    s.inferred.push_back({"training.fp8_param_gather", "true",
                          "not given; FP8 parameters, as NeMo's and Megatron-Bridge's FP8 recipes and Megatron's FP8 "
                          "examples run (--fp8-param-gather); false keeps BF16 weights with Transformer Engine's "
                          "cached FP8 copies beside them"});
}

void check_sharding(const Scenario& s, const Checker& c) {
  const ParallelSpec& p = s.parallelism;
  if (p.pipeline == 1) return;
  // DeepSpeed's PipelineEngine asserts "ZeRO-2 and ZeRO-3 are incompatible with pipeline parallelism".
  if (p.framework == Framework::DeepSpeed && p.zero_stage >= 2)
    c.fail("parallelism.zero_stage", "zero_stage " + str(p.zero_stage) +
                                         " is incompatible with pipeline parallelism in DeepSpeed (pipeline " +
                                         str(p.pipeline) + "); use zero_stage 0 or 1");
  // FULL_SHARD would re-gather every parameter for each micro-batch of each stage; torchtitan's
  // parallelize step therefore applies FSDP with reshard_after_forward=False (SHARD_GRAD_OP)
  // whenever pipeline parallelism is on, and trainsim rejects the combination rather than guess.
  if (p.framework == Framework::FSDP && p.zero_stage == 3)
    c.fail("parallelism.zero_stage", "zero_stage 3 (FULL_SHARD) with pipeline " + str(p.pipeline) +
                                         " is not supported for fsdp; use zero_stage 2 (SHARD_GRAD_OP)");
}

// Megatron places the tensor-parallel ranks next to each other so that their per-layer collectives stay on the
// scale-up fabric (NVLink); a tensor group wider than the scale-up domain runs, but those collectives cross the
// scale-out network at NIC speed, usually a large slowdown the user did not intend.
void warn_tensor_beyond_scale_up(Scenario& s) {
  const int t = s.parallelism.tensor, domain = s.cluster.scale_up.domain_size;
  if (t <= domain) return;
  s.warnings.push_back(
      {"parallelism.tensor", "tensor " + str(t) + " is larger than the scale-up domain (cluster.scale_up.domain_size " +
                                 str(domain) +
                                 "): every layer's tensor-parallel collectives cross the scale-out network "
                                 "at NIC speed instead of the scale-up fabric"});
}

// Megatron-FSDP (zero_stage 2 and 3 under framework megatron) shards gradients and parameters: the memory model
// holds that, but the iteration is timed with the distributed optimizer's bucketed reduce-scatter and all-gather
// (zero_stage 1), without Megatron-FSDP's per-layer parameter gathers. Said rather than left silent.
void warn_megatron_fsdp_timing(Scenario& s) {
  const ParallelSpec& p = s.parallelism;
  if (p.framework != Framework::Megatron || p.zero_stage < 2) return;
  s.warnings.push_back({"parallelism.zero_stage",
                        "zero_stage " + str(p.zero_stage) +
                            " with framework megatron (Megatron-FSDP) shards gradients" +
                            (p.zero_stage >= 3 ? std::string(" and parameters") : std::string()) +
                            " in the memory estimate only: the iteration is timed as zero_stage 1 (the distributed "
                            "optimizer), without per-layer parameter gathers; framework fsdp times FSDP's"});
}

}  // namespace

void validate_job(Scenario& s) {
  const Checker c{s};
  resolve_data_parallel(s, c);
  resolve_expert_tensor(s);
  note_eager_fusion(s);
  note_fsdp_sharding(s);
  note_fsdp_selective_recompute(s);
  note_job_placement(s);
  normalise_flags(s);
  check_tensor_split(s, c);
  check_sequence_split(s, c);
  check_experts(s, c);
  check_batch(s, c);
  check_precision(s, c);
  check_grad_reduce_dtype(s, c);
  check_bf16_layers(s, c);
  check_fp8_recipe(s, c);
  check_fp8_param_gather(s, c);
  resolve_fp8_param_gather(s);
  check_optimizer(s, c);
  resolve_optimizer_implementation(s);
  check_sharding(s, c);
  warn_tensor_beyond_scale_up(s);
  warn_megatron_fsdp_timing(s);
  resolve_pipeline_layout(s);
  validate_recompute_modules(s);
  validate_recompute_layers(s, validate_pipeline_split(s));
}

void validate_faults(const Scenario& s) {
  const ClusterSpec& cl = s.cluster;
  for (std::size_t i = 0; i < s.faults.size(); ++i) {
    const FaultSpec& f = s.faults[i];
    const std::string at = "faults[" + str(static_cast<std::int64_t>(i)) + "].";
    if (f.node >= cl.num_nodes())
      throw ScenarioError(s.file, at + "node",
                          "node " + str(f.node) + " does not exist; the cluster has " + str(cl.num_nodes()) +
                              " nodes (0.." + str(cl.num_nodes() - 1) + ")");
    if (f.nic >= cl.nics_per_node)
      throw ScenarioError(s.file, at + "nic",
                          "nic " + str(f.nic) + " does not exist; nodes have " + str(cl.nics_per_node) + " NICs");
    if (f.rank >= cl.num_gpus)
      throw ScenarioError(s.file, at + "rank",
                          "rank " + str(f.rank) + " does not exist; the cluster has " + str(cl.num_gpus) + " GPUs");
    // factor is the fraction of nominal speed left: a degraded link's capacity, a slow GPU's speed. Below 0.1% a
    // part is dead rather than slow, and the times it would produce (a 1 GB transfer at 1e-9 of a NIC) run past
    // the simulator's clock.
    constexpr double kMinFactor = 1e-3;
    if ((f.kind == FaultKind::LinkDegraded || f.kind == FaultKind::GpuSlow) &&
        !(f.factor >= kMinFactor && f.factor <= 1))
      throw ScenarioError(s.file, at + "factor",
                          "factor is the fraction of nominal speed left, in (0, 1] (0.5 = half speed) and at least "
                          "0.001 (a part at under 0.1% of its speed is a dead one: use link_down, nic_down or "
                          "node_down); got " +
                              std::to_string(f.factor));
  }
}

}  // namespace trainsim::scenario_detail
