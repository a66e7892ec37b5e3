// Reading a scenario: YAML text -> `--set` overrides -> known-key check -> blocks -> validation.
#include "scenario/scenario_loader.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "core/error.hpp"
#include "scenario/key_schema.hpp"
#include "scenario/model_section.hpp"
#include "scenario/overrides.hpp"
#include "scenario/sections.hpp"
#include "scenario/validation.hpp"
#include "scenario/workload_fingerprint.hpp"

namespace trainsim {

namespace {

using namespace scenario_detail;

// 1-based line of the `---` marker that opens the document whose content starts at 0-based line
// `content_line`: document markers sit at column 0 (an indented `---` is content), so the last one at or
// before the content is its start. Without a marker (cannot happen for a second document) the content line.
int document_start_line(const std::string& text, int content_line) {
  int line = 0, marker = -1;
  for (std::size_t pos = 0; pos < text.size() && line <= content_line; ++line) {
    const std::size_t end = std::min(text.find('\n', pos), text.size());
    const std::string_view row(text.data() + pos, end - pos);
    if (row.substr(0, 3) == "---" && (row.size() == 3 || row[3] == ' ' || row[3] == '\t' || row[3] == '\r'))
      marker = line;
    pos = end + 1;
  }
  return (marker >= 0 ? marker : content_line) + 1;
}

// One scenario per file: yaml-cpp's Load would read the first document of a multi-document file and
// drop the rest without a word, so every further document with content is an error naming its line.
// (An empty trailing document, a lone `---` at the end, holds nothing to drop.)
YAML::Node parse_yaml(const std::string& text, const std::string& file) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw ScenarioError(file, "",
                        "YAML syntax error at line " + std::to_string(e.mark.line + 1) + ", column " +
                            std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
  for (std::size_t i = 1; i < documents.size(); ++i) {
    if (is_missing(documents[i])) continue;
    const int content = documents[i].Mark().line;
    const std::string where = content >= 0 ? " at line " + std::to_string(document_start_line(text, content)) : "";
    throw ScenarioError(file, "",
                        "a second YAML document starts" + where +
                            "; a scenario file holds one document (put each scenario in its own file)");
  }
  return documents.empty() ? YAML::Node() : documents.front();
}

constexpr const char* kJobBlocks[] = {"model", "training", "parallelism"};

// Under ScenarioNeeds::ClusterOnly an override of a job key would be accepted and never used.
void reject_job_overrides(const std::vector<std::string>& overrides) {
  for (const std::string& text : overrides)
    for (const char* block : kJobBlocks)
      if (const std::string key = override_key(text); key == block || key.starts_with(std::string(block) + "."))
        throw ScenarioError("--set " + text, key,
                            "this command does not read the " + std::string(block) +
                                " block (it uses the cluster, nccl, algorithms, faults and collective blocks)");
}

// Routing that spreads one flow's packets over several paths: there are no packets at flow level (adaptive is that
// level's closest), and a lossy receiver's go-back-N would take the reordering for loss.
void check_routing(const Scenario& s, const std::string& file) {
  const NetworkSpec::Routing routing = s.cluster.network.routing;
  if (routing == NetworkSpec::Routing::Spray && s.simulation.network_model == NetworkModel::Flow)
    throw ScenarioError(file, "cluster.network.routing",
                        "spray sends each packet of a flow its own way: it needs simulation.network_model: packet "
                        "(at flow level, adaptive is the closest)");
  if (routing != NetworkSpec::Routing::Ecmp && s.simulation.network_model == NetworkModel::Packet &&
      !s.cluster.network.roce.lossless)
    throw ScenarioError(file, "cluster.network.routing",
                        std::string(routing == NetworkSpec::Routing::Spray ? "spray" : "adaptive") +
                            " spreads a flow's packets over its equal-cost paths, which reorders them: it needs "
                            "cluster.network.roce.lossless: true (a lossy receiver's go-back-N takes reordering for "
                            "loss); use ecmp on a lossy fabric");
}

// The analytical network model prices a collective from the NICs' and the scale-up fabric's bandwidths and NCCL's
// latencies: the fabric beyond the NIC (its oversubscription, routing, per-hop latencies, PCIe, pods, dual ToRs)
// exists only at simulation.network_model flow or packet. A scenario that sets one of them under the analytical
// model gets a warning naming the keys, rather than a silent no-op.
void warn_fabric_keys_under_analytical(Scenario& s) {
  if (s.simulation.network_model != NetworkModel::Analytical) return;
  const NetworkSpec& n = s.cluster.network;
  const NetworkSpec defaults;
  std::vector<std::string> set;
  const auto note = [&set](bool differs, const char* key) {
    if (differs) set.emplace_back(std::string("cluster.network.") + key);
  };
  note(std::any_of(n.oversubscription.begin(), n.oversubscription.end(), [](double r) { return r != 1.0; }),
       "oversubscription");
  note(n.pod_size.has_value(), "pod_size");
  note(n.switch_radix != defaults.switch_radix, "switch_radix");
  note(n.link_latency_ns != defaults.link_latency_ns, "link_latency_ns");
  note(n.switch_latency_ns != defaults.switch_latency_ns, "switch_latency_ns");
  note(n.dual_tor != defaults.dual_tor, "dual_tor");
  note(n.pcie_GBps != defaults.pcie_GBps, "pcie_GBps");
  note(n.routing != defaults.routing, "routing");
  if (set.empty()) return;
  std::string keys;
  for (const std::string& k : set) keys += (keys.empty() ? "" : ", ") + k;
  s.warnings.push_back({set.front(), keys + " shape the fabric beyond the NICs, which the analytical network model "
                                            "does not simulate (it prices collectives from NIC and scale-up "
                                            "bandwidths): they take effect with simulation.network_model: flow or "
                                            "packet"});
}

Scenario build(const YAML::Node& root, const std::string& file, ScenarioNeeds needs) {
  check_known_keys(root, file);
  const Section top(root, "", file);
  if (!top.present())
    throw ScenarioError(file, "",
                        needs == ScenarioNeeds::Job
                            ? "empty scenario: expected model, training, parallelism and cluster sections"
                            : "empty scenario: expected a cluster section");

  Scenario s;
  s.file = file;
  s.name = std::filesystem::path(file).stem().string();
  if (needs == ScenarioNeeds::JobIfModel) needs = top.has("model") ? ScenarioNeeds::Job : ScenarioNeeds::ClusterOnly;
  const bool job_blocks = top.has("model") || top.has("training") || top.has("parallelism");
  if (needs == ScenarioNeeds::Job && !job_blocks && !top.has("collective"))
    throw ScenarioError(file, "model",
                        "missing required section model (or a collective block for a collective benchmark)");
  // A collective benchmark (validation README, "Extensions") has no job: only cluster, nccl and
  // collective. A command that needs only the cluster reads no job either.
  s.has_training_job = job_blocks && needs == ScenarioNeeds::Job;

  s.cluster = read_cluster(top.child("cluster"));
  s.nccl = read_nccl(top.child("nccl"));
  s.algorithms = read_algorithms(top.child("algorithms"));
  s.simulation = read_simulation(top.child("simulation"));
  s.output = read_output(top.child("output"));
  s.compute = read_compute(top.child("compute"));
  s.power = read_power(top.child("power"));
  s.cost = read_cost(top.child("cost"));
  s.faults = read_faults(top.get("faults"), file);
  s.reference = read_reference(top.child("reference"));
  s.collective = read_collective(top.child("collective"));
  check_routing(s, file);
  warn_fabric_keys_under_analytical(s);
  if (s.has_training_job) {
    s.model = read_model(top.child("model"));
    s.training = read_training(top.child("training"));
    s.parallelism = read_parallelism(top.child("parallelism"));
    s.resilience = read_resilience(top.child("training").child("resilience"));
    validate_job(s);
  }
  validate_faults(s);
  s.workload_fingerprint = workload_fingerprint(root);
  return s;
}

}  // namespace

Scenario parse_scenario(const std::string& yaml_text, const std::string& file_label,
                        const std::vector<std::string>& overrides, ScenarioNeeds needs) {
  try {
    if (needs == ScenarioNeeds::ClusterOnly) reject_job_overrides(overrides);
    const YAML::Node root = apply_overrides(parse_yaml(yaml_text, file_label), overrides);
    try {
      return build(root, file_label, needs);
    } catch (const ScenarioError& e) {
      // The file did not say it: the override did. Errors about a key the file gave (even one an
      // override made wrong, such as a divisibility) stay with the file.
      const std::string* by = e.file() == file_label ? override_of(overrides, e.key()) : nullptr;
      if (!by) throw;
      throw ScenarioError("--set " + *by, e.key(), e.detail());
    }
  } catch (const YAML::Exception& e) {
    // Every read goes through the typed getters, so this is a safety net for yaml-cpp surprises:
    // still the user's input, reported as such rather than as a crash.
    throw ScenarioError(file_label, "", "malformed YAML: " + e.msg);
  }
}

Scenario load_scenario(const ScenarioSource& source, const std::vector<std::string>& overrides, ScenarioNeeds needs) {
  if (source.text) return parse_scenario(*source.text, source.label, overrides, needs);
  const std::string& path = source.label;
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw ScenarioError(path, "", "cannot read scenario file (no such file, or not readable)");
  std::ostringstream text;
  text << in.rdbuf();
  return parse_scenario(text.str(), path, overrides, needs);
}

}  // namespace trainsim
