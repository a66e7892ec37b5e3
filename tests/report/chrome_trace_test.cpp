// write_chrome_trace: valid JSON in the Chrome trace event format, metadata naming ranks and
// streams, one complete event per span with times in microseconds at fixed precision.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>

#include "core/error.hpp"
#include "report/reports.hpp"

namespace trainsim {
namespace {

nlohmann::json trace_of(const std::vector<TraceSpan>& spans, const std::vector<std::string>& names) {
  std::ostringstream out;
  write_chrome_trace(out, spans, names);
  return nlohmann::json::parse(out.str());  // throws (fails the test) if the text is not JSON
}

std::vector<TraceSpan> sample_spans() {
  TraceSpan a{0, 0, "fwd attn", "compute", 1234.5678, 10.0, 3, 1};
  TraceSpan b{0, 1, "all_reduce \"tp\"", "tp", 1240.0, 0.0004, -1, -1};  // quote must be escaped
  TraceSpan c{1, 0, "bwd mlp", "compute", 0.0, 2.25, 5, -1};
  return {a, b, c};
}

TEST(ChromeTrace, EnvelopeAndMetadata) {
  const auto j = trace_of(sample_spans(), {"compute", "comm"});
  EXPECT_EQ(j["displayTimeUnit"], "ms");
  const auto& ev = j["traceEvents"];
  ASSERT_TRUE(ev.is_array());
  // Distinct ranks {0, 1} -> 2 process_name; distinct (rank, stream) {(0,0), (0,1), (1,0)} -> 3 thread_name;
  // plus 3 spans.
  int processes = 0, threads = 0, complete = 0;
  for (const auto& e : ev) {
    if (e["ph"] == "M" && e["name"] == "process_name") {
      ++processes;
      EXPECT_EQ(e["args"]["name"], "rank " + std::to_string(e["pid"].get<int>()));
    } else if (e["ph"] == "M" && e["name"] == "thread_name") {
      ++threads;
      EXPECT_EQ(e["args"]["name"], e["tid"] == 0 ? "compute" : "comm");
    } else if (e["ph"] == "X") {
      ++complete;
    }
  }
  EXPECT_EQ(processes, 2);
  EXPECT_EQ(threads, 3);
  EXPECT_EQ(complete, 3);
}

TEST(ChromeTrace, CompleteEventsCarryMicrosecondsAndArgs) {
  const auto j = trace_of(sample_spans(), {"compute", "comm"});
  std::vector<nlohmann::json> x;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X") x.push_back(e);
  }
  ASSERT_EQ(x.size(), 3u);
  EXPECT_EQ(x[0]["name"], "fwd attn");
  EXPECT_EQ(x[0]["cat"], "compute");
  // 1234.5678 us at 3 decimals is 1234.568 us: Chrome's ts unit is the microsecond, so no scaling.
  EXPECT_NEAR(x[0]["ts"].get<double>(), 1234.568, 1e-9);
  EXPECT_NEAR(x[0]["dur"].get<double>(), 10.0, 1e-9);
  EXPECT_EQ(x[0]["args"]["layer"], 3);
  EXPECT_EQ(x[0]["args"]["micro_batch"], 1);

  EXPECT_EQ(x[1]["name"], "all_reduce \"tp\"");
  EXPECT_EQ(x[1]["tid"], 1);
  EXPECT_NEAR(x[1]["dur"].get<double>(), 0.0, 1e-9);  // 0.4 ns rounds to 0.000 us
  EXPECT_FALSE(x[1].contains("args"));                // layer and micro-batch both unknown

  EXPECT_EQ(x[2]["pid"], 1);
  EXPECT_EQ(x[2]["args"]["layer"], 5);
  EXPECT_FALSE(x[2]["args"].contains("micro_batch"));
}

TEST(ChromeTrace, FixedPrecisionText) {
  std::ostringstream out;
  write_chrome_trace(out, sample_spans(), {"compute", "comm"});
  EXPECT_NE(out.str().find("\"ts\":1234.568,\"dur\":10.000"), std::string::npos);
}

TEST(ChromeTrace, UnnamedStreamGetsAnIndexLabel) {
  const auto j = trace_of({TraceSpan{2, 7, "x", "compute", 1, 1, -1, -1}}, {"compute"});
  bool found = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["name"] == "thread_name") {
      EXPECT_EQ(e["args"]["name"], "stream 7");
      found = true;
    }
  }
  EXPECT_TRUE(found);
}

TEST(ChromeTrace, EmptyTraceIsValid) {
  const auto j = trace_of({}, {});
  EXPECT_TRUE(j["traceEvents"].is_array());
  EXPECT_TRUE(j["traceEvents"].empty());
}

// A NaN/negative time is a bug upstream: refuse it before writing anything.
TEST(ChromeTrace, InvalidTimesThrowBeforeWriting) {
  std::vector<TraceSpan> spans = sample_spans();
  spans[2].dur_us = std::numeric_limits<double>::quiet_NaN();
  std::ostringstream out;
  EXPECT_THROW(write_chrome_trace(out, spans, {}), Error);
  EXPECT_TRUE(out.str().empty());

  spans[2].dur_us = -1;
  EXPECT_THROW(write_chrome_trace(out, spans, {}), Error);
}

// Many spans stream through the chunked buffer intact (exercises the flushes).
TEST(ChromeTrace, ManySpansStayValid) {
  std::vector<TraceSpan> spans;
  for (int i = 0; i < 20000; ++i) {
    spans.push_back(TraceSpan{i % 4, (i / 4) % 2, "k", "compute", i * 1.5, 1.0, i % 96, -1});
  }
  const auto j = trace_of(spans, {"compute", "comm"});
  // 4 ranks x 2 streams: 4 process_name + 8 thread_name + 20000 spans.
  EXPECT_EQ(j["traceEvents"].size(), 4u + 8u + 20000u);
  EXPECT_NEAR(j["traceEvents"].back()["ts"].get<double>(), 19999 * 1.5, 1e-9);
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Counter tracks (packet-level queues) go in one "network" process after the ranks', as "ph":"C" events whose
// args hold the value under its unit.
TEST(ChromeTrace, CountersAreTracksOfANetworkProcess) {
  std::vector<TraceSpan> spans(2);
  spans[0].pid = 0;
  spans[1].pid = 7;
  spans[1].start_us = 5;
  const std::vector<TraceCounter> counters = {{"queue a>b", 1.5, 16.384, "KB"}, {"queue a>b", 2.25, 0, "KB"}};
  std::ostringstream out;
  write_chrome_trace(out, spans, {"compute"}, counters);
  const auto j = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> c;
  bool named = false;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "C") c.push_back(e);
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == "network") {
      named = true;
      EXPECT_EQ(e["pid"], 8);
    }
  }
  EXPECT_TRUE(named);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0]["name"], "queue a>b");
  EXPECT_EQ(c[0]["pid"], 8);
  EXPECT_DOUBLE_EQ(c[0]["ts"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(c[0]["args"]["KB"].get<double>(), 16.384);
  EXPECT_DOUBLE_EQ(c[1]["args"]["KB"].get<double>(), 0.0);
  const std::vector<TraceCounter> bad = {{"queue", std::nan(""), 1, "KB"}};
  std::ostringstream out2;
  EXPECT_THROW(write_chrome_trace(out2, spans, {"compute"}, bad), Error);
}

}  // namespace
}  // namespace trainsim
