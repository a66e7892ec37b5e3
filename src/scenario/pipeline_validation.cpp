// How the transformer layers split over pipeline stages, as Megatron-LM allows it
// (megatron/core/transformer/transformer_config.py __post_init__, --decoder-first/last-pipeline-num-layers;
// transformer_block.py::get_num_layers_to_build):
//  - even: num_layers divisible by pipeline x virtual_pipeline (every model chunk equal);
//  - uneven: the first and/or last stage get the stated counts, the remaining layers split evenly
//    over the middle stages; with interleaving each stage's count must divide into its
//    virtual_pipeline chunks;
//  - account_for_embedding/loss_in_pipeline_split: the embedding and/or the output layer + loss count as one
//    layer each, num_layers + those split evenly, and the first (last) chunk builds one decoder layer fewer;
//  - pipeline_layout: every layer placed explicitly (pipeline_layout.cpp).
#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "model/model_catalog.hpp"
#include "scenario/validation.hpp"

namespace trainsim::scenario_detail {

namespace {}  // namespace

std::vector<int> validate_pipeline_split(const Scenario& s) {
  const ParallelSpec& p = s.parallelism;
  const int layers = s.model.num_layers;
  const int v = p.virtual_pipeline;
  const auto fail = [&](const std::string& key, const std::string& message) -> void {
    throw ScenarioError(s.file, key, message);
  };

  if (v > 1 && p.pipeline == 1)
    fail("parallelism.virtual_pipeline",
         "virtual_pipeline " + str(v) + " (interleaved 1F1B) needs parallelism.pipeline > 1");
  if (v > 1 && p.schedule == PipelineSchedule::GPipe)
    fail("parallelism.virtual_pipeline",
         "virtual_pipeline " + str(v) +
             " means the interleaved 1F1B schedule; it cannot be combined with schedule gpipe");
  if (!p.pipeline_layout_stages.empty()) {  // parallelism.pipeline_layout, already checked
    std::vector<int> stages(static_cast<std::size_t>(p.pipeline), 0);
    for (std::size_t i = 0; i < p.pipeline_layout_stages.size(); ++i) {
      const auto& st = p.pipeline_layout_stages[i];
      stages[i % static_cast<std::size_t>(p.pipeline)] += static_cast<int>(std::count(st.begin(), st.end(), 't'));
    }
    return stages;
  }

  const bool uneven = p.first_stage_layers || p.last_stage_layers;
  const bool accounted = p.account_for_embedding_in_pipeline_split || p.account_for_loss_in_pipeline_split;
  if (accounted) {
    const char* key = p.account_for_embedding_in_pipeline_split ? "parallelism.account_for_embedding_in_pipeline_split"
                                                                : "parallelism.account_for_loss_in_pipeline_split";
    // transformer_config.py: "num_layers_in_first_pipeline_stage and num_layers_in_last_pipeline_stage cannot be
    // set at the same time with account_for_embedding_in_pipeline_split and account_for_loss_in_pipeline_split".
    if (uneven)
      fail(key,
           "account_for_embedding/loss_in_pipeline_split cannot be combined with parallelism.first_stage_layers / "
           "last_stage_layers (Megatron rejects the combination)");
    const int slots =
        layers + (p.account_for_embedding_in_pipeline_split ? 1 : 0) + (p.account_for_loss_in_pipeline_split ? 1 : 0);
    const std::string what = "model.num_layers " + str(layers) + " + " + str(slots - layers) +
                             " (embedding / loss counted as layers) = " + str(slots);
    if (slots % p.pipeline != 0) fail(key, what + " is not divisible by pipeline " + str(p.pipeline));
    if ((slots / p.pipeline) % v != 0)
      fail("parallelism.virtual_pipeline", what + " gives " + str(slots / p.pipeline) +
                                               " per pipeline stage, not divisible by virtual_pipeline " + str(v));
    std::vector<int> stages(static_cast<std::size_t>(p.pipeline), slots / p.pipeline);
    if (p.account_for_embedding_in_pipeline_split) stages.front() -= 1;
    if (p.account_for_loss_in_pipeline_split) stages.back() -= 1;
    return stages;
  }
  if (uneven && p.pipeline == 1)
    fail(p.first_stage_layers ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers",
         "an uneven pipeline split needs parallelism.pipeline > 1");

  if (!uneven) {
    if (layers % (static_cast<std::int64_t>(p.pipeline) * v) != 0)
      fail(v > 1 ? "parallelism.virtual_pipeline" : "parallelism.pipeline",
           "model.num_layers " + str(layers) + " does not split evenly over pipeline " + str(p.pipeline) +
               " x virtual_pipeline " + str(v) + " = " + str(static_cast<std::int64_t>(p.pipeline) * v) +
               " model chunks (or give parallelism.first_stage_layers / last_stage_layers)");
    return std::vector<int>(static_cast<std::size_t>(p.pipeline), layers / p.pipeline);
  }

  const int first = p.first_stage_layers.value_or(0);
  const int last = p.last_stage_layers.value_or(0);
  const int middle_stages = p.pipeline - (p.first_stage_layers ? 1 : 0) - (p.last_stage_layers ? 1 : 0);
  const std::int64_t remaining = static_cast<std::int64_t>(layers) - first - last;
  const std::string given = "first_stage_layers " + str(first) + " + last_stage_layers " + str(last);
  const char* key = p.first_stage_layers ? "parallelism.first_stage_layers" : "parallelism.last_stage_layers";
  if (remaining < 0) fail(key, given + " exceeds model.num_layers " + str(layers));
  if (middle_stages == 0 && remaining != 0)
    fail(key, given + " must equal model.num_layers " + str(layers) + " with pipeline " + str(p.pipeline));
  int per_middle = 0;
  if (middle_stages > 0) {
    if (remaining % middle_stages != 0 || remaining == 0)
      fail(key, "the " + str(remaining) + " layers left after " + given + " do not split evenly over the " +
                    str(middle_stages) + " middle stages (at least one layer each)");
    per_middle = static_cast<int>(remaining / middle_stages);
  }
  if (v > 1) {
    if (first % v != 0)
      fail("parallelism.first_stage_layers",
           "first_stage_layers " + str(first) + " is not divisible by virtual_pipeline " + str(v));
    if (last % v != 0)
      fail("parallelism.last_stage_layers",
           "last_stage_layers " + str(last) + " is not divisible by virtual_pipeline " + str(v));
    if (per_middle % v != 0)
      fail("parallelism.virtual_pipeline",
           "each middle stage gets " + str(per_middle) + " layers, not divisible by virtual_pipeline " + str(v));
  }
  std::vector<int> stages(static_cast<std::size_t>(p.pipeline), per_middle);
  if (p.first_stage_layers) stages.front() = first;
  if (p.last_stage_layers) stages.back() = last;
  return stages;
}

namespace {

// A preset model whose layers do not split evenly over the (virtual) stages is trained with its recipe's layout
// (model_catalog.hpp, pipeline_layouts): Megatron itself would reject the even split, and the people who run such a
// model take the layout from the recipe. Only when the scenario gives no split of its own and the model keeps the
// preset's layer count; the report lists the choice (Scenario::inferred).
void adopt_recipe_layout(Scenario& s) {
  ParallelSpec& p = s.parallelism;
  if (p.framework != Framework::Megatron || p.pipeline < 2) return;
  if (p.first_stage_layers || p.last_stage_layers || p.account_for_embedding_in_pipeline_split ||
      p.account_for_loss_in_pipeline_split)
    return;
  const std::int64_t chunks = static_cast<std::int64_t>(p.pipeline) * p.virtual_pipeline;
  if (s.model.num_layers % chunks == 0) return;
  const ModelPreset* preset = ModelCatalog::builtin().find(s.model.name);
  if (preset == nullptr) return;
  const auto layout = preset->pipeline_layouts.find({p.pipeline, p.virtual_pipeline});
  if (layout == preset->pipeline_layouts.end()) return;
  const YAML::Node preset_layers = preset->model["num_layers"];
  if (!preset_layers || preset_layers.as<int>() != s.model.num_layers) return;
  std::string text = layout->second;
  // The MTP layers go before the loss in the last stage (Megatron-Bridge: last_layer = ["mtp"] * n + ["loss"]).
  if (s.model.mtp_layers > 0 && !text.empty() && text.back() == 'L')
    text.insert(text.size() - 1, std::string(static_cast<std::size_t>(s.model.mtp_layers), 'm'));
  p.pipeline_layout = text;
  s.inferred.push_back({"parallelism.pipeline_layout", text,
                        "not given; model.num_layers " + str(s.model.num_layers) +
                            " does not split evenly over pipeline " + str(p.pipeline) + " x virtual_pipeline " +
                            str(p.virtual_pipeline) + " = " + str(chunks) + " model chunks, so the " + preset->name +
                            " recipe's layout for this shape is used (" + preset->pipeline_layouts_source + ")"});
}

}  // namespace

void resolve_pipeline_layout(Scenario& s) {
  ParallelSpec& p = s.parallelism;
  // These are Megatron-LM's (GPTModel's MTP block, its pipeline split arguments); DeepSpeed and FSDP have none.
  if (p.framework != Framework::Megatron) {
    const auto megatron_only = [&](const std::string& key) {
      throw ScenarioError(s.file, key,
                          "is Megatron-LM's; framework " + std::string(to_string(p.framework)) +
                              " has no such option (use parallelism.framework: megatron)");
    };
    if (p.pipeline_layout) megatron_only("parallelism.pipeline_layout");
    if (p.account_for_embedding_in_pipeline_split) megatron_only("parallelism.account_for_embedding_in_pipeline_split");
    if (p.account_for_loss_in_pipeline_split) megatron_only("parallelism.account_for_loss_in_pipeline_split");
    if (s.model.mtp_layers > 0) megatron_only("model.mtp_layers");
    // Megatron's modules; torchtitan's per-op policy is checked with the list (validate_recompute_modules).
    if (s.training.recompute_modules_given && !s.training.recompute_modules.torchtitan_op)
      megatron_only("training.recompute_modules");
  }
  if (!p.pipeline_layout) adopt_recipe_layout(s);
  if (!p.pipeline_layout) return;
  p.pipeline_layout_stages = parse_pipeline_layout(s);
  // Megatron takes the virtual pipeline size from the layout when it is not given (transformer_config.py).
  p.virtual_pipeline = static_cast<int>(p.pipeline_layout_stages.size()) / p.pipeline;
}

namespace {

// torchtitan's per-op selective checkpointing, as trainsim models it: a whole-block policy of a PyTorch job (whose
// blocks are dense: framework fsdp has no MoE layer) over attention blocks whose attention is SDPA's fused kernel, with
// tensor parallelism sharding the sequence as torchtitan's TP plan does.
void validate_torchtitan_op(const Scenario& s) {
  const std::string key = "training.recompute_modules";
  const auto refuse = [&](const std::string& why) { throw ScenarioError(s.file, key, "torchtitan_op " + why); };
  RecomputeModules alone;
  alone.core_attn = false;
  alone.torchtitan_op = true;
  if (!(s.training.recompute_modules == alone))
    refuse("is a policy for the whole block; it cannot be combined with Megatron's modules");
  if (s.parallelism.framework != Framework::FSDP)
    refuse(
        "is PyTorch's selective activation checkpointing as torchtitan applies it; it needs "
        "parallelism.framework: fsdp (Megatron's modules are core_attn, mlp, moe_act, moe, shared_experts, "
        "layernorm, mla_up_proj)");
  if (s.model.mla)
    refuse("is modelled for standard attention blocks; this model has multi-latent attention (model.mla)");
  if (!s.training.flash_attention)
    refuse("keeps SDPA's fused-attention output; it needs training.flash_attention: true");
  if (s.parallelism.tensor > 1 && !s.parallelism.sequence_parallel)
    refuse(
        "is modelled with torchtitan's TP plan, which shards the sequence between blocks; set "
        "parallelism.sequence_parallel: true");
}

}  // namespace

// Megatron's checks of --recompute-modules (transformer_config.py __post_init__), and torchtitan_op's; unknown names
// are rejected when the list is read (training_section.cpp).
void validate_recompute_modules(const Scenario& s) {
  if (!s.training.recompute_modules_given) return;
  const std::string key = "training.recompute_modules";
  const RecomputeModules& r = s.training.recompute_modules;
  if (s.training.recompute != RecomputeGranularity::Selective)
    throw ScenarioError(s.file, key,
                        std::string("recompute_modules only applies with training.recompute: selective (got ") +
                            to_string(s.training.recompute) + ")");
  // "moe_act in recompute_modules is only supported with moe_grouped_gemm": the grouped experts of an MoE model.
  if (r.moe_act && !s.model.moe.enabled())
    throw ScenarioError(s.file, key,
                        "moe_act recomputes the routed experts' activation; it needs an MoE model "
                        "(model.moe.num_experts > 0)");
  // "mla_up_proj in recompute_modules is only supported with multi_latent_attention".
  if (r.mla_up_proj && !s.model.mla)
    throw ScenarioError(s.file, key,
                        "mla_up_proj recomputes the MLA up-projections; it needs multi-latent attention (model.mla)");
  if (r.torchtitan_op) validate_torchtitan_op(s);
}

void validate_recompute_layers(const Scenario& s, const std::vector<int>& stage_layers) {
  const std::vector<int>& counts = s.training.recompute_num_layers;
  if (counts.empty()) return;
  const std::string key = "training.recompute_num_layers";
  if (s.training.recompute != RecomputeGranularity::Full)
    throw ScenarioError(s.file, key, "recompute_num_layers only applies with training.recompute: full");
  if (counts.size() > 1 && counts.size() != stage_layers.size())
    throw ScenarioError(s.file, key,
                        str(static_cast<std::int64_t>(counts.size())) + " values for pipeline " +
                            str(static_cast<std::int64_t>(stage_layers.size())) +
                            "; give one number for every stage or one per stage");
  if (counts.size() == 1) {
    // One number for every stage: Megatron's block method recomputes min(N, layers of the stage).
    int most = 0;
    for (int layers : stage_layers) most = std::max(most, layers);
    if (counts.front() > most)
      throw ScenarioError(
          s.file, key,
          "recomputes " + str(counts.front()) + " layers per stage, but no pipeline stage has more than " + str(most));
    return;
  }
  for (std::size_t stage = 0; stage < stage_layers.size(); ++stage) {
    const int count = counts[stage];
    if (count > stage_layers[stage])
      throw ScenarioError(s.file, key,
                          "recomputes " + str(count) + " layers on pipeline stage " +
                              str(static_cast<std::int64_t>(stage)) + ", which has only " + str(stage_layers[stage]));
  }
}

}  // namespace trainsim::scenario_detail
