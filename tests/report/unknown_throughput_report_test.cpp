// A run whose throughput nothing determines (a workload file on a scenario without a model block): the text and HTML
// reports print "—" where tokens/s, TFLOPS, MFU and HFU would be, and for the parallel sizes when the file does not
// state them; the JSON has null for the numbers, under the spec's field names, never a 0.
#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "report/html_report.hpp"
#include "report/reports.hpp"

namespace trainsim {
namespace {

RunResult file_run(bool sizes_stated) {
  RunResult r;
  r.scenario = "cluster";
  r.gpu_name = "H100-SXM";
  r.num_gpus = 8;
  r.iteration_time_s = 0.25;
  r.throughput_known = false;
  r.parallelism_known = sizes_stated;
  r.tensor = 2;
  r.pipeline = 1;
  r.data = 4;
  r.micro_batches = 4;
  return r;
}

std::string text(const RunResult& r) {
  std::ostringstream out;
  write_text_report(out, r);
  return out.str();
}

TEST(UnknownThroughputReport, TextShowsDashesNotZeros) {
  const std::string t = text(file_run(true));
  EXPECT_NE(t.find("parallelism TP 2  PP 1  DP 4  CP 1   micro-batches 4"), std::string::npos) << t;
  EXPECT_NE(t.find("throughput          \u2014 tokens/s  (no model block: tokens and FLOPs unknown)"),
            std::string::npos)
      << t;
  EXPECT_NE(t.find("MFU                 \u2014"), std::string::npos) << t;
  EXPECT_NE(t.find("TFLOPS/GPU          \u2014"), std::string::npos) << t;
  EXPECT_EQ(t.find("0 tokens/s"), std::string::npos) << t;
  EXPECT_EQ(t.find("0.0%"), std::string::npos) << t;
  const std::string unknown = text(file_run(false));
  EXPECT_NE(unknown.find("parallelism TP \u2014  PP \u2014  DP \u2014  CP \u2014   micro-batches \u2014"),
            std::string::npos)
      << unknown;
  EXPECT_EQ(unknown.find("DP 4"), std::string::npos) << unknown;
}

TEST(UnknownThroughputReport, JsonHasNullsUnderTheSpecsNames) {
  const auto j = to_json(file_run(true));
  for (const char* key : {"tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "mfu", "hfu"}) {
    ASSERT_TRUE(j.contains(key)) << key;
    EXPECT_TRUE(j[key].is_null()) << key;
  }
  EXPECT_DOUBLE_EQ(j["iteration_time_s"].get<double>(), 0.25);
  RunResult known = file_run(true);
  known.throughput_known = true;
  known.mfu = 0.5;
  EXPECT_DOUBLE_EQ(to_json(known)["mfu"].get<double>(), 0.5);
}

TEST(UnknownThroughputReport, HtmlShowsDashesBackedByNulls) {
  const std::string page = render_html_report(file_run(true));
  EXPECT_NE(page.find(R"(data-json-path="mfu" data-value="null">)"
                      "\u2014"),
            std::string::npos);
  EXPECT_NE(page.find(R"(data-json-path="tokens_per_s" data-value="null">)"
                      "\u2014"),
            std::string::npos);
  EXPECT_NE(page.find("no model block: tokens and FLOPs unknown"), std::string::npos);
  EXPECT_NE(page.find("DP 4"), std::string::npos);
  const std::string unknown = render_html_report(file_run(false));
  EXPECT_NE(unknown.find("parallelism TP \u2014 &middot; PP \u2014"), std::string::npos);
}

}  // namespace
}  // namespace trainsim
