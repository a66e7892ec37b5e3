#pragma once
// Reading a scenario: YAML text -> `--set` overrides -> presets -> defaults -> validation.
// Every problem is a ScenarioError naming the file, the key path and what was expected.
#include <string>
#include <vector>

#include "scenario/scenario.hpp"

namespace trainsim {

// `overrides` are "key.path=value" strings from `--set`; values are parsed as YAML scalars/flow.
Scenario load_scenario(const std::string& path, const std::vector<std::string>& overrides = {});
Scenario parse_scenario(const std::string& yaml_text, const std::string& file_label,
                        const std::vector<std::string>& overrides = {});

}  // namespace trainsim
