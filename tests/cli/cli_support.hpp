#pragma once
// Runs the trainsim binary as a user would, for the end-to-end tests.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/shell.hpp"

namespace trainsim_cli_test {

using Result = trainsim::test::ShellResult;
using trainsim::test::run_shell;

// The trainsim binary under test with `args`.
inline Result run(const std::string& args) { return run_shell(std::string(TRAINSIM_BINARY) + " " + args); }

// Seconds `trainsim args` takes, its result in `r`; `timeout` stops after 30 s a run that should have been refused.
inline double timed(const std::string& args, Result& r) {
  const auto t0 = std::chrono::steady_clock::now();
  r = run_shell("timeout 30 " + std::string(TRAINSIM_BINARY) + " " + args);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline std::string example(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name; }

// The 8-GPU example most tests run.
inline const std::string kTinyExample = example("tiny-8-h100.yaml");

// 12 GPUs in 3 nodes, 2 layers, analytical network: a point simulates in milliseconds, so sweeps over it are quick.
// 8 heads, so parallelism.tensor=3 is invalid; hidden_size 65536 does not fit in 80 GiB.
inline constexpr const char* kSmallSweepScenario = R"(model:
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  ffn_hidden_size: 2048
  vocab_size: 1024
  seq_length: 512
training: {global_batch_size: 48, micro_batch_size: 1, precision: bf16}
parallelism: {tensor: 2, pipeline: 1}
cluster: {gpu: H100-SXM, num_gpus: 12, gpus_per_node: 4, nics_per_node: 4, nic_gbps: 400}
)";

// A path in the temporary directory for a test's file; one name per test, as ctest runs tests in parallel processes.
inline std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("trainsim_cli_" + name)).string();
}

inline std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path = temp_path(name);
  std::ofstream(path) << text;
  return path;
}

// One CSV line's comma-separated fields (the files these tests read quote nothing).
inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, ',');) fields.push_back(f);
  return fields;
}

// The whole file at `path` ("" when it cannot be read).
inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace trainsim_cli_test
