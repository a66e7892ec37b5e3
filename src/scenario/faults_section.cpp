// The `faults:` list. Each event is one of the kinds in spec/scenario.md with exactly the fields
// that kind uses, and a time: `at_s` (seconds into the run) or `always: true`. Whether a node,
// NIC or rank exists in the cluster is checked in validation.cpp.
#include <set>

#include "core/strings.hpp"
#include "scenario/physical_bounds.hpp"
#include "scenario/sections.hpp"

namespace trainsim::scenario_detail {

namespace {

struct KindFields {
  const char* name;
  FaultKind kind;
  std::set<std::string> fields;  // besides kind / at_s / always
};

const std::vector<KindFields>& kinds() {
  static const std::vector<KindFields> table = {
      {"link_down", FaultKind::LinkDown, {"link"}},      {"link_degraded", FaultKind::LinkDegraded, {"link", "factor"}},
      {"nic_down", FaultKind::NicDown, {"node", "nic"}}, {"gpu_slow", FaultKind::GpuSlow, {"rank", "factor"}},
      {"node_down", FaultKind::NodeDown, {"node"}},
  };
  return table;
}

FaultSpec read_fault(const Section& event) {
  std::vector<std::string> names;
  for (const auto& k : kinds()) names.emplace_back(k.name);
  if (!event.has("kind")) event.missing("kind", "one of " + join(names, " | "));
  const KindFields& kind =
      kinds()[static_cast<std::size_t>(parse_choice(event.get("kind"), event.path_of("kind"), event.file(), names))];

  FaultSpec f;
  f.kind = kind.kind;
  for (auto it = event.node().begin(); it != event.node().end(); ++it) {
    const std::string key = it->first.Scalar();
    if (key == "kind" || key == "at_s" || key == "always" || kind.fields.count(key)) continue;
    event.fail(key, "'" + key + "' does not apply to a " + kind.name + " fault");
  }
  for (const std::string& field : kind.fields)
    if (!event.has(field)) event.missing(field, std::string("a ") + kind.name + " fault needs it");

  const bool always = event.boolean("always").value_or(false);
  f.at_s = event.number("at_s", Bound::NonNegative);
  if (f.at_s) require_time_in_range(event, "at_s", *f.at_s, 1);
  if (always && f.at_s) event.fail("at_s", "give at_s or always: true, not both");
  if (!always && !f.at_s) event.missing("at_s", "seconds into the run, or always: true");
  if (always) f.at_s.reset();

  if (kind.fields.count("link")) {
    f.link = *event.string("link");
    if (f.link.empty()) event.fail("link", "expected a link name, got an empty string");
  }
  if (kind.fields.count("factor")) f.factor = *event.number("factor", Bound::Positive);
  if (kind.fields.count("node")) f.node = *event.int_value("node", Bound::NonNegative);
  if (kind.fields.count("nic")) f.nic = *event.int_value("nic", Bound::NonNegative);
  if (kind.fields.count("rank")) f.rank = *event.int_value("rank", Bound::NonNegative);
  return f;
}

}  // namespace

std::vector<FaultSpec> read_faults(const YAML::Node& faults, const std::string& file) {
  std::vector<FaultSpec> out;
  if (is_missing(faults)) return out;
  if (!faults.IsSequence())
    throw ScenarioError(file, "faults", "expected a list of fault events, got " + describe_node(faults));
  for (std::size_t i = 0; i < faults.size(); ++i)
    out.push_back(read_fault(Section(faults[i], "faults[" + std::to_string(i) + "]", file)));
  return out;
}

}  // namespace trainsim::scenario_detail
