#pragma once
// Built-in model presets, read from data/models/*.yaml (one file per preset, keys as in the
// scenario's `model:` block, each number with its public source in a comment).
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace trainsim {

struct ModelPreset {
  std::string name;         // e.g. "gpt3-175b"
  std::string description;  // one line, e.g. "GPT-3 175B (Brown et al. 2020, Table 2.1)"
  std::string file;         // where it was read from
  YAML::Node model;         // the `model:` mapping; the scenario parser applies it under the user's keys
  // The pipeline layouts the model's published training recipe uses, by (pipeline, virtual_pipeline), in
  // Megatron's --pipeline-model-parallel-layout syntax (optional `pipeline_layouts:` block, "8x2": "Et*4|..."),
  // and where they come from. Validation takes one when the layers do not split evenly and the scenario gives
  // no split of its own.
  std::map<std::pair<int, int>, std::string> pipeline_layouts;
  std::string pipeline_layouts_source;
};

class ModelCatalog {
 public:
  // Loads every *.yaml under `dir` (default: data_dir()/models). Throws Error on malformed files.
  static ModelCatalog load(const std::string& dir);
  static const ModelCatalog& builtin();  // loaded once from data_dir()

  const ModelPreset* find(const std::string& name) const;  // nullptr if unknown
  std::vector<std::string> names() const;                  // sorted
  const std::vector<ModelPreset>& presets() const { return presets_; }

 private:
  std::vector<ModelPreset> presets_;
};

}  // namespace trainsim
