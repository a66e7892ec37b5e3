#pragma once
// A scenario: one training job (or one collective benchmark) on one cluster.
// The input contract is the scenario spec (docs/scenario-keys.md); every key there maps to a field here.
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/collective_kind.hpp"
#include "collective/algorithm_options.hpp"
#include "core/kernel_desc.hpp"
#include "hardware/cluster_spec.hpp"
#include "model/flops.hpp"
#include "model/model_spec.hpp"

namespace trainsim {

enum class Optimizer { Adam, Lamb, SGD };
// How the optimizer step is written (training.optimizer_implementation; docs/compute-model.md §1.6): fused = one
// multi-tensor kernel per chunk of tensors (Transformer Engine's / Apex's FusedAdam, DeepSpeed's FusedAdam, PyTorch's
// fused=True); foreach = PyTorch's default on CUDA, each elementwise op of the update as one multi-tensor kernel per
// chunk of tensors, so the state is read and written once per op; for_loop = the same ops one tensor at a time
// (PyTorch's foreach=False); decoupled_adamw = Composer's DecoupledAdamW (llm-foundry's optimizer), the loop with the
// host reading each parameter's step count back (a device tensor's .item()) before its update. Auto: fused for
// megatron and deepspeed, foreach for fsdp.
enum class OptimizerImplementation { Auto, Fused, Foreach, ForLoop, DecoupledAdamW };
enum class PipelineSchedule { OneFOneB, GPipe };
enum class Framework { Megatron, DeepSpeed, FSDP };
enum class NetworkModel { Analytical, Flow, Packet };
// Megatron's --moe-token-dispatcher-type: token all-to-all over EP, or all-gather / reduce-scatter over
// expert-TP x EP (Megatron-LM moe/token_dispatcher.py, MoEAlltoAllTokenDispatcher / MoEAllGatherTokenDispatcher).
// Megatron's token dispatchers; Flex = --moe-token-dispatcher-type flex --moe-enable-deepep (DeepEP).
enum class MoeDispatcher { AllToAll, AllGather, Flex };
// Which fused attention kernel the software stack runs (training.attention_kernel). `Auto` is what
// today's default stack runs on the GPU: FlashAttention-2 on Ampere, Transformer Engine's cuDNN
// attention on Hopper and Blackwell (docs/compute-model.md §1.2).
// How the step's memory-bound work runs (training.fusion): Eager, one kernel per PyTorch op (a plain PyTorch
// model: norms, activations, RoPE and attention layout changes each their own passes over HBM), or Fused
// (Megatron's and Transformer Engine's fused kernels, or torch.compile). Auto: eager for framework fsdp,
// fused for megatron and deepspeed (Megatron-DeepSpeed builds Megatron's fused kernels).
enum class Fusion { Auto, Eager, Fused };

// How an FP8 recipe scales its tensors (training.fp8_recipe; Megatron's --fp8-recipe, Transformer Engine's recipes):
// delayed = one scale per tensor from an amax history; tensorwise = one scale per tensor from the tensor's own amax
// (TE's Float8CurrentScaling); mxfp8 = one E8M0 scale per 32 elements (Blackwell).
enum class Fp8Recipe { Delayed, Tensorwise, Mxfp8 };

struct TrainingSpec {
  std::int64_t global_batch_size = 0;  // sequences per iteration
  int micro_batch_size = 1;
  Precision precision = Precision::BF16;
  RecomputeGranularity recompute = RecomputeGranularity::None;
  // With full recompute: layers recomputed per pipeline stage. Empty = all layers of each stage;
  // one value = the same for every stage; otherwise one value per stage.
  std::vector<int> recompute_num_layers;
  // With selective: Megatron's --recompute-modules (default core_attn only).
  RecomputeModules recompute_modules;
  bool recompute_modules_given = false;  // written (validation: only meaningful with selective)
  bool flash_attention = true;
  AttentionKernel attention_kernel = AttentionKernel::Auto;  // with flash_attention
  Fusion fusion = Fusion::Auto;
  Fp8Recipe fp8_recipe = Fp8Recipe::Delayed;  // with precision fp8
  Optimizer optimizer = Optimizer::Adam;
  OptimizerImplementation optimizer_implementation = OptimizerImplementation::Auto;  // resolved by validation
  // Each transformer layer's forward and backward replayed as CUDA graphs (Megatron's --enable-cuda-graph /
  // --cuda-graph-impl, Transformer Engine's make_graphed_callables, torch.compile's reduce-overhead): one host
  // launch per layer and micro-batch instead of one per kernel.
  bool cuda_graphs = false;
  // Gradients accumulated and reduced in bf16 instead of fp32 (Megatron's --grad-reduce-in-bf16, NeMo's
  // grad_reduce_in_fp32 = False as its performance recipes set it; FSDP's MixedPrecision reduce_dtype = bf16):
  // the data-parallel reduction moves half the bytes, Megatron's gradient buffer is half the size.
  bool grad_reduce_in_bf16 = false;
  // Under fp8, Transformer Engine's linear weights are FP8 parameters (Megatron's --fp8-param-gather, NeMo's and
  // Megatron-Bridge's FP8 recipes' fp8_param_gather / fp8_params): no BF16 copy and no cached FP8 copy beside it,
  // and the distributed optimizer all-gathers them in FP8 (delayed and tensorwise scaling; MXFP8 parameters are
  // gathered in BF16 and quantized after). Not given (auto), validation turns it on where Megatron allows it.
  bool fp8_param_gather = false;
  bool fp8_param_gather_given = false;
  // Under fp4: the first and the last this many transformer layers keep BF16 linears (Megatron's
  // --first-last-layers-bf16 with --num-layers-at-start-in-bf16 / --num-layers-at-end-in-bf16, which the NVFP4
  // recipe uses to keep the most sensitive layers in BF16). MTP layers stay quantized, as in Megatron.
  int bf16_layers_at_start = 0;
  int bf16_layers_at_end = 0;
  // Whether global layer `layer` of a `num_layers`-layer model is one of those (MTP layers, >= num_layers, are not).
  bool keeps_bf16_linears(int layer, int num_layers) const {
    return layer >= 0 && layer < num_layers &&
           (layer < bf16_layers_at_start || layer >= num_layers - bf16_layers_at_end);
  }
  int iterations = 1;
};

// `parallelism.deepspeed:` DeepSpeed's own ZeRO knobs, with its names and code defaults (elements;
// DeepSpeed deepspeed/runtime/zero/config.py::DeepSpeedZeroConfig; docs/zero-and-fsdp.md).
struct DeepSpeedSpec {
  double reduce_bucket_size = 5e8;
  double stage3_prefetch_bucket_size = 5e7;
  double stage3_max_live_parameters = 1e9;
  double stage3_max_reuse_distance = 1e9;
  double stage3_param_persistence_threshold = 1e5;
  // nullopt: DeepSpeed's validator default, true for zero_stage 3 and false for 1/2 (validation resolves it).
  std::optional<bool> overlap_comm;
};

struct ParallelSpec {
  int tensor = 1;
  int pipeline = 1;
  int data = 0;  // resolved: num_gpus / (tensor * pipeline * context) when not given
  int context = 1;
  int expert = 1;
  int expert_tensor = 0;  // expert-tensor-parallel size; resolved to `tensor` when not given (Megatron's default)
  MoeDispatcher moe_dispatcher = MoeDispatcher::AllToAll;
  int virtual_pipeline = 1;
  bool virtual_pipeline_given = false;  // written in the scenario (else a pipeline_layout may imply it)
  std::optional<int> first_stage_layers;
  std::optional<int> last_stage_layers;
  // Megatron's --account-for-embedding/loss-in-pipeline-split: the embedding (the output layer + loss) takes one
  // layer slot of the first (last) model chunk when the layers are split evenly.
  bool account_for_embedding_in_pipeline_split = false;
  bool account_for_loss_in_pipeline_split = false;
  // Megatron's --pipeline-model-parallel-layout as written, and its expansion (validation fills it): one string
  // per (virtual) pipeline stage in Megatron's order (entry i = chunk i / pipeline of pipeline rank i % pipeline),
  // each a sequence of 'E' embedding, 't' decoder layer, 'm' MTP layer, 'L' output layer + loss.
  std::optional<std::string> pipeline_layout;
  std::vector<std::string> pipeline_layout_stages;
  bool sequence_parallel = true;
  PipelineSchedule schedule = PipelineSchedule::OneFOneB;
  Framework framework = Framework::Megatron;
  int zero_stage = 1;             // megatron: 1 = distributed optimizer; fsdp: 3 FULL_SHARD, 2 SHARD_GRAD_OP
  bool zero_stage_given = false;  // written in the scenario (the report says what an fsdp job without it runs)
  // PyTorch FSDP's API (framework fsdp): 1 = FullyShardedDataParallel (one FlatParameter per unit; Composer /
  // llm-foundry, Hugging Face Accelerate's default, IBM fms-fsdp), 2 = fully_shard (per-parameter DTensors;
  // torchtitan, OLMo-core). They differ in where the gradient cast runs and in FSDP2's copy-out after each
  // all-gather (zero-fsdp.md §3.1, §3.2).
  int fsdp_version = 1;
  bool overlap_grad_reduce = true;
  bool overlap_param_gather = true;
  // Megatron-Core up to r0.8 dispatched the first parameter all-gather in the distributed optimizer's
  // zero_grad, before the step's first forward; later releases dispatch it in the first forward pre-hook
  // (megatron.md §5.3 step 6). Non-interleaved schedules only (interleaved ones dispatch whole chunks).
  bool param_gather_in_zero_grad = false;
  bool tp_comm_overlap = false;
  // DP gradient bucket in MiB; nullopt = Megatron's rule, max(40M, 1M x dp) elements.
  std::optional<double> grad_bucket_mb;
  DeepSpeedSpec deepspeed;  // framework deepspeed only
};

// NCCL environment variables exactly as NCCL names them (NCCL_ALGO, NCCL_PROTO, ...); values as strings.
struct NcclSpec {
  std::map<std::string, std::string> env;
  std::optional<std::string> get(const std::string& name) const;
};

struct SimulationSpec {
  NetworkModel network_model = NetworkModel::Analytical;
  std::uint64_t seed = 0;
  int threads = 0;        // 0 = all cores
  bool per_rank = false;  // simulate every rank instead of one representative per symmetric class
  // A run whose estimated ops (summed over the simulated ranks) exceed this is refused before the
  // workload is built (api/work_estimate.hpp): a mistyped key must not fill memory. 0 = no limit.
  std::int64_t max_ops = 50'000'000;
  // Packet level: a run whose fabric traffic comes to more packets than this is refused before it starts
  // (about a million packets a second: 3 minutes). 0 = no limit.
  std::int64_t max_packets = 200'000'000;
  // simulation.packet_scope (packet level): the calls that move as packets, the rest as flows. Communicator kinds
  // by their report names (tp, cp, dp, pp, ep, edp, ...; empty = all) and the smallest call (bytes, NCCL's count).
  std::vector<std::string> packet_scope_groups;
  std::int64_t packet_scope_min_bytes = 0;
  bool packet_scope_given = false;
  // simulation.packet_host_links (packet level): NVLink and PCIe links as FIFOs that packets queue on (fifo), or as a
  // serialization and latency that every packet crosses without queueing, a run of them in one event (delay).
  enum class HostLinks : std::uint8_t { Fifo, Delay };
  HostLinks packet_host_links = HostLinks::Fifo;
};

enum class FaultKind { LinkDown, LinkDegraded, NicDown, GpuSlow, NodeDown };
struct FaultSpec {
  FaultKind kind = FaultKind::GpuSlow;
  std::optional<double> at_s;  // nullopt = always
  std::string link;            // link_down / link_degraded
  int node = -1, nic = -1, rank = -1;
  double factor = 1.0;
};

// Where kernel times come from (docs/op-database.md): a measured op database, optionally measured on
// another GPU and scaled to cluster.gpu (SimAI-CP-Model); without one, the calibrated roofline.
struct ComputeSpec {
  std::optional<std::string> database;  // path, resolved against the scenario file's folder
  std::optional<GpuSpec> scale_from;    // the GPU the database was measured on, when not cluster.gpu
  // Collectives running beside a kernel slow it (their CTAs hold SMs, their copies use HBM bandwidth);
  // false prices every kernel as if it ran alone (to see what the interference costs).
  bool interference = true;
  // CPU time the host takes to launch one kernel (Python dispatch, autograd's bookkeeping, cudaLaunchKernel): a
  // step whose kernels are shorter than this waits on the host (docs/compute-model.md §1.5). 0 = never.
  double host_launch_us = kDefaultHostLaunchUs;
  // 12 us: an eager Llama-3.2-1B forward at 1 x 512 tokens on B200 takes 8.1 ms for ~680 launches, 1.9 ms
  // replayed as CUDA graphs (ml-engineering, kernels.md §4.4); 5-20 us per cudaLaunchKernel (Holistic Trace
  // Analysis docs), ~7 us per PyTorch op with autograd before the launch (pytorch/pytorch#41383).
  static constexpr double kDefaultHostLaunchUs = 12.0;
};

// training.resilience: what happens between iterations over a whole run (`trainsim plan`, docs/run-planning.md).
// Unset values take the fleet defaults of data/resilience.yaml (hardware/fleet_data.hpp).
struct ResilienceSpec {
  // Failures that interrupt the job, per device per day: gpu, hbm (per GPU), host, software, other (per node), nic (per
  // NIC), switch (per switch), link (per fabric link).
  std::map<std::string, double> failure_rates;
  std::optional<double> detect_restart_min;      // from a failure to the job running again, without the load
  std::optional<int> spare_nodes;                // hot spares; null = a spare is always at hand
  std::optional<double> repair_hours;            // a failed node back in service (waited for without a spare)
  std::optional<double> bad_machine_recurrence;  // chance a failure brings another (the same bad machine)
  // Minutes of training between checkpoints; nullopt with checkpoints on = Young/Daly's optimum.
  std::optional<double> checkpoint_interval_min;
  bool checkpoints = true;             // false: `checkpoint_interval_min: none`, a failure restarts the run
  std::optional<double> storage_GBps;  // checkpoint write bandwidth of the storage, whole job
  std::optional<double> read_GBps;     // its read bandwidth (a restart loads the checkpoint); = storage_GBps
  bool async_checkpoint = false;       // the step stalls only for the copy to host memory
  double straggler_fraction = 0;       // share of GPUs running slow at any time
  double straggler_slowdown = 1;       // how much slower a straggler's kernels run
};

// power: what the cluster draws (energy per iteration and per run). Unset values: data/power.yaml.
struct PowerSpec {
  std::optional<double> gpu_idle_w, gpu_communication_w, gpu_compute_w;  // per GPU, by what it is doing
  std::optional<double> node_overhead_w_per_gpu;  // CPUs, memory, fans, NVSwitches, power supplies
  std::optional<double> network_w_per_gpu;        // scale-out switches and optics
  std::optional<double> pue;                      // data-centre power usage effectiveness
};

// cost: what a run costs, from GPU-hours and/or energy.
struct CostSpec {
  std::optional<double> usd_per_gpu_hour;
  std::optional<double> usd_per_mwh;
};

struct OutputSpec {
  std::optional<std::string> trace;
  std::optional<std::string> csv;
};

enum class FlopsConvention { Model, Hardware };
struct ReferenceSpec {
  std::string source;
  std::string confidence;  // high | medium | low
  std::optional<double> iteration_time_s, tflops_per_gpu, mfu, hfu, tokens_per_s_per_gpu, busbw_GBps;
  FlopsConvention flops_convention = FlopsConvention::Model;
  std::string notes;
};

struct CollectivePoint {
  std::optional<std::int64_t> size;  // bytes, nccl-tests' size column; nullopt = not stated
  double busbw_GBps = 0;
  std::optional<double> algbw_GBps;
  std::optional<std::string> nccl_algo;
};
struct CollectiveSpec {
  CollectiveOp op = CollectiveOp::AllReduce;
  std::string tool, library;
  std::vector<CollectivePoint> points;
};

// A value the scenario did not state and validation chose because the documented default could not apply
// (e.g. Megatron's expert_tensor = tensor when that leaves no valid expert layout). Reports list them so
// that no such choice is silent.
struct InferredValue {
  std::string key;    // e.g. "parallelism.expert_tensor"
  std::string value;  // as it would be written in the scenario
  std::string why;    // one sentence
};

// Something the scenario asks for that runs, but likely not as the user expects (e.g. tensor parallelism wider
// than the scale-up domain). Reports print every one, beside the inferred values.
struct ScenarioWarning {
  std::string key;      // the key it is about, e.g. "parallelism.tensor"
  std::string message;  // what happens, in one or two sentences
};

struct Scenario {
  std::string file;              // path it was read from ("<string>" for text)
  std::string name;              // file stem
  bool has_training_job = true;  // false for collective-only cases
  ModelSpec model;
  TrainingSpec training;
  ParallelSpec parallelism;
  ClusterSpec cluster;
  NcclSpec nccl;
  AlgorithmsSpec algorithms;
  SimulationSpec simulation;
  ComputeSpec compute;
  std::vector<FaultSpec> faults;
  ResilienceSpec resilience;  // training.resilience
  PowerSpec power;
  CostSpec cost;
  OutputSpec output;
  std::optional<ReferenceSpec> reference;
  std::optional<CollectiveSpec> collective;
  std::vector<InferredValue> inferred;    // filled by validation
  std::vector<ScenarioWarning> warnings;  // filled by validation
  // The scenario as read, less the keys only the network reads (workload_fingerprint.hpp); empty for one not read
  // from YAML. Equal fingerprints build the same workload, memory and compute models.
  std::string workload_fingerprint;

  int micro_batches_per_iteration() const {  // m = B / (b * D)
    return static_cast<int>(training.global_batch_size / (training.micro_batch_size * parallelism.data));
  }
};

// "all_reduce", "all_gather", ... as the spec spells them; nullopt for anything else.
std::optional<CollectiveOp> parse_collective_op(const std::string& name);
// A size as nccl-tests takes it: bytes with an optional K, M, G or T suffix (powers of 1024, "KB",
// "KiB" alike); nullopt when malformed or too large.
std::optional<std::int64_t> parse_byte_size(const std::string& text);
const char* to_string(Framework f);
// The training frameworks parallelism.framework names, with what each means for the simulated step (`trainsim
// presets` lists them).
struct FrameworkInfo {
  Framework id;
  const char* name;
  const char* description;
};
std::span<const FrameworkInfo> frameworks();
const char* to_string(RecomputeGranularity r);
const char* to_string(Fusion f);
const char* to_string(Fp8Recipe r);
// Whether the model runs as eager PyTorch (training.fusion, its auto resolved by parallelism.framework).
bool eager_pytorch(const Scenario& s);

}  // namespace trainsim
