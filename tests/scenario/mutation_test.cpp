// Robustness: ~200 deterministic random mutations of a valid scenario. Each must either parse or
// fail with a trainsim::Error; any other exception (yaml-cpp's, std::out_of_range, ...) means bad
// input escaped the checks. (A crash fails the whole binary.) fuzz/scenario_fuzz.cpp does the same
// with libFuzzer's coverage-guided inputs.
#include <random>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

// Touches every block so that mutations reach every reader.
const char* const kRichScenario = R"(model:
  family: llama
  num_layers: 16
  hidden_size: 1024
  num_attention_heads: 16
  num_query_groups: 4
  ffn_hidden_size: 2816
  vocab_size: 32000
  seq_length: 4096
  sliding_window: 4096  # the whole sequence: a shorter window is refused with context 2
  moe: {num_experts: 8, router_topk: 2, expert_ffn_hidden_size: 1408, capacity_factor: 1.25}
training:
  global_batch_size: 64
  micro_batch_size: 2
  precision: bf16
  recompute: full
  recompute_num_layers: [2, 1]
parallelism:
  tensor: 2
  pipeline: 2
  context: 2
  expert: 2
  virtual_pipeline: 2
  sequence_parallel: true
  grad_bucket_mb: 40
cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
  scale_up: {kind: nvswitch, bandwidth_GBps: 450, domain_size: 8}
  nics_per_node: 8
  nic_gbps: 400
  network: {topology: rail-optimized, tiers: 3, oversubscription: [1, 1, 7], switch_radix: 64}
nccl: {NCCL_ALGO: Ring, NCCL_P2P_PXN_LEVEL: 2}
simulation: {network_model: flow, seed: 7, threads: 0}
faults:
  - {kind: gpu_slow, rank: 3, factor: 0.8, at_s: 1.5}
  - {kind: link_down, link: "n0-leaf0", always: true}
output: {trace: t.json}
reference: {source: x, confidence: low, iteration_time_s: 1.0, mfu: 0.4}
collective:
  op: all_reduce
  points: [{size: 1M, busbw_GBps: 100}, {size: 8G, busbw_GBps: 400}]
)";

// Characters and tokens that stress a YAML parser and the typed getters.
const char* const kTokens[] = {"[",
                               "]",
                               "{",
                               "}",
                               ":",
                               ",",
                               "-",
                               "'",
                               "\"",
                               "&a",
                               "*a",
                               "!!str",
                               "|",
                               ">",
                               "#",
                               "\n",
                               "  ",
                               "\t",
                               "0",
                               "-1",
                               "2.5",
                               "1e999",
                               "99999999999999999999",
                               "null",
                               "~",
                               "true",
                               "abc",
                               "NCCL_X",
                               "? x",
                               "<<",
                               "%YAML",
                               "\xff",
                               "\x00"};

std::string mutate(std::string text, std::mt19937& rng) {
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int edits = 1 + static_cast<int>(pick(3));
  for (int i = 0; i < edits && !text.empty(); ++i) {
    const std::size_t at = pick(text.size());
    switch (pick(5)) {
      case 0:  // delete a span
        text.erase(at, 1 + pick(12));
        break;
      case 1: {  // insert a token
        const std::string token = kTokens[pick(std::size(kTokens))];
        text.insert(at, token.empty() ? std::string(1, '\0') : token);
        break;
      }
      case 2: {  // overwrite one character
        text[at] = static_cast<char>(pick(256));
        break;
      }
      case 3: {  // duplicate a line
        const std::size_t start = text.rfind('\n', at) == std::string::npos ? 0 : text.rfind('\n', at) + 1;
        const std::size_t end = text.find('\n', at);
        const std::string line = text.substr(start, end == std::string::npos ? std::string::npos : end - start + 1);
        text.insert(start, line);
        break;
      }
      default: {  // replace the value after a colon with a hostile scalar
        const std::size_t colon = text.find(": ", at);
        if (colon == std::string::npos) break;
        const std::size_t end = text.find_first_of(",}\n", colon + 2);
        const char* values[] = {"0",     "-3",   "2.5",   "[1, 2]",     "{a: 1}",
                                "abc",   "null", "1e308", "2147483648", "9223372036854775807",
                                "\"7\"", "yes",  ""};
        text.replace(colon + 2, end == std::string::npos ? std::string::npos : end - colon - 2,
                     values[pick(std::size(values))]);
        break;
      }
    }
  }
  return text;
}

TEST(Mutation, RichScenarioIsValid) {
  // The mutations start from a valid file, or they would only ever test one early error.
  EXPECT_NO_THROW(parse_scenario(kRichScenario, "rich.yaml"));
}

TEST(Mutation, OnlyTrainsimErrorsEscape) {
  std::mt19937 rng(20240607);  // fixed: the same 200 inputs on every run
  int parsed = 0, rejected = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string input = mutate(i % 2 ? kRichScenario : test::kValidScenario, rng);
    try {
      parse_scenario(input, "mutant.yaml",
                     i % 7 == 0 ? std::vector<std::string>{"parallelism.tensor=1"} : std::vector<std::string>{});
      ++parsed;
    } catch (const Error&) { ++rejected; } catch (const std::exception& e) {
      ADD_FAILURE() << "mutant " << i << " raised " << typeid(e).name() << ": " << e.what() << "\n--- input ---\n"
                    << input;
    }
  }
  // Both outcomes must occur, or the mutations are too weak (all parse) or too blunt (all fail).
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 0);
}

}  // namespace
}  // namespace trainsim
