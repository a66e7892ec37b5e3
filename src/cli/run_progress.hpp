#pragma once
// `trainsim run` on stderr while it simulates: first a note when the estimate says the run takes
// minutes, then how far it has got ("simulating: 45% of ops, 0.412 s of the iteration simulated,
// 1,234,567 events, elapsed 0:12, ETA 0:15"), rewritten in place on a terminal and as a line every
// few seconds otherwise (--progress into a log). Stdout and the results never change.
#include <chrono>
#include <ostream>

#include "trainsim/trainsim.hpp"

namespace trainsim::cli {

class RunProgressPrinter {
 public:
  // `show`: progress lines (a terminal, or --progress); the long-run note is written either way.
  // `terminal`: rewrite one line in place instead of appending lines.
  RunProgressPrinter(std::ostream& out, bool show, bool terminal);
  // Ends a line left open in place (a run that failed midway), so an error starts on its own line.
  ~RunProgressPrinter();
  RunProgressPrinter(const RunProgressPrinter&) = delete;
  RunProgressPrinter& operator=(const RunProgressPrinter&) = delete;

  void report(const RunProgress& p);

 private:
  void line(const std::string& text);

  std::ostream& out_;
  bool show_, terminal_;
  bool shown_progress_ = false, open_line_ = false;
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace trainsim::cli
