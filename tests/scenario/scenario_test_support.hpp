#pragma once
// Helpers shared by the scenario tests: a small valid scenario, YAML edits that do not go through
// the code under test (`--set` is tested separately), and capturing the ScenarioError a parse gives.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"

namespace trainsim::test {

// GPT-style 1.3B-ish model on 16 H100s: tensor 2 x pipeline 2 x data 4 (derived).
inline const char* const kValidScenario = R"(
model:
  family: gpt
  num_layers: 24
  hidden_size: 2048
  num_attention_heads: 16
  vocab_size: 51200
  seq_length: 2048
training:
  global_batch_size: 64
  micro_batch_size: 2
  precision: bf16
parallelism:
  tensor: 2
  pipeline: 2
cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
)";

// Sets (or, with value == nullptr, removes) `path` ("a.b.c") in a YAML document and returns the new text.
inline std::string edit(const std::string& yaml, const std::string& path, const char* value) {
  YAML::Node root = YAML::Load(yaml);
  std::vector<std::string> keys;
  for (std::size_t start = 0;;) {
    const std::size_t dot = path.find('.', start);
    keys.push_back(path.substr(start, dot == std::string::npos ? std::string::npos : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  std::vector<YAML::Node> chain{root};
  for (std::size_t i = 0; i + 1 < keys.size(); ++i) {
    YAML::Node next = chain.back()[keys[i]];
    if (!next.IsDefined() || next.IsNull()) {
      chain.back()[keys[i]] = YAML::Node(YAML::NodeType::Map);
      next.reset(chain.back()[keys[i]]);
    }
    chain.push_back(next);
  }
  if (value == nullptr)
    chain.back().remove(keys.back());
  else
    chain.back()[keys.back()] = YAML::Load(value);
  YAML::Emitter out;
  out << root;
  return out.c_str();
}

struct CaughtError {
  bool thrown = false;
  std::string what, file, key;
};

inline CaughtError parse_error(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
  CaughtError e;
  try {
    parse_scenario(yaml, "test.yaml", overrides);
  } catch (const ScenarioError& err) {
    e.thrown = true;
    e.what = err.what();
    e.file = err.file();
    e.key = err.key();
  }
  return e;
}

}  // namespace trainsim::test

// The parse must fail with a ScenarioError whose key is `key` and whose message contains every
// one of the given fragments.
#define EXPECT_SCENARIO_ERROR(yaml_text, expected_key, ...)                       \
  do {                                                                            \
    const auto caught_ = ::trainsim::test::parse_error(yaml_text);                \
    ASSERT_TRUE(caught_.thrown) << "no ScenarioError for key " << (expected_key); \
    EXPECT_EQ(caught_.key, (expected_key)) << caught_.what;                       \
    for (const std::string fragment_ : std::vector<std::string>{__VA_ARGS__})     \
      EXPECT_NE(caught_.what.find(fragment_), std::string::npos)                  \
          << "message lacks '" << fragment_ << "': " << caught_.what;             \
  } while (0)
