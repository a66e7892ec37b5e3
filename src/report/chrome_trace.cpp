// Chrome trace event format (https://docs.google.com/document/d/1CvAClvFfyA5R-PhYUmn5OOQtYMH4h6I0nSsKchNAySU):
// {"traceEvents":[...], "displayTimeUnit":"ms"}, times in microseconds. Traces can hold millions of
// spans, so events are streamed one per line instead of building one JSON document in memory.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "core/error.hpp"
#include "report/format_utils.hpp"
#include "report/reports.hpp"

namespace trainsim {

namespace {

using report_format::json_quote;

// A NaN or infinite time cannot be written as JSON and means a bug upstream; check every span
// before writing anything so that a bad span never leaves a half-written file behind.
void check_spans(const std::vector<TraceSpan>& spans) {
  for (std::size_t i = 0; i < spans.size(); ++i) {
    const TraceSpan& s = spans[i];
    if (!std::isfinite(s.start_us) || !std::isfinite(s.dur_us) || s.dur_us < 0) {
      throw Error(
          fmt::format("trace span {} ('{}' on rank {} stream {}) has an invalid time: start {} us, "
                      "duration {} us",
                      i, s.name, s.pid, s.tid, s.start_us, s.dur_us));
    }
  }
}

std::string thread_name(int tid, const std::vector<std::string>& stream_names) {
  const auto index = static_cast<std::size_t>(tid);
  if (tid >= 0 && index < stream_names.size()) return stream_names[index];
  return fmt::format("stream {}", tid);  // a stream the caller did not name still gets a label
}

}  // namespace

void write_chrome_trace(std::ostream& out, const std::vector<TraceSpan>& spans,
                        const std::vector<std::string>& stream_names, const std::vector<TraceCounter>& counters) {
  check_spans(spans);
  for (const TraceCounter& c : counters)
    if (!std::isfinite(c.ts_us) || !std::isfinite(c.value))
      throw Error(fmt::format("trace counter '{}' has an invalid point: {} at {} us", c.name, c.value, c.ts_us));

  // Metadata first: one process per rank, one thread per (rank, stream) that appears, in sorted order.
  std::set<std::pair<int, int>> threads;
  for (const TraceSpan& s : spans) threads.emplace(s.pid, s.tid);

  fmt::memory_buffer buf;
  auto flush = [&] {
    out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.clear();
  };
  bool first = true;
  auto begin_event = [&] {
    fmt::format_to(std::back_inserter(buf), "{}\n", first ? "" : ",");
    first = false;
  };

  fmt::format_to(std::back_inserter(buf), "{{\"traceEvents\":[");
  int last_pid = 0;
  bool have_pid = false;
  for (const auto& [pid, tid] : threads) {
    if (!have_pid || pid != last_pid) {
      begin_event();
      fmt::format_to(std::back_inserter(buf),
                     "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,"
                     "\"args\":{{\"name\":\"rank {}\"}}}}",
                     pid, pid);
      last_pid = pid;
      have_pid = true;
    }
    begin_event();
    fmt::format_to(std::back_inserter(buf),
                   "{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{},\"tid\":{},\"args\":{{\"name\":{}}}}}", pid, tid,
                   json_quote(thread_name(tid, stream_names)));
  }

  // Complete events ("ph":"X"). Three decimals of a microsecond (1 ns) is finer than any kernel
  // and keeps the text identical from run to run.
  for (const TraceSpan& s : spans) {
    begin_event();
    fmt::format_to(std::back_inserter(buf),
                   "{{\"name\":{},\"cat\":{},\"ph\":\"X\",\"ts\":{:.3f},\"dur\":{:.3f},\"pid\":{},\"tid\":{}",
                   json_quote(s.name), json_quote(s.category), s.start_us, s.dur_us, s.pid, s.tid);
    if (s.layer >= 0 || s.micro_batch >= 0) {
      buf.append(std::string_view(",\"args\":{"));
      if (s.layer >= 0) fmt::format_to(std::back_inserter(buf), "\"layer\":{}", s.layer);
      if (s.micro_batch >= 0) {
        fmt::format_to(std::back_inserter(buf), "{}\"micro_batch\":{}", s.layer >= 0 ? "," : "", s.micro_batch);
      }
      buf.push_back('}');
    }
    buf.push_back('}');
    if (buf.size() > (1u << 16)) flush();  // bounded memory whatever the number of spans
  }
  // Counter tracks ("ph":"C") in a process of their own, after every rank's (pids are ranks, so one past the largest).
  if (!counters.empty()) {
    int network_pid = 0;
    for (const TraceSpan& s : spans) network_pid = std::max(network_pid, s.pid + 1);
    begin_event();
    fmt::format_to(std::back_inserter(buf),
                   "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{},\"tid\":0,\"args\":{{\"name\":\"network\"}}}}",
                   network_pid);
    for (const TraceCounter& c : counters) {
      begin_event();
      fmt::format_to(std::back_inserter(buf),
                     "{{\"name\":{},\"ph\":\"C\",\"ts\":{:.3f},\"pid\":{},\"args\":{{{}:{:.3f}}}}}", json_quote(c.name),
                     c.ts_us, network_pid, json_quote(c.unit), c.value);
      if (buf.size() > (1u << 16)) flush();
    }
  }
  fmt::format_to(std::back_inserter(buf), "\n],\"displayTimeUnit\":\"ms\"}}\n");
  flush();
}

}  // namespace trainsim
