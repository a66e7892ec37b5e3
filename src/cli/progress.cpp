#include "cli/progress.hpp"

#include <cmath>
#include <iostream>

#include <fmt/format.h>
#include <unistd.h>

namespace trainsim::cli {

Progress::Progress(std::string what) : Progress(std::move(what), std::cerr, isatty(STDERR_FILENO) != 0) {}

Progress::Progress(std::string what, std::ostream& out, bool enabled)
    : what_(std::move(what)), out_(out), enabled_(enabled), start_(std::chrono::steady_clock::now()) {}

std::string Progress::format_duration(double seconds) {
  if (!(seconds >= 0) || !std::isfinite(seconds)) return "?";
  const auto s = static_cast<long long>(std::llround(seconds));
  if (s >= 3600) return fmt::format("{}:{:02}:{:02}", s / 3600, (s / 60) % 60, s % 60);
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

void Progress::update(std::size_t done, std::size_t total) {
  if (!enabled_ || total == 0) return;
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double pct = 100.0 * static_cast<double>(done) / static_cast<double>(total);
  std::string eta = "?";
  if (done > 0) eta = format_duration(elapsed / static_cast<double>(done) * static_cast<double>(total - done));
  out_ << fmt::format("\r{} {}/{} ({:.0f}%), elapsed {}, ETA {}   ", what_, done, total, pct, format_duration(elapsed),
                      eta)
       << std::flush;
  printed_ = true;
}

void Progress::finish() {
  if (printed_) out_ << "\n" << std::flush;
  printed_ = false;
}

}  // namespace trainsim::cli
