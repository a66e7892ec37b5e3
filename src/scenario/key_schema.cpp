#include "scenario/key_schema.hpp"

#include <cctype>
#include <map>
#include <set>
#include <string_view>

#include "core/error.hpp"
#include "core/strings.hpp"
#include "scenario/yaml_reader.hpp"

namespace trainsim::scenario_detail {

namespace {

// Every key path the scenario reader understands. "a[]" marks a list of mappings whose elements
// have the keys that follow; "nccl.*" is open: any key starting with NCCL_.
// Keys this implementation adds to spec/scenario.md:
//   model.normalization (layernorm | rmsnorm), model.position_embedding (learned | rope),
//   model.add_bias_linear (bool): override what model.family implies; model.add_qkv_bias (bool: biases on the
//     q, k, v projections only, Megatron's --add-qkv-bias, Qwen2);
//   cluster.gpu_spec.{name, vendor, architecture, sm_version, sm_count, scale_up_GBps}: optional
//     details of a GPU given by its datasheet (the compute model picks curves by architecture);
//   training.iterations (already in the spec's example), simulation.per_rank (bool: simulate every
//     rank instead of one per symmetric class), simulation.max_ops (refuse runs estimated above this
//     many ops; 0 = no limit);
//   algorithms.{all_reduce, all_gather, reduce_scatter} (nccl | halving_doubling | hierarchical |
//     reduction_server) and algorithms.reduction_server.{servers, nic_gbps, latency_us};
//   cluster.network.{dual_tor (bool), pcie_GBps, routing (ecmp | adaptive)} (docs/topologies.md);
//   parallelism.expert_tensor (expert-tensor-parallel size, default = tensor) and
//   parallelism.moe_dispatcher (alltoall | allgather) (docs/moe.md);
//   parallelism.deepspeed.{reduce_bucket_size, stage3_prefetch_bucket_size, stage3_max_live_parameters,
//     stage3_max_reuse_distance, stage3_param_persistence_threshold, overlap_comm} (docs/zero-and-fsdp.md);
//   training.fusion (auto | eager | fused: one kernel per PyTorch op, or fused kernels; docs/compute-model.md);
//   compute.database (measured op database CSV) and compute.scale_from (the GPU it was measured on)
//     (docs/op-database.md).
constexpr std::string_view kKnownKeys[] = {
    "model.preset", "model.hf_config", "model.family", "model.num_layers", "model.hidden_size",
    "model.num_attention_heads", "model.num_query_groups", "model.kv_channels", "model.ffn_hidden_size",
    "model.gated_mlp", "model.vocab_size", "model.seq_length", "model.untie_embeddings",
    "model.parallel_block", "model.sliding_window", "model.mtp_layers",
    "model.mla.q_lora_rank", "model.mla.kv_lora_rank", "model.mla.qk_nope_head_dim",
    "model.mla.qk_rope_head_dim", "model.mla.v_head_dim",
    "model.moe.num_experts", "model.moe.router_topk", "model.moe.expert_ffn_hidden_size",
    "model.moe.shared_experts", "model.moe.layer_freq", "model.moe.first_dense_layers",
    "model.moe.capacity_factor",
    "model.normalization", "model.position_embedding", "model.add_bias_linear", "model.add_qkv_bias",

    "training.global_batch_size", "training.micro_batch_size", "training.precision", "training.recompute",
    "training.recompute_num_layers", "training.recompute_modules", "training.flash_attention", "training.attention_kernel", "training.fusion", "training.optimizer", "training.iterations",

    "parallelism.tensor", "parallelism.pipeline", "parallelism.data", "parallelism.context",
    "parallelism.expert", "parallelism.expert_tensor", "parallelism.moe_dispatcher", "parallelism.virtual_pipeline", "parallelism.first_stage_layers",
    "parallelism.last_stage_layers", "parallelism.account_for_embedding_in_pipeline_split",
    "parallelism.account_for_loss_in_pipeline_split", "parallelism.pipeline_layout", "parallelism.sequence_parallel", "parallelism.schedule",
    "parallelism.framework", "parallelism.zero_stage", "parallelism.overlap_grad_reduce",
    "parallelism.overlap_param_gather", "parallelism.tp_comm_overlap", "parallelism.grad_bucket_mb",
    "parallelism.deepspeed.reduce_bucket_size", "parallelism.deepspeed.stage3_prefetch_bucket_size",
    "parallelism.deepspeed.stage3_max_live_parameters", "parallelism.deepspeed.stage3_max_reuse_distance",
    "parallelism.deepspeed.stage3_param_persistence_threshold", "parallelism.deepspeed.overlap_comm",

    "cluster.gpu",
    "cluster.gpu_spec.name", "cluster.gpu_spec.vendor", "cluster.gpu_spec.architecture",
    "cluster.gpu_spec.sm_version", "cluster.gpu_spec.sm_count",
    "cluster.gpu_spec.peak_tflops.bf16", "cluster.gpu_spec.peak_tflops.fp8", "cluster.gpu_spec.peak_tflops.fp32",
    "cluster.gpu_spec.peak_tflops.fp16", "cluster.gpu_spec.peak_tflops.tf32",
    "cluster.gpu_spec.hbm_GBps", "cluster.gpu_spec.memory_gib", "cluster.gpu_spec.scale_up_GBps",
    "cluster.num_gpus", "cluster.gpus_per_node",
    "cluster.scale_up.kind", "cluster.scale_up.bandwidth_GBps", "cluster.scale_up.domain_size",
    "cluster.scale_up.job_gpus_per_domain",
    "cluster.nics_per_node", "cluster.nic_gbps",
    "cluster.network.topology", "cluster.network.tiers", "cluster.network.oversubscription",
    "cluster.network.pod_size", "cluster.network.switch_radix", "cluster.network.link_latency_ns",
    "cluster.network.switch_latency_ns", "cluster.network.dual_tor", "cluster.network.pcie_GBps",
    "cluster.network.routing",

    "nccl.*",

    "algorithms.all_reduce", "algorithms.all_gather", "algorithms.reduce_scatter",
    "algorithms.reduction_server.servers", "algorithms.reduction_server.nic_gbps",
    "algorithms.reduction_server.latency_us",

    "simulation.network_model", "simulation.seed", "simulation.threads", "simulation.per_rank",
    "simulation.max_ops",

    "faults[].kind", "faults[].at_s", "faults[].always", "faults[].link", "faults[].factor",
    "faults[].node", "faults[].nic", "faults[].rank",

    "output.trace", "output.csv",

    "compute.database", "compute.scale_from", "compute.interference",

    "reference.source", "reference.confidence", "reference.iteration_time_s", "reference.tflops_per_gpu",
    "reference.mfu", "reference.hfu", "reference.tokens_per_s_per_gpu", "reference.busbw_GBps",
    "reference.flops_convention", "reference.notes",

    "collective.op", "collective.tool", "collective.library",
    "collective.points[].size", "collective.points[].busbw_GBps", "collective.points[].algbw_GBps",
    "collective.points[].nccl_algo",
};

// NCCL variables people commonly set (NCCL user guide, "Environment Variables"); only used to
// suggest a spelling for a key under `nccl:` that lacks the NCCL_ prefix.
const std::vector<std::string> kCommonNcclVariables = {
    "NCCL_ALGO", "NCCL_PROTO", "NCCL_P2P_PXN_LEVEL", "NCCL_PXN_DISABLE", "NCCL_MAX_NCHANNELS",
    "NCCL_MIN_NCHANNELS", "NCCL_NVLS_ENABLE", "NCCL_BUFFSIZE", "NCCL_CROSS_NIC", "NCCL_COLLNET_ENABLE",
    "NCCL_NCHANNELS_PER_NET_PEER", "NCCL_P2P_NET_CHUNKSIZE", "NCCL_IB_HCA", "NCCL_NET_GDR_LEVEL",
    "NCCL_MIN_CTAS", "NCCL_MAX_CTAS"};

constexpr std::string_view kNcclPrefix = "NCCL_";

enum class Shape { Value, Mapping, ListOfMappings, Environment };

struct KeyNode {
  Shape shape = Shape::Value;
  std::map<std::string, KeyNode> children;
};

struct Schema {
  KeyNode root{Shape::Mapping, {}};
  std::map<std::string, std::string> leaf_paths;  // last component -> full path (first one listed)
};

const Schema& schema() {
  static const Schema built = [] {
    Schema s;
    for (std::string_view path : kKnownKeys) {
      KeyNode* node = &s.root;
      std::size_t start = 0;
      while (true) {
        const std::size_t dot = path.find('.', start);
        std::string part(path.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
        const bool last = dot == std::string_view::npos;
        if (part == "*") {
          node->shape = Shape::Environment;
          break;
        }
        const bool list = part.size() > 2 && part.ends_with("[]");
        if (list) part.resize(part.size() - 2);
        KeyNode& child = node->children[part];
        if (list) child.shape = Shape::ListOfMappings;
        else if (!last && child.shape == Shape::Value) child.shape = Shape::Mapping;
        if (last) {
          if (path.find('[') == std::string_view::npos) s.leaf_paths.emplace(part, std::string(path));
          break;
        }
        node = &child;
        start = dot + 1;
      }
    }
    return s;
  }();
  return built;
}

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

std::string upper(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

[[noreturn]] void unknown_key(const std::string& file, const std::string& parent, const std::string& key,
                              const KeyNode& where) {
  const std::string full = join_path(parent, key);
  std::string message = "unknown key " + full;
  if (where.shape == Shape::Environment) {
    std::string guess = closest_match(upper(key), kCommonNcclVariables);
    if (guess.empty()) guess = std::string(kNcclPrefix) + upper(key);
    throw ScenarioError(file, full, message + "; NCCL settings are environment variables starting with NCCL_; did you mean " +
                                        join_path(parent, guess) + "?");
  }
  // The same name in another section is the likeliest intent ("model.global_batch_size").
  const auto& leaves = schema().leaf_paths;
  if (auto it = leaves.find(key); it != leaves.end() && it->second != full)
    throw ScenarioError(file, full, message + "; did you mean " + it->second + "?");
  std::vector<std::string> siblings;
  for (const auto& [name, node] : where.children) siblings.push_back(name);
  if (const std::string guess = closest_match(key, siblings); !guess.empty())
    throw ScenarioError(file, full, message + "; did you mean " + join_path(parent, guess) + "?");
  throw ScenarioError(file, full, message + "; known keys" + (parent.empty() ? "" : " under " + parent) + ": " +
                                      join(siblings));
}

void check_node(const YAML::Node& node, const KeyNode& schema_node, const std::string& path, const std::string& file);

void check_mapping(const YAML::Node& node, const KeyNode& schema_node, const std::string& path,
                   const std::string& file) {
  if (is_missing(node)) return;
  if (!node.IsMap())
    throw ScenarioError(file, path, "expected a mapping of keys, got " + describe_node(node));
  std::set<std::string> seen;
  for (auto it = node.begin(); it != node.end(); ++it) {
    if (!it->first.IsScalar())
      throw ScenarioError(file, path, "keys must be plain names, got " + describe_node(it->first) + " as a key");
    const std::string key = it->first.Scalar();
    const std::string full = join_path(path, key);
    if (!seen.insert(key).second) throw ScenarioError(file, full, "duplicate key " + full);
    if (schema_node.shape == Shape::Environment) {
      if (!key.starts_with(kNcclPrefix)) unknown_key(file, path, key, schema_node);
      continue;
    }
    const auto child = schema_node.children.find(key);
    if (child == schema_node.children.end()) unknown_key(file, path, key, schema_node);
    check_node(it->second, child->second, full, file);
  }
}

void check_node(const YAML::Node& node, const KeyNode& schema_node, const std::string& path, const std::string& file) {
  switch (schema_node.shape) {
    case Shape::Value: return;  // typed getters check values
    case Shape::Mapping:
    case Shape::Environment: check_mapping(node, schema_node, path, file); return;
    case Shape::ListOfMappings:
      if (is_missing(node)) return;
      if (!node.IsSequence()) throw ScenarioError(file, path, "expected a list, got " + describe_node(node));
      for (std::size_t i = 0; i < node.size(); ++i) {
        const std::string item = path + "[" + std::to_string(i) + "]";
        if (!node[i].IsMap()) throw ScenarioError(file, item, "expected a mapping of keys, got " + describe_node(node[i]));
        KeyNode element = schema_node;
        element.shape = Shape::Mapping;
        check_mapping(node[i], element, item, file);
      }
      return;
  }
}

}  // namespace

void check_known_keys(const YAML::Node& root, const std::string& file) {
  if (is_missing(root)) return;
  if (!root.IsMap())
    throw ScenarioError(file, "", "expected a mapping of sections (model, training, cluster, ...), got " +
                                      describe_node(root));
  check_mapping(root, schema().root, "", file);
}

void check_known_model_keys(const YAML::Node& model, const std::string& file) {
  check_node(model, schema().root.children.at("model"), "model", file);
}

void check_override_path(const std::vector<std::string>& keys) {
  const KeyNode* node = &schema().root;
  std::string path;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const std::string& key = keys[i];
    if (node->shape == Shape::Environment) {
      if (!key.starts_with(kNcclPrefix)) unknown_key("--set", path, key, *node);
      if (i + 1 != keys.size())
        throw ScenarioError("--set", join_path(path, key), join_path(path, key) + " is a value, not a mapping");
      return;
    }
    if (node->shape == Shape::ListOfMappings)
      throw ScenarioError("--set", path, "cannot set a key inside the list " + path + "; set the whole list, e.g. --set " +
                                             path + "=[...]");
    if (node->shape == Shape::Value)
      throw ScenarioError("--set", path, path + " is a value, not a mapping");
    const auto child = node->children.find(key);
    if (child == node->children.end()) unknown_key("--set", path, key, *node);
    node = &child->second;
    path = join_path(path, key);
  }
}

}  // namespace trainsim::scenario_detail
