// The three renderings of a validation run: terminal table, docs/accuracy.md markdown, JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "report/validation_report.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// megatron2021-a: iteration 13.9 -> 13.2 s (-5.0 %), tflops 148 -> 155 (+4.7 %).
// megatron2021-b: iteration 10 -> 11 s (+10.0 %).
// llmfoundry-c:   mfu 0.5 -> 0.45 (-10.0 %).
// llmfoundry-d:   failed.
std::vector<ValidationCase> sample_cases() {
  ValidationCase a{"megatron2021-a",
                   "megatron2021",
                   "A100-SXM4-80GB",
                   "high",
                   {{"iteration_time_s", 13.9, 13.2}, {"tflops_per_gpu", 148, 155}},
                   "",
                   "",
                   {},
                   "ampere"};
  ValidationCase b{
      "megatron2021-b", "megatron2021", "A100-SXM4-80GB", "medium", {{"iteration_time_s", 10, 11}}, "", "", {},
      "ampere"};
  ValidationCase c{"llmfoundry-c", "llmfoundry", "H100-SXM", "low", {{"mfu", 0.5, 0.45}}, "", "", {}, "hopper"};
  ValidationCase d{"llmfoundry-d",
                   "llmfoundry",
                   "H100-SXM",
                   "low",
                   {{"mfu", 0.5, 0}},
                   "parallelism.tensor: 48 heads not divisible by 5",
                   "",
                   {},
                   "hopper"};
  return {a, b, c, d};
}

TEST(ValidationTable, RowsFailuresAndSummary) {
  std::ostringstream out;
  write_validation_table(out, sample_cases());
  const std::string t = out.str();
  // -5.0 % = (13.2 - 13.9) / 13.9 = -0.0504; +4.7 % = 7 / 148 = 0.0473.
  EXPECT_THAT(t, ::testing::ContainsRegex(
                     "megatron2021-a +A100-SXM4-80GB +high +\\*iteration_time_s +13\\.900 +13\\.200 +-5\\.0%"));
  EXPECT_THAT(t, ::testing::ContainsRegex(" tflops_per_gpu +148\\.0 +155\\.0 +\\+4\\.7%"));
  EXPECT_THAT(t, ::testing::ContainsRegex("\\*mfu +0\\.5000 +0\\.4500 +-10\\.0%"));
  EXPECT_THAT(t, HasSubstr("Failed cases (1):\n"
                           "  llmfoundry-d (H100-SXM): parallelism.tensor: 48 heads not divisible by 5"));
  // Headline |errors| {0.0504, 0.10, 0.10}: median 10.0 %, p90 10.0 %.
  EXPECT_THAT(t, HasSubstr("Summary: 4 cases, 3 simulated, 1 failed; headline |error| median 10.0%, p90 10.0%"));
  // Group megatron2021: {0.0504, 0.10} -> median 7.5 %, p90 0.0504 + 0.9 (0.0496) = 9.5 %; bias: time errors
  // {-0.0504, +0.10} -> +2.5 %. llmfoundry: mfu 0.5 -> 0.45 is a time error of 0.5 / 0.45 - 1 = +11.1 %.
  EXPECT_THAT(t, ::testing::ContainsRegex("megatron2021 +2 +2 +0 +\\+2\\.5% +7\\.5% +9\\.5%"));
  EXPECT_THAT(t, ::testing::ContainsRegex("llmfoundry +2 +1 +1 +\\+11\\.1% +10\\.0% +10\\.0%"));
  EXPECT_THAT(t, ::testing::ContainsRegex("H100-SXM +2 +1 +1 +\\+11\\.1% +10\\.0% +10\\.0%"));
}

TEST(ValidationMarkdown, TitleSummaryAndCases) {
  std::ostringstream out;
  write_validation_markdown(out, sample_cases());
  const std::string md = out.str();
  EXPECT_THAT(md, ::testing::StartsWith("# Accuracy"));
  EXPECT_THAT(md, HasSubstr("`make accuracy`"));
  EXPECT_THAT(md, HasSubstr("| **all** | 4 | 3 | 1 | +10.0% | 10.0% | 10.0% |"));
  EXPECT_THAT(md, HasSubstr("| megatron2021 | 2 | 2 | 0 | +2.5% | 7.5% | 9.5% |"));
  EXPECT_THAT(md, HasSubstr("| llmfoundry | 2 | 1 | 1 | +11.1% | 10.0% | 10.0% |"));
  EXPECT_THAT(md, HasSubstr("| A100-SXM4-80GB | 2 | 2 | 0 | +2.5% | 7.5% | 9.5% |"));
  EXPECT_THAT(md, HasSubstr("| megatron2021-a | megatron2021 | A100-SXM4-80GB | high | **iteration_time_s** | 13.900 | "
                            "13.200 | -5.0% |"));
  EXPECT_THAT(md, HasSubstr("| megatron2021-a | megatron2021 | A100-SXM4-80GB | high | tflops_per_gpu | 148.0 | "
                            "155.0 | +4.7% |"));
  EXPECT_THAT(md,
              HasSubstr("| llmfoundry-d | llmfoundry | H100-SXM | parallelism.tensor: 48 heads not divisible by 5 |"));
}

