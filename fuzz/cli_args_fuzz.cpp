// libFuzzer target for the text the command line hands to trainsim's parsers: `--set KEY=VALUE`
// overrides (through the whole loader, on a small valid scenario), nccl-test's -b/-e/-i sizes
// (parse_byte_size), sweep's `--vary`/`--zip` lists and a:b:step ranges, tune's `--space` lists and
// `--tokens` counts. Each may reject its input, but only with trainsim::Error (design.md: "Bad
// input never crashes"); anything else escaping, a sanitizer report or a broken invariant below is
// a bug. Built with -DTRAINSIM_FUZZ=ON (clang):
//   ./cli_args_fuzz -max_len=512 corpus/
// The first byte picks the parser, the rest is its arguments, one per line.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "explore/sweep_spec.hpp"
#include "explore/tune_rank.hpp"
#include "explore/tune_space.hpp"
#include "scenario/scenario_loader.hpp"

namespace {

// tests/scenario's small valid scenario: 16 H100s, TP 2 x PP 2 x DP 4.
constexpr const char* kBase = R"(
model: {family: gpt, num_layers: 24, hidden_size: 2048, num_attention_heads: 16, vocab_size: 51200, seq_length: 2048}
training: {global_batch_size: 64, micro_batch_size: 2, precision: bf16}
parallelism: {tensor: 2, pipeline: 2}
cluster: {gpu: H100-SXM, num_gpus: 16, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400}
)";

// A broken invariant: abort so libFuzzer keeps the input.
void check(bool ok) {
  if (!ok) std::abort();
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t nl = text.find('\n', start);
    out.push_back(text.substr(start, nl == std::string::npos ? std::string::npos : nl - start));
    if (nl == std::string::npos) break;
    start = nl + 1;
  }
  return out;
}

void fuzz_overrides(const std::vector<std::string>& args, trainsim::ScenarioNeeds needs) {
  try {
    trainsim::parse_scenario(kBase, "fuzz.yaml", args, needs);
  } catch (const trainsim::ScenarioError& e) {
    // An error blamed on an override names one the user gave, as given.
    if (e.file().rfind("--set ", 0) == 0) {
      const std::string named = e.file().substr(6);
      bool given = false;
      for (const auto& a : args) given = given || a == named;
      check(given);
    }
  }
}

void fuzz_byte_size(const std::string& text) {
  const auto bytes = trainsim::parse_byte_size(text);
  if (!bytes) return;
  check(*bytes >= 0);
  check(trainsim::parse_byte_size(std::to_string(*bytes)) == bytes);  // plain bytes read back
}

void fuzz_sweep(const std::vector<std::string>& args) {
  // Lines before an empty one are --vary, after it --zip.
  std::vector<std::string> vary, zip;
  bool zipped = false;
  for (const auto& a : args) {
    if (a.empty())
      zipped = true;
    else
      (zipped ? zip : vary).push_back(a);
  }
  const trainsim::explore::Sweep sweep = trainsim::explore::make_sweep(vary, zip, vary.size() / 2);
  std::size_t points = 1;
  for (const auto& axis : sweep.axes) {
    check(axis.size() >= 1 && axis.size() <= trainsim::explore::kMaxValuesPerAxis);
    for (const auto& key : axis.keys) check(key.values.size() == axis.size());
    points *= axis.size();
  }
  check(points == sweep.size() && points <= trainsim::explore::kMaxSweepPoints);
}

void fuzz_tune(const std::vector<std::string>& args) {
  trainsim::explore::SpaceSpec spec;
  for (const auto& a : args) trainsim::explore::add_space_values(spec, a);
  for (const auto& [dim, values] : spec.given) check(!values.empty());
}

void fuzz_tokens(const std::string& text) {
  const auto tokens = trainsim::explore::parse_token_count(text);
  if (tokens) check(std::isfinite(*tokens) && *tokens > 0);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  try {
    switch (data[0] % 6) {
      case 0: fuzz_overrides(lines(text), trainsim::ScenarioNeeds::Job); break;
      case 1: fuzz_overrides(lines(text), trainsim::ScenarioNeeds::ClusterOnly); break;
      case 2: fuzz_byte_size(text); break;
      case 3: fuzz_sweep(lines(text)); break;
      case 4: fuzz_tune(lines(text)); break;
      default: fuzz_tokens(text); break;
    }
  } catch (const trainsim::Error&) {
    // Rejected with a message: the expected outcome for most inputs.
  }
  return 0;
}
