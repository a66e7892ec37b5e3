#pragma once
// A shell command run to its end, for tests that drive programs (the trainsim binary, chromium).
#include <array>
#include <cstdio>
#include <string>

#include <sys/wait.h>

namespace trainsim::test {

struct ShellResult {
  int status = -1;  // the exit status; -1 when it did not exit normally or could not start
  std::string out;  // stdout and stderr together
};

inline ShellResult run_shell(const std::string& command) {
  ShellResult r;
  FILE* p = popen((command + " 2>&1").c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf{};
  std::size_t n = 0;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

}  // namespace trainsim::test
