#pragma once
// Headless Chromium for the browser tests of HTML pages (the run, sweep and tune reports, the service's page):
// where it is, what a test says when it is not, and the console messages a log holds.
#include <cstdlib>
#include <sstream>
#include <string>

#include "support/shell.hpp"

namespace trainsim::test {

// Chromium: $TRAINSIM_CHROMIUM, else chromium on the PATH (Debian's package, scripts/install-deps); "" if none.
inline std::string chromium() {
  if (const char* env = std::getenv("TRAINSIM_CHROMIUM"); env && *env) return env;
  const ShellResult r = run_shell("command -v chromium");
  if (r.status != 0 || r.out.empty()) return "";
  return r.out.substr(0, r.out.find('\n'));
}

// The switches every test launch passes. Without the background-networking ones Chromium keeps trying hosts this
// closed network refuses; without --disable-dev-shm-usage a container's small /dev/shm (64 MiB by default), shared
// by several browsers when tests run in parallel, can run out and crash a page's renderer.
inline constexpr const char* kHeadlessSwitches =
    "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking "
    "--disable-component-update --disable-sync --disable-dev-shm-usage";

inline constexpr const char* kNoChromium =
    "chromium not found (install Debian's chromium package, as scripts/install-deps does, or set TRAINSIM_CHROMIUM): "
    "the page is not checked in a browser";

// The lines of a browser log about `page_name` that are console messages or uncaught exceptions ("" when none).
inline std::string console_messages(const std::string& log, const std::string& page_name) {
  std::istringstream lines(log);
  std::string found;
  for (std::string line; std::getline(lines, line);)
    if (line.find(page_name) != std::string::npos &&
        (line.find("CONSOLE") != std::string::npos || line.find("Uncaught") != std::string::npos))
      found += line + "\n";
  return found;
}

}  // namespace trainsim::test
