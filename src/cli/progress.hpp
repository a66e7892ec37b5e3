#pragma once
// Progress of a long command (sweep, tune) on stderr: "points 12/40 (30%), ETA 0:32", rewritten in
// place. Only when stderr is a terminal, so logs and pipes stay clean and output stays deterministic.
#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>

namespace trainsim::cli {

class Progress {
 public:
  // `what` names the counted items ("points", "configurations"). Writes to stderr iff it is a terminal.
  explicit Progress(std::string what);
  // Explicit stream and switch (tests).
  Progress(std::string what, std::ostream& out, bool enabled);

  // Reports that `done` of `total` are finished. Callers serialise calls.
  void update(std::size_t done, std::size_t total);
  // Ends the line (a newline after the last update) if anything was printed.
  void finish();

  // "1:05:07", "3:21", "0:04": the ETA format.
  static std::string format_duration(double seconds);

 private:
  std::string what_;
  std::ostream& out_;
  bool enabled_;
  bool printed_ = false;
  std::chrono::steady_clock::time_point start_;
};

}  // namespace trainsim::cli
