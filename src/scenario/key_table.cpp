// The scenario keys (key_table.hpp). The spec's keys (spec/scenario.md) keep their names and meanings; the keys
// this implementation adds are documented where their model is (docs/*.md, named in the help).
#include "scenario/key_table.hpp"

#include <string>

namespace trainsim {

namespace {

// clang-format off
constexpr ScenarioKey kKeys[] = {
  // path, type, default, unit, range, help
  {"model.preset", "string", "-", "", "a name from `trainsim presets`", "start from a built-in model; the keys below override it"},
  {"model.hf_config", "path", "-", "", "a Hugging Face config.json, relative to this file", "start from a Hugging Face config instead of a preset"},
  {"model.family", "choice", "gpt", "", "gpt | llama | mixtral | deepseek", "sets defaults: normalization, biases, gated MLP, position embedding"},
  {"model.num_layers", "int", "required", "layers", ">= 1", "transformer layers (from the preset or config when given)"},
  {"model.hidden_size", "int", "required", "", ">= 1", "model width"},
  {"model.num_attention_heads", "int", "required", "heads", ">= 1", "query heads"},
  {"model.num_query_groups", "int", "= num_attention_heads", "heads", "divides num_attention_heads", "key/value heads (GQA, MQA)"},
  {"model.kv_channels", "int", "= hidden_size / num_attention_heads", "", ">= 1", "head dimension"},
  {"model.ffn_hidden_size", "int", "= 4 x hidden_size (gpt family; required for gated MLPs)", "", ">= 1", "MLP width"},
  {"model.gated_mlp", "bool", "= from family (llama, mixtral, deepseek: true)", "", "", "SwiGLU-style MLP (3 weight matrices) instead of GELU (2)"},
  {"model.vocab_size", "int", "= 50257 for the gpt family; required otherwise", "tokens", ">= 1", "vocabulary"},
  {"model.seq_length", "int", "required", "tokens", ">= 1", "tokens per sequence in training"},
  {"model.untie_embeddings", "bool", "false", "", "", "separate input embedding and output layer weights"},
  {"model.parallel_block", "bool", "false", "", "", "attention and MLP side by side in one block (GPT-J, PaLM)"},
  {"model.sliding_window", "int", "null", "tokens", ">= 1", "sliding-window attention span; null = full causal attention"},
  {"model.mtp_layers", "int", "0", "layers", ">= 0", "DeepSeek-V3 multi-token-prediction layers after the last decoder layer"},
  {"model.mla.q_lora_rank", "int", "-", "", ">= 0", "multi-head latent attention: query low-rank dimension (0 = none)"},
  {"model.mla.kv_lora_rank", "int", "-", "", ">= 1", "multi-head latent attention: key/value low-rank dimension"},
  {"model.mla.qk_nope_head_dim", "int", "-", "", ">= 1", "multi-head latent attention: query/key head dimension without RoPE"},
  {"model.mla.qk_rope_head_dim", "int", "-", "", ">= 1", "multi-head latent attention: query/key head dimension with RoPE"},
  {"model.mla.v_head_dim", "int", "-", "", ">= 1", "multi-head latent attention: value head dimension"},
  {"model.moe.num_experts", "int", "0", "experts", ">= 0", "routed experts per MoE layer; 0 = dense model"},
  {"model.moe.router_topk", "int", "2", "experts", "1 .. num_experts", "experts each token is routed to"},
  {"model.moe.expert_ffn_hidden_size", "int", "= ffn_hidden_size", "", ">= 1", "MLP width of one expert"},
  {"model.moe.shared_experts", "int", "0", "experts", ">= 0", "experts every token goes through (DeepSeek)"},
  {"model.moe.layer_freq", "int", "1", "layers", ">= 1", "every Nth layer is an MoE layer"},
  {"model.moe.first_dense_layers", "int", "0", "layers", ">= 0", "the first N layers stay dense (DeepSeek-V3: 3)"},
  {"model.moe.capacity_factor", "number", "null", "", "> 0", "tokens per expert over the balanced share, padded; null = dropless, balanced routing"},
  {"model.moe.router_num_groups", "int", "0", "groups", "divides num_experts", "group-limited routing: the experts' groups (DeepSeek-V3: 8); 0 = none; read by the flex dispatcher"},
  {"model.moe.router_group_topk", "int", "0", "groups", "1 .. router_num_groups", "group-limited routing: the groups a token's experts come from (DeepSeek-V3: 4)"},
  {"model.normalization", "choice", "= from family", "", "layernorm | rmsnorm", "normalization layers (docs/workload.md)"},
  {"model.position_embedding", "choice", "= from family", "", "learned | rope", "position embedding"},
  {"model.add_bias_linear", "bool", "= from family (gpt: true)", "", "", "biases on the linear layers"},
  {"model.add_qkv_bias", "bool", "false", "", "", "biases on the q, k, v projections only (Megatron's --add-qkv-bias, Qwen2)"},

  {"training.global_batch_size", "int", "required", "sequences", ">= 1", "sequences per iteration"},
  {"training.micro_batch_size", "int", "1", "sequences", ">= 1", "sequences per micro-batch"},
  {"training.precision", "choice", "bf16", "", "bf16 | fp16 | fp8 | fp4 | fp32", "GEMM precision (fp8: Transformer Engine FP8 GEMMs, BF16 elsewhere; fp4: Transformer Engine's NVFP4 recipe on NVIDIA Blackwell, NVFP4 GEMMs with BF16 elsewhere)"},
  {"training.recompute", "choice", "none", "", "none | selective | full", "activation recomputation"},
  {"training.recompute_num_layers", "int or list", "null", "layers", ">= 0", "with full: layers per stage recomputed (null = all); a list gives one per stage"},
  {"training.recompute_modules", "list", "null", "", "core_attn, mlp, moe_act, moe, shared_experts, layernorm, mla_up_proj, torchtitan_op", "with selective: Megatron's --recompute-modules, or [torchtitan_op] (torchtitan's per-op selective checkpointing, framework fsdp); null = [core_attn]"},
  {"training.flash_attention", "bool", "true", "", "", "fused attention kernel instead of the unfused softmax path"},
  {"training.attention_kernel", "choice", "auto", "", "auto | flash1 | flash2 | flash3 | flash4 | triton | cudnn", "the attention kernel the job ran (auto: FA2 on Ampere, cuDNN on Hopper and later; flash3 Hopper only, flash4 Blackwell only)"},
  {"training.cuda_graphs", "bool", "false", "", "", "each layer's forward and backward replayed as CUDA graphs: one host launch per layer and micro-batch"},
  {"training.bf16_layers_at_start", "int", "0", "layers", ">= 0", "under fp4: the first N transformer layers keep BF16 linears (Megatron --first-last-layers-bf16 --num-layers-at-start-in-bf16 N)"},
  {"training.bf16_layers_at_end", "int", "0", "layers", ">= 0", "under fp4: the last N transformer layers keep BF16 linears (Megatron --first-last-layers-bf16 --num-layers-at-end-in-bf16 N); MTP layers stay NVFP4"},
  {"training.fp8_param_gather", "choice", "auto", "", "auto | true | false", "Transformer Engine's linear weights as FP8 parameters (Megatron --fp8-param-gather; NeMo / Megatron-Bridge FP8 recipes' fp8_param_gather): no BF16 and no cached FP8 copy beside them, and the distributed optimizer all-gathers them in FP8 (MXFP8: in BF16); needs precision fp8, framework megatron, zero_stage >= 1 (auto: on exactly there, as those recipes and Megatron's FP8 examples set it; false: Megatron's flag default, BF16 weights and TE's cached FP8 copies)"},
  {"training.fp8_recipe", "choice", "delayed", "", "delayed | tensorwise | mxfp8", "with precision fp8: Transformer Engine's scaling recipe (Megatron --fp8-recipe): delayed (amax history), tensorwise (current scaling: an amax pass before each cast), mxfp8 (per-32 block scales, NVIDIA Blackwell)"},
  {"training.grad_reduce_in_bf16", "bool", "false", "", "", "gradients accumulated and reduced in bf16, not fp32 (Megatron --grad-reduce-in-bf16, NeMo performance recipes' grad_reduce_in_fp32 false, FSDP reduce_dtype bf16); needs precision bf16, fp8 or fp4"},
  {"training.fusion", "choice", "auto", "", "auto | eager | fused", "one kernel per PyTorch op, or fused kernels (auto: eager for fsdp; docs/compute-model.md)"},
  {"training.optimizer", "choice", "adam", "", "adam | lamb | sgd", "optimizer (states and step kernels)"},
  {"training.optimizer_implementation", "choice", "auto", "", "auto | fused | foreach | for_loop | decoupled_adamw", "how the optimizer step launches its kernels: fused multi-tensor kernels (Transformer Engine / Apex / DeepSpeed FusedAdam, PyTorch fused=True), PyTorch's foreach (one multi-tensor kernel per elementwise op), one kernel per op and tensor (PyTorch foreach=False), or that loop with the host reading each parameter's step count back first (Composer's DecoupledAdamW, llm-foundry's optimizer); auto: fused for megatron and deepspeed, foreach (PyTorch's default) for fsdp"},
  {"training.iterations", "int", "1", "iterations", "1", "iterations simulated: one steady-state iteration (the spec's default, the only value accepted)"},
  {"training.resilience.failure_rates.gpu", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per GPU: the GPU itself (Xid errors, fallen off the bus, NVLink)"},
  {"training.resilience.failure_rates.hbm", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per GPU: its memory (uncorrectable ECC, row-remap failures)"},
  {"training.resilience.failure_rates.host", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per node: CPU, DRAM, power supply, kernel"},
  {"training.resilience.failure_rates.nic", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per NIC"},
  {"training.resilience.failure_rates.switch", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per fabric switch"},
  {"training.resilience.failure_rates.link", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per fabric link (optics, cables)"},
  {"training.resilience.failure_rates.software", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per node: driver, NCCL and framework hangs"},
  {"training.resilience.failure_rates.other", "number", "= data/resilience.yaml", "failures/device-day", ">= 0", "run planning: job-interrupting failures per node whose cause is not attributed (the node out until it is fixed)"},
  {"training.resilience.detect_restart_min", "number", "= data/resilience.yaml", "min", ">= 0", "run planning: from a failure to the job running again (detection, relaunch), without loading the checkpoint"},
  {"training.resilience.spare_nodes", "int", "null", "nodes", ">= 0", "run planning: hot spares; a hardware failure without a free spare waits for repair_hours (null = always one at hand)"},
  {"training.resilience.repair_hours", "number", "= data/resilience.yaml", "hours", ">= 0", "run planning: a failed node back in service"},
  {"training.resilience.bad_machine_recurrence", "number", "= data/resilience.yaml", "", "0 .. < 1", "run planning: chance that a failure brings another (a bad machine failing again)"},
  {"training.resilience.checkpoint_interval_min", "number or choice", "optimal", "min", "> 0 | optimal | none", "run planning: training minutes between checkpoints; optimal = Young/Daly; none = no checkpoints"},
  {"training.resilience.storage_GBps", "number", "required with checkpoints", "GB/s", ">= 0.01", "run planning: checkpoint write bandwidth of the storage, whole job"},
  {"training.resilience.read_GBps", "number", "= storage_GBps", "GB/s", ">= 0.01", "run planning: checkpoint read bandwidth (a restart loads the last checkpoint)"},
  {"training.resilience.async_checkpoint", "bool", "false", "", "", "run planning: the step stalls only to copy the state to host memory; the write goes on behind training"},
  {"training.resilience.straggler_fraction", "number", "0", "", "0 .. 1", "run planning: share of GPUs running slow at any time"},
  {"training.resilience.straggler_slowdown", "number", "1", "x", "1 .. 100", "run planning: how much slower a straggler's kernels run (gpu_slow factor)"},

  {"parallelism.tensor", "int", "1", "GPUs", ">= 1", "tensor-parallel size"},
  {"parallelism.pipeline", "int", "1", "stages", ">= 1", "pipeline-parallel size"},
  {"parallelism.data", "int", "= num_gpus / (tensor x pipeline x context)", "GPUs", ">= 1", "data-parallel size; if given, must agree"},
  {"parallelism.context", "int", "1", "GPUs", ">= 1", "context-parallel size"},
  {"parallelism.expert", "int", "1", "GPUs", ">= 1", "expert-parallel size"},
  {"parallelism.expert_tensor", "int", "= tensor", "GPUs", ">= 1", "expert-tensor-parallel size (docs/moe.md)"},
  {"parallelism.moe_dispatcher", "choice", "alltoall", "", "alltoall | allgather | flex", "Megatron's MoE token dispatcher; flex = DeepEP (--moe-token-dispatcher-type flex --moe-enable-deepep, docs/moe.md)"},
  {"parallelism.virtual_pipeline", "int", "1", "chunks", ">= 1", "model chunks per stage; > 1 = interleaved 1F1B"},
  {"parallelism.first_stage_layers", "int", "null", "layers", ">= 1", "layers of the first stage (uneven pipeline); the rest split evenly"},
  {"parallelism.last_stage_layers", "int", "null", "layers", ">= 1", "layers of the last stage (uneven pipeline)"},
  {"parallelism.account_for_embedding_in_pipeline_split", "bool", "false", "", "", "Megatron: the input embedding counts as one layer when splitting"},
  {"parallelism.account_for_loss_in_pipeline_split", "bool", "false", "", "", "Megatron: the output layer and loss count as one layer when splitting"},
  {"parallelism.pipeline_layout", "string", "null", "", "Megatron's layout syntax, e.g. \"Et|(tt|)*30mL\"", "which layers each (virtual) stage holds; overrides the split keys"},
  {"parallelism.sequence_parallel", "bool", "true", "", "", "Megatron sequence parallelism (with tensor > 1)"},
  {"parallelism.schedule", "choice", "1f1b", "", "1f1b | gpipe", "pipeline schedule (interleaved is implied by virtual_pipeline > 1)"},
  {"parallelism.framework", "choice", "megatron", "", "megatron | deepspeed | fsdp", "training framework: op order, buckets, overlap"},
  {"parallelism.zero_stage", "int", "1", "", "0 .. 3", "megatron: 1 = distributed optimizer; fsdp: 3 FULL_SHARD, 2 SHARD_GRAD_OP; deepspeed: ZeRO stage"},
  {"parallelism.fsdp_version", "int", "1", "", "1 | 2", "framework fsdp: 1 = FullyShardedDataParallel (FSDP1: Composer, Accelerate's default), 2 = fully_shard (FSDP2: torchtitan, OLMo-core)"},
  {"parallelism.overlap_grad_reduce", "bool", "true", "", "", "gradient reduction overlapped with backward"},
  {"parallelism.overlap_param_gather", "bool", "true", "", "", "distributed optimizer: parameter all-gather overlapped with forward"},
  {"parallelism.param_gather_in_zero_grad", "bool", "false", "", "", "Megatron-Core <= r0.8: the first parameter all-gather starts in zero_grad, before the first forward (later releases: in the first forward pre-hook, after a later stage's first input arrives)"},
  {"parallelism.tp_comm_overlap", "bool", "false", "", "", "Transformer Engine userbuffers: TP communication overlapped with GEMMs (framework fsdp: async TP, a torch.compile pass: needs training.fusion fused)"},
  {"parallelism.grad_bucket_mb", "number", "= max(40M, 1M x data x context) parameters", "MiB", "> 0", "Megatron DDP gradient bucket"},
  {"parallelism.deepspeed.reduce_bucket_size", "number", "500000000", "elements", "> 0", "DeepSpeed reduce_bucket_size"},
  {"parallelism.deepspeed.stage3_prefetch_bucket_size", "number", "50000000", "elements", ">= 0", "DeepSpeed ZeRO-3 prefetch bucket"},
  {"parallelism.deepspeed.stage3_max_live_parameters", "number", "1000000000", "elements", ">= 0", "DeepSpeed ZeRO-3 live-parameter limit"},
  {"parallelism.deepspeed.stage3_max_reuse_distance", "number", "1000000000", "elements", ">= 0", "DeepSpeed ZeRO-3 reuse distance"},
  {"parallelism.deepspeed.stage3_param_persistence_threshold", "number", "100000", "elements", ">= 0", "DeepSpeed ZeRO-3: smaller parameters stay gathered"},
  {"parallelism.deepspeed.overlap_comm", "bool", "null", "", "", "DeepSpeed overlap_comm; null = true for stage 3, false for 1 and 2"},

  {"cluster.gpu", "string", "required (or gpu_spec)", "", "a name from `trainsim presets`", "the GPU, from the catalog (data/gpus.yaml)"},
  {"cluster.gpu_spec.name", "string", "custom", "", "", "a GPU given by its datasheet: its name"},
  {"cluster.gpu_spec.vendor", "string", "-", "", "nvidia | amd", "vendor (sets the scale-up default)"},
  {"cluster.gpu_spec.architecture", "string", "-", "", "ampere | hopper | blackwell | cdna3 | ...", "architecture (picks the kernel-efficiency curves)"},
  {"cluster.gpu_spec.sm_version", "int", "-", "", ">= 0", "CUDA compute capability x 10 (NCCL's protocol rules)"},
  {"cluster.gpu_spec.sm_count", "int", "-", "SMs", ">= 0", "streaming multiprocessors"},
  {"cluster.gpu_spec.peak_tflops.bf16", "number", "-", "TFLOPS", "> 0", "dense BF16 peak (give at least one precision's peak)"},
  {"cluster.gpu_spec.peak_tflops.fp8", "number", "-", "TFLOPS", "> 0", "dense FP8 peak"},
  {"cluster.gpu_spec.peak_tflops.fp4", "number", "-", "TFLOPS", "> 0", "dense FP4 peak (NVFP4; prices training.precision fp4)"},
  {"cluster.gpu_spec.peak_tflops.fp32", "number", "-", "TFLOPS", "> 0", "FP32 peak"},
  {"cluster.gpu_spec.peak_tflops.fp16", "number", "-", "TFLOPS", "> 0", "dense FP16 peak"},
  {"cluster.gpu_spec.peak_tflops.tf32", "number", "-", "TFLOPS", "> 0", "dense TF32 peak"},
  {"cluster.gpu_spec.hbm_GBps", "number", "required", "GB/s", "> 0", "memory bandwidth"},
  {"cluster.gpu_spec.memory_gib", "number", "required", "GiB", "> 0", "memory capacity"},
  {"cluster.gpu_spec.scale_up_GBps", "number", "-", "GB/s", "> 0", "scale-up bandwidth per GPU per direction"},
  {"cluster.gpu_power_limit_w", "number", "null", "W", "35-100% of the GPU's rated power", "per-GPU power limit (nvidia-smi -pl) below the rating: the GPU holds a lower tensor-core clock (docs/compute-model.md §1.4); null = the rated power"},
  {"cluster.num_gpus", "int", "required", "GPUs", ">= 1, whole nodes", "GPUs of the job"},
  {"cluster.gpus_per_node", "int", "8", "GPUs", ">= 1", "GPUs per node (server, tray)"},
  {"cluster.scale_up.kind", "choice", "= nvswitch (NVIDIA), infinity-fabric (AMD)", "", "nvswitch | nvlink-mesh | pcie | infinity-fabric", "scale-up fabric"},
  {"cluster.scale_up.bandwidth_GBps", "number", "= the GPU's scale-up bandwidth", "GB/s", "> 0", "per GPU, per direction"},
  {"cluster.scale_up.domain_size", "int", "= gpus_per_node", "GPUs", "divides gpus_per_node or a multiple of it", "GPUs sharing the scale-up fabric (72 for NVL72)"},
  {"cluster.scale_up.job_gpus_per_domain", "int or auto", "auto", "GPUs", "whole nodes, <= domain_size", "GPUs of each domain the job fills before the next (auto: Slurm segment split; docs/topologies.md)"},
  {"cluster.nics_per_node", "int", "8", "NICs", ">= 1", "scale-out NICs per node"},
  {"cluster.nic_gbps", "number", "400", "Gb/s", ">= 1", "per NIC, per direction"},
  {"cluster.network.topology", "choice", "rail-optimized", "", "rail-optimized | fat-tree | hpn | dragonfly | ideal", "scale-out network (docs/topologies.md)"},
  {"cluster.network.simai_topology", "path", "null", "", "a SimAI topology file, relative to this file", "the fabric from a SimAI topology file (gen_Topo_Template.py's) instead of a generated one; topology, tiers, oversubscription, pod_size, switch_radix, link_latency_ns, dual_tor are then refused (docs/topologies.md)"},
  {"cluster.network.tiers", "int", "2", "tiers", ">= 1", "switch tiers of a Clos"},
  {"cluster.network.oversubscription", "number or list", "1.0", "down:up", "> 0, <= 100", "a number at the leaves, or one per tier from the leaves up"},
  {"cluster.network.pod_size", "int", "null", "GPUs", "whole nodes", "GPUs below the top tier; null = derived from the radix"},
  {"cluster.network.switch_radix", "int", "64", "ports", ">= 2", "ports per switch"},
  {"cluster.network.link_latency_ns", "number", "500", "ns", ">= 0", "per link"},
  {"cluster.network.switch_latency_ns", "number", "300", "ns", ">= 0", "per switch hop"},
  {"cluster.network.dual_tor", "bool", "false", "", "", "fat-tree: each NIC's two ports to a pair of ToRs (hpn always is)"},
  {"cluster.network.pcie_GBps", "number", "64", "GB/s", ">= 1", "GPU <-> NIC PCIe, per direction (Gen5 x16)"},
  {"cluster.network.routing", "choice", "ecmp", "", "ecmp | adaptive | spray", "ecmp: one path per flow, hashed (simulation.seed); adaptive: the least-loaded path per flow (flow level), the least-queued port at each switch per packet (packet level, lossless); spray: each packet over the flow's equal-cost paths in turn (packet level, lossless)"},
  {"cluster.network.roce.mtu_bytes", "int", "4096", "bytes", "256 | 512 | 1024 | 2048 | 4096", "packet level: RoCE path MTU, the payload of one packet"},
  {"cluster.network.roce.lossless", "bool", "true", "", "", "packet level: PFC pauses upstream ports instead of dropping; false = lossy RoCE with go-back-N"},
  {"cluster.network.roce.congestion_control", "choice", "dcqcn", "", "dcqcn | timely | none", "packet level: the senders' congestion control (DCQCN reacting to ECN marks, TIMELY to round-trip times), or none"},
  {"cluster.network.roce.ecn_kmin_kb", "number", "100", "KB", "> 0", "packet level: egress queue at which ECN marking starts (RED)"},
  {"cluster.network.roce.ecn_kmax_kb", "number", "400", "KB", "> ecn_kmin_kb", "packet level: egress queue at which marking reaches ecn_pmax"},
  {"cluster.network.roce.ecn_pmax", "number", "0.2", "", "(0, 1]", "packet level: marking probability at ecn_kmax_kb"},
  {"cluster.network.roce.pfc_xoff_kb", "number", "256", "KB", "> 0", "packet level: bytes from one ingress above which PFC pauses it"},
  {"cluster.network.roce.pfc_xon_kb", "number", "240", "KB", "< pfc_xoff_kb", "packet level: bytes at or below which a paused ingress resumes"},
  {"cluster.network.roce.dcqcn_ai_mbps", "number or auto", "auto", "Mb/s", "> 0", "packet level: DCQCN's additive rate increase (auto: 0.1% of the NIC rate, the paper's 40 Mb/s at 40 Gb/s)"},
  {"cluster.network.roce.dcqcn_hai_mbps", "number or auto", "auto", "Mb/s", "> 0", "packet level: DCQCN's hyper rate increase (auto: 1% of the NIC rate, the paper's step on 40 Gb/s scaled)"},
  {"cluster.network.roce.timely_ai_mbps", "number or auto", "auto", "Mb/s", "> 0", "packet level: TIMELY's additive rate increase (auto: 0.1% of the NIC rate, the paper's 10 Mb/s at 10 Gb/s)"},
  {"cluster.network.roce.timely_tlow_us", "number", "50", "us", ">= 0", "packet level: TIMELY increases the rate below this RTT"},
  {"cluster.network.roce.timely_thigh_us", "number", "500", "us", "> timely_tlow_us", "packet level: TIMELY cuts by the RTT above this, by its gradient between the two"},
  {"cluster.network.roce.port_buffer_mb", "number", "1", "MB", "> 0", "packet level: egress queue limit per port (lossy mode drops beyond it)"},
  {"cluster.network.roce.switch_buffer_mb", "number", "0", "MB", ">= 0", "packet level: each switch's buffer, shared by its ports with dynamic thresholds in place of pfc_xoff_kb, pfc_xon_kb and port_buffer_mb; 0 = per-port limits"},
  {"cluster.network.roce.buffer_alpha", "number", "0.125", "", "(0, 64]", "packet level, with switch_buffer_mb: a queue or paused ingress may hold alpha x the free shared buffer"},
  {"cluster.network.roce.pfc_headroom_kb", "number or auto", "auto", "KB", ">= 0", "packet level, with switch_buffer_mb: buffer each lossless ingress keeps for what arrives after its PAUSE (auto: 2 x the link's bandwidth-delay product + 2 packets)"},

  {"nccl.*", "string or number", "-", "", "NCCL_ environment variables", "NCCL settings as NCCL documents them (NCCL_ALGO, NCCL_PROTO, NCCL_MAX_NCHANNELS, ...)"},

  {"algorithms.all_reduce", "choice", "nccl", "", "nccl | halving_doubling | hierarchical | reduction_server", "all-reduce algorithm (docs/collectives.md)"},
  {"algorithms.all_gather", "choice", "nccl", "", "nccl | halving_doubling | hierarchical", "all-gather algorithm"},
  {"algorithms.reduce_scatter", "choice", "nccl", "", "nccl | halving_doubling | hierarchical", "reduce-scatter algorithm"},
  {"algorithms.reduction_server.servers", "int", "0", "nodes", ">= 0", "CPU reducer nodes; 0 = one per worker node"},
  {"algorithms.reduction_server.nic_gbps", "number", "100", "Gb/s", "> 0", "per reducer, per direction"},
  {"algorithms.reduction_server.latency_us", "number", "10", "us", ">= 0", "fixed cost of one worker -> reducer -> worker round trip"},

  {"simulation.network_model", "choice", "analytical", "", "analytical | flow | packet", "collective times from the NCCL model, flows on the fabric, or RoCE packets on it"},
  {"simulation.seed", "int", "0", "", ">= 0", "seed of every random choice (ECMP hashes)"},
  {"simulation.threads", "int", "0", "", "0..1024", "threads that build the NCCL communicators before the (sequential) event loop; 0 = all cores; sweep, tune and validate take --threads"},
  {"simulation.per_rank", "bool", "false", "", "", "simulate every rank instead of one per symmetric class"},
  {"simulation.max_ops", "int", "50000000", "ops", ">= 0", "refuse runs estimated above this many ops; 0 = no limit"},
  {"simulation.packet_scope.groups", "list", "null", "", "tp | cp | dp | pp | embedding | tp-pp | world | ep | etp | etp-ep | edp", "packet level: only these communicators' calls move as packets, the rest as flows (null = all)"},
  {"simulation.packet_scope.min_bytes", "int", "0", "bytes", ">= 0", "packet level: only calls of at least this size (NCCL's count) move as packets"},
  {"simulation.packet_host_links", "choice", "fifo", "", "fifo | delay", "packet level: NVLink and PCIe links as FIFOs that packets queue on (fifo), or crossed in their serialization and latency without queueing, a run of them in one event (delay: faster where a ring's path is mostly NVLink; no contention inside a host)"},
  {"simulation.max_packets", "int", "200000000", "packets", ">= 0", "packet level: refuse runs whose fabric traffic exceeds this many packets; 0 = no limit"},

  {"faults[].kind", "choice", "required", "", "link_down | link_degraded | nic_down | gpu_slow | node_down", "what fails (docs/faults.md)"},
  {"faults[].at_s", "number", "-", "s", ">= 0", "when, in seconds into the run (or always)"},
  {"faults[].always", "bool", "-", "", "", "the whole run"},
  {"faults[].link", "string", "-", "", "a link name from `trainsim topo`", "link_down, link_degraded: which link"},
  {"faults[].factor", "number", "-", "", "> 0", "link_degraded: capacity share; gpu_slow: slowdown"},
  {"faults[].node", "int", "-", "", ">= 0", "nic_down, node_down: which node"},
  {"faults[].nic", "int", "-", "", ">= 0", "nic_down: which NIC of the node"},
  {"faults[].rank", "int", "-", "", ">= 0", "gpu_slow: which GPU"},

  {"power.gpu_idle_w", "number", "= data/power.yaml", "W", ">= 0", "per GPU, powered and waiting (pipeline bubbles, host waits)"},
  {"power.gpu_communication_w", "number", "= data/power.yaml", "W", ">= 0", "per GPU, while only collectives run (exposed communication)"},
  {"power.gpu_compute_w", "number", "= data/power.yaml", "W", ">= gpu_idle_w", "per GPU, while kernels compute"},
  {"power.node_overhead_w_per_gpu", "number", "= data/power.yaml", "W", ">= 0", "per GPU: the host's CPUs, memory, fans, NVSwitches, power-supply losses"},
  {"power.network_w_per_gpu", "number", "= data/power.yaml", "W", ">= 0", "per GPU: scale-out switches and optics"},
  {"power.pue", "number", "= data/power.yaml", "", "1 .. 5", "data-centre power usage effectiveness (facility power / IT power)"},

  {"cost.usd_per_gpu_hour", "number", "null", "USD", ">= 0", "run planning: price of one GPU-hour (the cluster's, hosts and network included)"},
  {"cost.usd_per_mwh", "number", "null", "USD", ">= 0", "run planning: price of energy, per MWh at the facility meter"},

  {"output.trace", "path", "null", "", "", "Chrome/Perfetto trace of every simulated rank's streams"},
  {"output.csv", "path", "null", "", "", "the result as CSV"},

  {"compute.database", "path", "null", "", "", "measured op database CSV, relative to this file (docs/op-database.md)"},
  {"compute.scale_from", "string", "null", "", "a catalog GPU", "the GPU the database was measured on, when it differs"},
  {"compute.interference", "bool", "true", "", "", "kernels beside collectives lose the SMs and HBM bandwidth the collectives take"},
  {"compute.host_launch_us", "number", "12", "us", "0..1000", "host CPU time per kernel launch; kernels wait until the host has issued them (0 = the host is always ahead)"},

  {"reference.source", "string", "-", "", "", "where the measured numbers come from"},
  {"reference.confidence", "choice", "-", "", "high | medium | low", "how sure the measurement is"},
  {"reference.iteration_time_s", "number", "-", "s", "> 0", "measured iteration time"},
  {"reference.tflops_per_gpu", "number", "-", "TFLOPS", "> 0", "measured throughput per GPU"},
  {"reference.mfu", "number", "-", "", "> 0", "measured model FLOPs utilisation"},
  {"reference.hfu", "number", "-", "", "> 0", "measured hardware FLOPs utilisation"},
  {"reference.tokens_per_s_per_gpu", "number", "-", "tokens/s", "> 0", "measured tokens per second per GPU"},
  {"reference.busbw_GBps", "number", "-", "GB/s", "> 0", "measured bus bandwidth (collective cases)"},
  {"reference.flops_convention", "choice", "model", "", "model | hardware", "FLOPs counted without (model) or with (hardware) recompute"},
  {"reference.notes", "string", "-", "", "", "what was assumed where the source is silent"},

  {"collective.op", "choice", "required", "", "all_reduce | all_gather | reduce_scatter | broadcast | reduce | alltoall | sendrecv", "the collective a benchmark measured"},
  {"collective.tool", "string", "-", "", "", "what measured it (nccl-tests, ...)"},
  {"collective.library", "string", "-", "", "", "the collective library and version"},
  {"collective.points[].size", "int or size", "-", "bytes", "8, 64K, 1M, 8G", "message size (nccl-tests' size column); null = not stated"},
  {"collective.points[].busbw_GBps", "number", "required", "GB/s", "> 0", "measured bus bandwidth"},
  {"collective.points[].algbw_GBps", "number", "-", "GB/s", "> 0", "measured algorithm bandwidth"},
  {"collective.points[].nccl_algo", "string", "-", "", "", "the algorithm NCCL reported"},
};
// clang-format on

// "faults[3].kind" -> "faults[].kind": list indices do not name keys.
std::string without_indices(std::string_view path) {
  std::string out;
  out.reserve(path.size());
  for (std::size_t i = 0; i < path.size(); ++i) {
    out += path[i];
    if (path[i] != '[') continue;
    std::size_t j = i + 1;
    while (j < path.size() && path[j] >= '0' && path[j] <= '9') ++j;
    if (j < path.size() && path[j] == ']' && j > i + 1) i = j - 1;
  }
  return out;
}

}  // namespace

bool network_only_key(std::string_view path) {
  const std::string plain = without_indices(path);
  const std::string_view p = plain;
  if (p == "cluster.network.simai_topology") return false;  // a fabric file can bring its own node shape
  return p == "cluster.nic_gbps" || p == "simulation.seed" || p.starts_with("cluster.network.") ||
         p.starts_with("nccl.") || p.starts_with("algorithms.");
}

std::span<const ScenarioKey> scenario_keys() { return kKeys; }

const ScenarioKey* find_scenario_key(std::string_view path) {
  const std::string plain = without_indices(path);
  for (const ScenarioKey& k : kKeys) {
    if (k.path == plain) return &k;
    if (k.path.ends_with(".*") && plain.size() > k.path.size() - 1 &&
        plain.compare(0, k.path.size() - 1, k.path.substr(0, k.path.size() - 1)) == 0)
      return &k;
  }
  return nullptr;
}

}  // namespace trainsim