// A '|' in a message would split a markdown cell: it must be escaped.
TEST(ValidationMarkdown, PipesAreEscaped) {
  ValidationCase c{"x", "g", "gpu", "low", {}, "a | b\nc", "", {}, ""};
  std::ostringstream out;
  write_validation_markdown(out, {c});
  EXPECT_THAT(out.str(), HasSubstr("| x | g | gpu | a \\| b c |"));
}

TEST(ValidationJson, CasesAndSummary) {
  const auto j = nlohmann::json::parse(validation_to_json(sample_cases()).dump());
  ASSERT_EQ(j["cases"].size(), 4u);
  const auto& a = j["cases"][0];
  EXPECT_EQ(a["name"], "megatron2021-a");
  EXPECT_EQ(a["group"], "megatron2021");
  EXPECT_TRUE(a["error"].is_null());
  EXPECT_EQ(a["headline"], "iteration_time_s");
  ASSERT_EQ(a["fields"].size(), 2u);
  EXPECT_EQ(a["fields"][1]["field"], "tflops_per_gpu");
  EXPECT_DOUBLE_EQ(a["fields"][1]["error"].get<double>(), 7.0 / 148.0);

  const auto& d = j["cases"][3];
  EXPECT_EQ(d["error"], "parallelism.tensor: 48 heads not divisible by 5");
  EXPECT_TRUE(d["fields"][0]["simulated"].is_null());  // nothing was simulated
  EXPECT_EQ(d["fields"][0]["measured"], 0.5);

  const auto& s = j["summary"];
  EXPECT_EQ(s["cases"], 4);
  EXPECT_EQ(s["simulated"], 3);
  EXPECT_EQ(s["failed"], 1);
  EXPECT_NEAR(s["median_abs_error"].get<double>(), 0.10, 1e-12);
  EXPECT_EQ(s["by_group"]["megatron2021"]["cases"], 2);
  EXPECT_EQ(s["by_gpu"]["H100-SXM"]["failed"], 1);
}

TEST(ValidationJson, Deterministic) {
  EXPECT_EQ(validation_to_json(sample_cases()).dump(), validation_to_json(sample_cases()).dump());
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// Collective cases list every measured point with the simulated busbw, the error and both choices.
TEST(ValidationMarkdown, CollectivePointsTable) {
  ValidationCase c{"coll-x", "coll", "H100-SXM", "high", {{"busbw_GBps", 400, 380}}, "", "all_reduce", {}, "hopper"};
  c.points.push_back({1024, 10.0, 12.5, "Tree", "LL", "Tree"});
  c.points.push_back({std::int64_t{1} << 30, 400.0, 380.0, "Ring", "Simple", ""});
  std::ostringstream out;
  write_validation_markdown(out, {c});
  const std::string md = out.str();
  EXPECT_NE(md.find("| coll-x | all_reduce | 1024 | 10.00 | 12.50 | +25.0% | Tree/LL | Tree |"), std::string::npos)
      << md;
  EXPECT_NE(md.find("| coll-x | all_reduce | 1073741824 | 400.00 | 380.00 | -5.0% | Ring/Simple | - |"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

// A case the memory model says does not fit although it was measured: simulated (its errors count), and listed
// apart in every rendering with what it needs; the cases that fit are not listed.
TEST(ValidationOverMemory, ListedApartInEveryRenderingAndStillCounted) {
  std::vector<ValidationCase> cases = sample_cases();
  cases[1].memory_needed_gib = 102.2;
  cases[1].memory_capacity_gib = 95.6;
  EXPECT_EQ(cases[1].memory_note(), "needs 102.2 GiB per GPU of 95.6");
  EXPECT_EQ(cases[0].memory_note(), "");

  std::ostringstream table;
  write_validation_table(table, cases);
  EXPECT_THAT(table.str(), HasSubstr("Over trainsim's memory model, simulated anyway (the measured runs fit) (1):\n"
                                     "  megatron2021-b (A100-SXM4-80GB): needs 102.2 GiB per GPU of 95.6\n"));
  EXPECT_THAT(table.str(), HasSubstr("Summary: 4 cases, 3 simulated, 1 failed"));

  std::ostringstream md;
  write_validation_markdown(md, cases);
  EXPECT_THAT(md.str(), HasSubstr("## Cases over trainsim's memory model"));
  EXPECT_THAT(md.str(),
              HasSubstr("| megatron2021-b | megatron2021 | A100-SXM4-80GB | needs 102.2 GiB per GPU of 95.6 |"));
  EXPECT_THAT(md.str(), Not(HasSubstr("| megatron2021-a | megatron2021 | A100-SXM4-80GB | needs")));

  const auto j = validation_to_json(cases);
  const auto& rows = j["cases"];
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_TRUE(rows[0]["over_memory"].is_null());
  EXPECT_DOUBLE_EQ(rows[1]["over_memory"]["needed_gib"].get<double>(), 102.2);
  EXPECT_DOUBLE_EQ(rows[1]["over_memory"]["capacity_gib"].get<double>(), 95.6);

  // Without such a case no section appears.
  std::ostringstream plain;
  write_validation_table(plain, sample_cases());
  EXPECT_THAT(plain.str(), Not(HasSubstr("memory model")));
}

}  // namespace
}  // namespace trainsim
