// Reads the model presets in data/models/*.yaml. Each file is one preset: `name` (= the file stem),
// `description`, `source` and a `model:` mapping in the scenario spec's keys. The scenario parser applies the
// mapping (and reports bad values with the user's key paths); this loader only checks what would otherwise
// surface later as a confusing error: the file's shape, key names, and that the core sizes are positive integers.
#include "model/model_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>

#include "core/data_dir.hpp"
#include "core/error.hpp"
#include "core/strings.hpp"

namespace trainsim {

namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The `model:` keys of docs/scenario-keys.md (`preset` and `hf_config` make no sense inside a preset).
const std::set<std::string> kModelKeys = {
    "family",          "num_layers", "hidden_size", "num_attention_heads", "num_query_groups", "kv_channels",
    "ffn_hidden_size", "gated_mlp",  "vocab_size",  "seq_length",          "untie_embeddings", "parallel_block",
    "sliding_window",  "mla",        "moe"};
const std::set<std::string> kTopKeys = {"name",  "description",      "source",
                                        "model", "pipeline_layouts", "pipeline_layouts_source"};
// Sizes every preset must state: without them no FLOP or memory count is possible.
const char* const kRequiredPositive[] = {"num_layers",      "hidden_size", "num_attention_heads",
                                         "ffn_hidden_size", "vocab_size",  "seq_length"};

[[noreturn]] void fail(const std::string& file, const std::string& key, const std::string& what) {
  throw Error(fmt::format("{}: {}{}", file, key.empty() ? "" : key + ": ", what));
}

void reject_unknown(const YAML::Node& map, const std::set<std::string>& known, const std::string& prefix,
                    const std::string& file) {
  const std::vector<std::string> candidates(known.begin(), known.end());
  for (const auto& kv : map) {
    const std::string k = kv.first.as<std::string>();
    if (known.count(k) != 0) continue;
    const std::string guess = closest_match(k, candidates);
    fail(file, prefix + k,
         guess.empty() ? "unknown key" : fmt::format("unknown key; did you mean {}{}?", prefix, guess));
  }
}

std::string required_string(const YAML::Node& root, const std::string& key, const std::string& file) {
  const YAML::Node n = root[key];
  if (!n || !n.IsScalar() || n.Scalar().empty()) fail(file, key, "expected a non-empty string");
  return n.Scalar();
}

// `pipeline_layouts:` maps "PIPELINExVIRTUAL" to a layout string; the layout itself is parsed against the model
// when a scenario uses it (scenario/pipeline_layout.cpp), so only the keys' shape is checked here.
void read_pipeline_layouts(const YAML::Node& root, const std::string& file, ModelPreset& p) {
  const YAML::Node layouts = root["pipeline_layouts"];
  if (!layouts) {
    if (root["pipeline_layouts_source"]) fail(file, "pipeline_layouts_source", "given without pipeline_layouts");
    return;
  }
  if (!layouts.IsMap()) fail(file, "pipeline_layouts", "expected a mapping like \"8x2\": \"Et*4|(t*4|)*14tL\"");
  p.pipeline_layouts_source = required_string(root, "pipeline_layouts_source", file);
  for (const auto& kv : layouts) {
    const std::string key = kv.first.as<std::string>();
    const std::string at = "pipeline_layouts." + key;
    static const std::regex kShape("([0-9]{1,4})x([0-9]{1,4})");
    std::smatch m;
    if (!std::regex_match(key, m, kShape)) fail(file, at, "expected PIPELINExVIRTUAL, e.g. 8x2");
    const int pipeline = std::stoi(m[1].str());
    const int virtual_pipeline = std::stoi(m[2].str());
    if (pipeline < 2 || virtual_pipeline < 1) fail(file, at, "pipeline must be >= 2 and virtual_pipeline >= 1");
    if (!kv.second.IsScalar() || kv.second.Scalar().empty()) fail(file, at, "expected a layout string");
    p.pipeline_layouts[{pipeline, virtual_pipeline}] = kv.second.Scalar();
  }
}

ModelPreset load_preset(const fs::path& path) {
  const std::string file = path.string();
  YAML::Node root;
  try {
    root = YAML::LoadFile(file);
  } catch (const YAML::Exception& ex) { fail(file, "", fmt::format("malformed YAML: {}", ex.what())); }
  if (!root.IsMap()) fail(file, "", "expected a mapping with name, description, source and model");
  reject_unknown(root, kTopKeys, "", file);

  ModelPreset p;
  p.file = file;
  p.name = required_string(root, "name", file);
  p.description = required_string(root, "description", file);
  required_string(root, "source", file);  // every preset must say where its numbers come from
  // `preset: NAME` in a scenario must lead to data/models/NAME.yaml, so the two may not disagree.
  if (p.name != path.stem().string()) {
    fail(file, "name", fmt::format("'{}' differs from the file name '{}'", p.name, path.stem().string()));
  }

  p.model = root["model"];
  if (!p.model || !p.model.IsMap()) fail(file, "model", "expected a mapping of model keys");
  reject_unknown(p.model, kModelKeys, "model.", file);
  for (const char* key : kRequiredPositive) {
    const YAML::Node n = p.model[key];
    const std::string path_key = std::string("model.") + key;
    if (!n || !n.IsScalar()) fail(file, path_key, "missing; expected a positive integer");
    try {
      if (n.as<long long>() <= 0) fail(file, path_key, fmt::format("must be > 0, got {}", n.Scalar()));
    } catch (const YAML::Exception&) {
      fail(file, path_key, fmt::format("expected a positive integer, got '{}'", n.Scalar()));
    }
  }
  read_pipeline_layouts(root, file, p);
  return p;
}

}  // namespace

ModelCatalog ModelCatalog::load(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw Error(fmt::format("{}: model preset directory not found", dir));
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") files.push_back(entry.path());
  }
  if (ec) throw Error(fmt::format("{}: cannot list model presets: {}", dir, ec.message()));
  std::sort(files.begin(), files.end());  // deterministic order whatever the file system returns

  ModelCatalog cat;
  std::set<std::string> seen;
  for (const auto& f : files) {
    ModelPreset p = load_preset(f);
    if (!seen.insert(lower(p.name)).second)
      fail(f.string(), "name", fmt::format("preset '{}' is defined twice", p.name));
    cat.presets_.push_back(std::move(p));
  }
  return cat;
}

const ModelCatalog& ModelCatalog::builtin() {
  static const ModelCatalog cat = load(data_dir() + "/models");
  return cat;
}

const ModelPreset* ModelCatalog::find(const std::string& name) const {
  const std::string key = lower(name);
  for (const auto& p : presets_) {
    if (lower(p.name) == key) return &p;
  }
  return nullptr;
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  out.reserve(presets_.size());
  for (const auto& p : presets_) out.push_back(p.name);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace trainsim
