#pragma once
// Reading a scenario: YAML text -> `--set` overrides -> presets -> defaults -> validation.
// Every problem is a ScenarioError naming the file, the key path and what was expected; a bad value
// that an override gave names that override ("--set parallelism.tensor=abc") instead of the file.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim {

// The blocks a command reads, so that it asks for what it uses and no more.
enum class ScenarioNeeds {
  // A training job (model, training, parallelism) or a collective benchmark: run, memory, ops,
  // sweep, tune, validate.
  Job,
  // The cluster and what acts on it (nccl, algorithms, faults, collective): topo, nccl-test. The
  // job blocks may be absent; when present they are checked for unknown keys but not read, so a
  // batch that does not divide cannot stop a command that never uses it. A `--set` of a job key
  // is an error: it would change nothing.
  ClusterOnly,
  // run --workload FILE: the workload comes from the file. With a model block the scenario is read as for Job (the
  // report's throughput figures use it); without one, as for ClusterOnly, the file's header giving the parallel sizes.
  JobIfModel,
};

// Where a scenario's YAML comes from: a file (the usual case, so a path converts implicitly), or text held in
// memory, such as a Python dict turned into YAML, with a label that stands for the file in error messages and
// the scenario's name, and against whose folder relative paths in it resolve (none: the working directory).
struct ScenarioSource {
  ScenarioSource() = default;
  ScenarioSource(std::string path) : label(std::move(path)) {}
  ScenarioSource(const char* path) : label(path) {}
  static ScenarioSource from_text(std::string yaml_text, std::string text_label) {
    ScenarioSource s(std::move(text_label));
    s.text = std::move(yaml_text);
    return s;
  }
  std::string label;                // the file's path, or the in-memory text's label
  std::optional<std::string> text;  // set: the YAML itself, and `label` is not read from disk
};

// `overrides` are "key.path=value" strings from `--set`; values are parsed as YAML scalars/flow.
Scenario load_scenario(const ScenarioSource& source, const std::vector<std::string>& overrides = {},
                       ScenarioNeeds needs = ScenarioNeeds::Job);
Scenario parse_scenario(const std::string& yaml_text, const std::string& file_label,
                        const std::vector<std::string>& overrides = {}, ScenarioNeeds needs = ScenarioNeeds::Job);

}  // namespace trainsim
