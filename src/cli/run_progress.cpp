#include "cli/run_progress.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cli/progress.hpp"
#include "trainsim/report.hpp"

namespace trainsim::cli {

namespace {

// A run estimated past this gets the note: long enough that waiting without a word looks like a hang.
constexpr double kNoteSeconds = 60;
// Progress lines: at most this often, in place on a terminal and appended into a log.
constexpr double kTerminalEvery = 0.25;
constexpr double kLogEvery = 5;

using report_format::group_digits;  // 1234567 -> "1,234,567"

std::string minutes(double seconds) {
  if (seconds < 90) return fmt::format("{:.0f} s", seconds);
  if (seconds < 5400) return fmt::format("{:.0f} min", seconds / 60);
  return fmt::format("{:.1f} h", seconds / 3600);
}

}  // namespace

RunProgressPrinter::RunProgressPrinter(std::ostream& out, bool show, bool terminal)
    : out_(out), show_(show), terminal_(terminal), start_(std::chrono::steady_clock::now()), last_(start_) {}

RunProgressPrinter::~RunProgressPrinter() {
  if (open_line_) out_ << "\n" << std::flush;
}

void RunProgressPrinter::line(const std::string& text) {
  if (terminal_)
    out_ << "\r" << text << "   " << std::flush;
  else
    out_ << text << "\n" << std::flush;
  open_line_ = terminal_;
}

void RunProgressPrinter::report(const RunProgress& p) {
  const auto now = std::chrono::steady_clock::now();
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  switch (p.stage) {
    case RunProgress::Stage::Estimated: {
      if (p.estimated_seconds >= kNoteSeconds) {
        if (open_line_) out_ << "\n";
        open_line_ = false;
        std::string what = fmt::format("{} ops", group_digits(static_cast<std::int64_t>(p.estimated_ops)));
        if (p.estimated_flows > 0)
          what +=
              fmt::format(" and {} flows on the fabric", group_digits(static_cast<std::int64_t>(p.estimated_flows)));
        out_ << fmt::format("note: estimated ~{} for this run ({}{})", minutes(p.estimated_seconds), what,
                            p.runs > 1 ? ", twice: with the faults and without" : "");
        if (p.estimated_flows > 0)
          out_ << "; use simulation.network_model: analytical for a quick answer (seconds; collectives priced by "
                  "NCCL's cost model instead of flow by flow)";
        out_ << "\n" << std::flush;
      }
      if (show_)
        line(fmt::format("simulating {} ops{}", group_digits(static_cast<std::int64_t>(p.estimated_ops)),
                         p.runs > 1 ? " twice (with the faults, then without)" : ""));
      return;
    }
    case RunProgress::Stage::Simulating: {
      if (!show_) return;
      const double since = std::chrono::duration<double>(now - last_).count();
      // The first report is shown at once so that even a short run shows one; then throttled.
      if (shown_progress_ && since < (terminal_ ? kTerminalEvery : kLogEvery)) return;
      shown_progress_ = true;
      last_ = now;
      const std::string eta = p.fraction > 0 ? Progress::format_duration(elapsed / p.fraction * (1 - p.fraction)) : "?";
      line(fmt::format(
          "simulating{}: {:.1f}% of ops, {:.6f} s of the iteration simulated, {} events, elapsed {}, ETA {}",
          p.runs > 1 ? fmt::format(" run {}/{}", p.run, p.runs) : "", 100 * p.fraction, p.simulated_s,
          group_digits(p.events), Progress::format_duration(elapsed), eta));
      return;
    }
    case RunProgress::Stage::Done: {
      if (!show_) return;
      line(fmt::format("simulated: {:.6f} s iteration, {} events, in {}", p.simulated_s, group_digits(p.events),
                       Progress::format_duration(elapsed)));
      if (open_line_) out_ << "\n" << std::flush;
      open_line_ = false;
      return;
    }
  }
}

}  // namespace trainsim::cli
