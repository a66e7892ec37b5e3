#pragma once
// `trainsim run --html FILE`: one self-contained HTML page of a run (inline CSS, SVG and JS; it fetches
// nothing): the headline numbers, the time breakdown and memory as SVG bars, the collective table, the busiest
// links as a heat map (flow/packet runs) and the critical rank's timeline (with a trace). Every number that
// is in the `--json` result carries its JSON path and full-precision value (data-json-path, data-value), and
// the result itself is embedded as <script type="application/json" id="trainsim-result">, byte for byte
// to_json(result) (with <, > and & as \u escapes). The shell, the blocks and the checks are html_page.hpp's, shared
// with the sweep and tune pages. Deterministic: same input, same bytes.
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "report/html_page.hpp"
#include "report/result.hpp"

namespace trainsim {

// One pipeline stage's memory per GPU, GiB (the memory model's per-stage table, `trainsim memory`).
struct MemoryStageRow {
  int stage = 0;
  double weights = 0, grads = 0, optimizer = 0, activations = 0, other = 0;
  double total() const { return weights + grads + optimizer + activations + other; }
};

// What the page shows besides the result; all optional. Numbers from here are not in the `--json` result:
// they are embedded as <script type="application/json" id="trainsim-extra"> ({"memory_stages": [...],
// "links": [...]}) and their elements point into it (data-json-block="trainsim-extra").
struct HtmlReportExtras {
  std::span<const MemoryStageRow> memory_stages;  // every stage; empty: only the result's worst stage is shown
  std::span<const LinkUsageRow> links;            // flow/packet runs: every link (else the result's hot_links)
  std::span<const TraceSpan> trace;               // with a trace: the critical rank's spans become its timeline
  std::span<const std::string> stream_names;      // the trace's thread names, by TraceSpan::tid
  bool traced = false;        // a trace was collected (the critical rank may still be outside its ranks)
  std::string scenario_path;  // for the commands the page suggests ("trainsim run PATH --trace ...")
};

// The page as one string.
std::string render_html_report(const RunResult& r, const HtmlReportExtras& extras = {});
void write_html_report(std::ostream& out, const RunResult& r, const HtmlReportExtras& extras = {});

}  // namespace trainsim
