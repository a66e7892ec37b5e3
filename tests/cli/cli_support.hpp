#pragma once
// Runs the trainsim binary as a user would, for the end-to-end tests.
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <sys/wait.h>

namespace trainsim_cli_test {

struct Result {
  int status = -1;
  std::string out;  // stdout and stderr together
};

// Any shell command, stdout and stderr together.
inline Result run_shell(const std::string& command) {
  const std::string cmd = command + " 2>&1";
  Result r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// The trainsim binary under test with `args`.
inline Result run(const std::string& args) { return run_shell(std::string(TRAINSIM_BINARY) + " " + args); }

inline std::string example(const std::string& name) { return std::string(TRAINSIM_SOURCE_DIR) + "/examples/" + name; }

inline std::string temp_file(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("trainsim_cli_" + name);
  std::ofstream(path) << text;
  return path.string();
}

}  // namespace trainsim_cli_test
