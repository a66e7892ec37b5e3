// The `training:` block.
#include <algorithm>

#include "core/error.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

// null: every layer of each stage; a number: the same count for every stage; a list: one per stage.
std::vector<int> read_recompute_layers(const Section& training) {
  if (!training.has("recompute_num_layers")) return {};
  const YAML::Node node = training.get("recompute_num_layers");
  const std::string path = training.path_of("recompute_num_layers");
  if (node.IsSequence()) {
    if (node.size() == 0)
      training.fail("recompute_num_layers",
                    "expected a non-negative integer or a list with one per pipeline stage, got an empty list");
    std::vector<int> layers;
    for (std::size_t i = 0; i < node.size(); ++i)
      layers.push_back(parse_int(node[i], path + "[" + std::to_string(i) + "]", training.file(), Bound::NonNegative));
    return layers;
  }
  if (node.IsMap())
    training.fail("recompute_num_layers",
                  "expected a non-negative integer or a list with one per pipeline stage, got a mapping");
  return {parse_int(node, path, training.file(), Bound::NonNegative)};
}

// Megatron's --recompute-modules (transformer_config.py), or torchtitan's per-op policy (torchtitan_op): a list of
// module names; null = ["core_attn"].
// Whether the modules fit the model and the granularity is checked in validation (pipeline_validation.cpp).
RecomputeModules read_recompute_modules(const Section& training) {
  RecomputeModules r;
  if (!training.has("recompute_modules")) return r;
  const YAML::Node node = training.get("recompute_modules");
  const std::string path = training.path_of("recompute_modules");
  if (!node.IsSequence())
    training.fail("recompute_modules",
                  "expected a list of module names (core_attn, mlp, moe_act, moe, shared_experts, "
                  "layernorm, mla_up_proj, torchtitan_op) or null, got " +
                      describe_node(node));
  r.core_attn = false;  // a list replaces the default
  static const std::vector<std::string> kNames = {"core_attn",      "mlp",       "moe_act",     "moe",
                                                  "shared_experts", "layernorm", "mla_up_proj", "torchtitan_op"};
  for (std::size_t i = 0; i < node.size(); ++i) {
    const std::string at = path + "[" + std::to_string(i) + "]";
    const std::string name = parse_string(node[i], at, training.file());
    const auto it = std::find(kNames.begin(), kNames.end(), name);
    if (it == kNames.end()) {
      std::string known;
      for (const auto& n : kNames) known += (known.empty() ? "" : ", ") + n;
      throw ScenarioError(training.file(), at,
                          "unknown recompute module '" + name + "'; the modules are " + known +
                              " (Megatron's --recompute-modules, and torchtitan's per-op policy)");
    }
    switch (it - kNames.begin()) {
      case 0: r.core_attn = true; break;
      case 1: r.mlp = true; break;
      case 2: r.moe_act = true; break;
      case 3: r.moe = true; break;
      case 4: r.shared_experts = true; break;
      case 5: r.layernorm = true; break;
      case 6: r.mla_up_proj = true; break;
      default: r.torchtitan_op = true; break;
    }
  }
  return r;
}

}  // namespace

TrainingSpec read_training(const Section& training) {
  if (!training.present()) training.fail("", "missing required section training");
  TrainingSpec t;
  t.global_batch_size = training.require_integer("global_batch_size", Bound::Positive);
  training.read("micro_batch_size", t.micro_batch_size, Bound::Positive);
  if (auto p = training.choice<Precision>("precision", {{"bf16", Precision::BF16},
                                                        {"fp16", Precision::FP16},
                                                        {"fp8", Precision::FP8},
                                                        {"fp4", Precision::FP4},
                                                        {"fp32", Precision::FP32}}))
    t.precision = *p;
  if (auto r = training.choice<RecomputeGranularity>("recompute", {{"none", RecomputeGranularity::None},
                                                                   {"selective", RecomputeGranularity::Selective},
                                                                   {"full", RecomputeGranularity::Full}}))
    t.recompute = *r;
  t.recompute_num_layers = read_recompute_layers(training);
  t.recompute_modules = read_recompute_modules(training);
  t.recompute_modules_given = training.has("recompute_modules");
  training.read("flash_attention", t.flash_attention);
  if (auto k = training.choice<AttentionKernel>("attention_kernel", {{"auto", AttentionKernel::Auto},
                                                                     {"flash1", AttentionKernel::Flash1},
                                                                     {"flash2", AttentionKernel::Flash2},
                                                                     {"flash3", AttentionKernel::Flash3},
                                                                     {"flash4", AttentionKernel::Flash4},
                                                                     {"triton", AttentionKernel::Triton},
                                                                     {"cudnn", AttentionKernel::Cudnn}}))
    t.attention_kernel = *k;
  if (auto f = training.choice<Fusion>("fusion",
                                       {{"auto", Fusion::Auto}, {"eager", Fusion::Eager}, {"fused", Fusion::Fused}}))
    t.fusion = *f;
  if (auto o = training.choice<Optimizer>(
          "optimizer", {{"adam", Optimizer::Adam}, {"lamb", Optimizer::Lamb}, {"sgd", Optimizer::SGD}}))
    t.optimizer = *o;
  if (auto i = training.choice<OptimizerImplementation>("optimizer_implementation",
                                                        {{"auto", OptimizerImplementation::Auto},
                                                         {"fused", OptimizerImplementation::Fused},
                                                         {"foreach", OptimizerImplementation::Foreach},
                                                         {"for_loop", OptimizerImplementation::ForLoop},
                                                         {"decoupled_adamw", OptimizerImplementation::DecoupledAdamW}}))
    t.optimizer_implementation = *i;
  if (auto r = training.choice<Fp8Recipe>(
          "fp8_recipe",
          {{"delayed", Fp8Recipe::Delayed}, {"tensorwise", Fp8Recipe::Tensorwise}, {"mxfp8", Fp8Recipe::Mxfp8}}))
    t.fp8_recipe = *r;
  training.read("cuda_graphs", t.cuda_graphs);
  training.read("grad_reduce_in_bf16", t.grad_reduce_in_bf16);
  if (auto g = training.choice<int>("fp8_param_gather", {{"auto", -1}, {"true", 1}, {"false", 0}})) {
    t.fp8_param_gather_given = *g >= 0;
    t.fp8_param_gather = *g == 1;
  }
  training.read("bf16_layers_at_start", t.bf16_layers_at_start, Bound::NonNegative);
  training.read("bf16_layers_at_end", t.bf16_layers_at_end, Bound::NonNegative);
  // trainsim simulates one iteration, built as the steady state runs it (the distributed optimizer's first
  // parameter all-gather launched at zero_grad, as after a previous step), and every Megatron, FSDP and DeepSpeed
  // iteration ends in world-wide all-reduces (the rerun check, the gradient norm) that no rank passes early: the
  // next iteration starts from the same state, so simulating more would repeat the same time N-fold. Any other
  // value is refused rather than accepted and ignored.
  training.read("iterations", t.iterations, Bound::Positive);
  if (t.iterations != 1)
    training.fail("iterations",
                  "trainsim simulates one steady-state iteration (each iteration ends in world-wide "
                  "all-reduces, so the next starts from the same state and takes the same time); got " +
                      std::to_string(t.iterations) + ": remove the key or set 1");
  return t;
}

}  // namespace trainsim::scenario_detail
