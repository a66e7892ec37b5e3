// The `training:` block.
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
      training.fail("recompute_num_layers", "expected a non-negative integer or a list with one per pipeline stage, got an empty list");
    std::vector<int> layers;
    for (std::size_t i = 0; i < node.size(); ++i)
      layers.push_back(parse_int(node[i], path + "[" + std::to_string(i) + "]", training.file(), Bound::NonNegative));
    return layers;
  }
  if (node.IsMap())
    training.fail("recompute_num_layers", "expected a non-negative integer or a list with one per pipeline stage, got a mapping");
  return {parse_int(node, path, training.file(), Bound::NonNegative)};
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
                                                        {"fp32", Precision::FP32}}))
    t.precision = *p;
  if (auto r = training.choice<RecomputeGranularity>("recompute", {{"none", RecomputeGranularity::None},
                                                                    {"selective", RecomputeGranularity::Selective},
                                                                    {"full", RecomputeGranularity::Full}}))
    t.recompute = *r;
  t.recompute_num_layers = read_recompute_layers(training);
  training.read("flash_attention", t.flash_attention);
  if (auto k = training.choice<AttentionKernel>("attention_kernel", {{"auto", AttentionKernel::Auto},
                                                                     {"flash1", AttentionKernel::Flash1},
                                                                     {"flash2", AttentionKernel::Flash2},
                                                                     {"flash3", AttentionKernel::Flash3},
                                                                     {"triton", AttentionKernel::Triton},
                                                                     {"cudnn", AttentionKernel::Cudnn}}))
    t.attention_kernel = *k;
  if (auto o = training.choice<Optimizer>("optimizer", {{"adam", Optimizer::Adam},
                                                        {"lamb", Optimizer::Lamb},
                                                        {"sgd", Optimizer::SGD}}))
    t.optimizer = *o;
  training.read("iterations", t.iterations, Bound::Positive);
  return t;
}

}  // namespace trainsim::scenario_detail
