// Calibration discipline: the group rule, the bias (signed median) and |error| statistics per group
// and GPU generation, the per-group record and the CI comparison against it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "core/error.hpp"
#include "report/validation_report.hpp"

namespace trainsim {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The ids of ../shared/validation/cases as they are named, one of each kind.
TEST(ValidationGroup, SourcePrefixOfTheId) {
  EXPECT_EQ(validation_group("megatron2021-t1-18B"), "megatron2021");
  EXPECT_EQ(validation_group("megatron2021-t2-zero3-174B-384gpu"), "megatron2021");
  EXPECT_EQ(validation_group("mcore-h100-weak-7.1B"), "mcore");  // "h100" has no memory size: not split
  EXPECT_EQ(validation_group("nemo2407-h100-fp8-GPT3-175B-128gpu-gbs256"), "nemo2407");
  EXPECT_EQ(validation_group("dgxc-llama3.1-405b-1152h100-fp8"), "dgxc");
  EXPECT_EQ(validation_group("dgxc-deepseek-v3-128gb200-bf16-r25.05"), "dgxc");
  EXPECT_EQ(validation_group("coll-nccltests212-H100-8gpu-reference"), "coll");
  EXPECT_EQ(validation_group("coll-mleng-8xH200-allreduce-ncclTests"), "coll");
}

// `<source>-<gpu>_<n>gb-<precision>-...` (llm-foundry): split by GPU and by precision, "amp_" dropped.
TEST(ValidationGroup, GpuWithMemoryAndPrecisionSplitTheSource) {
  EXPECT_EQ(validation_group("llmfoundry-a100_40gb-bf16-125m-s1024-g8-mb52-gbs1248"), "llmfoundry-a100-bf16");
  EXPECT_EQ(validation_group("llmfoundry-a100_80gb-amp_bf16-125m-s2048-g8-mb32-gbs512"), "llmfoundry-a100-bf16");
  EXPECT_EQ(validation_group("llmfoundry-h100_80gb-amp_bf16-7b-s2048-g8-mb8-gbs2048"), "llmfoundry-h100-bf16");
  EXPECT_EQ(validation_group("llmfoundry-h100_80gb-amp_fp8-7b-s2048-g8-mb8-gbs2048"), "llmfoundry-h100-fp8");
  // A new source named the same way gets its own groups without any code change.
  EXPECT_EQ(validation_group("newbench-b200_192gb-amp_mxfp8-70b"), "newbench-b200-mxfp8");
  // The third token is appended only when it is a precision.
  EXPECT_EQ(validation_group("newbench-b200_192gb-70b-s4096"), "newbench-b200");
  EXPECT_EQ(validation_group("newbench-mi300x_192gb"), "newbench-mi300x");
}

TEST(ValidationGroup, EdgeCases) {
  EXPECT_EQ(validation_group("single"), "single");
  EXPECT_EQ(validation_group(""), "");
  EXPECT_EQ(validation_group("src-"), "src");
  EXPECT_EQ(validation_group("src-a100_gb-bf16"), "src");          // no memory size
  EXPECT_EQ(validation_group("src-a100_40GB-bf16"), "src");        // ids are lower case; not this form
  EXPECT_EQ(validation_group("src-_40gb-bf16"), "src");            // no GPU name
  EXPECT_EQ(validation_group("src-a100_40gb-bf16x"), "src-a100");  // not a precision
}

// time_error: iteration time as is; a throughput as measured / simulated - 1.
TEST(ValidationField, TimeError) {
  EXPECT_DOUBLE_EQ((ValidationField{"iteration_time_s", 10, 9}.time_error()), -0.10);
  EXPECT_DOUBLE_EQ((ValidationField{"tflops_per_gpu", 100, 125}.time_error()), -0.20);  // error() is +0.25
  EXPECT_DOUBLE_EQ((ValidationField{"busbw_GBps", 400, 320}.time_error()), 0.25);       // error() is -0.20
  EXPECT_DOUBLE_EQ((ValidationField{"mfu", 0.5, 0.4}.time_error()), 0.25);
}

ValidationCase timed(std::string name, double measured, double simulated, std::string generation = "hopper") {
  ValidationCase c;
  c.name = name;
  c.group = validation_group(name);
  c.gpu = generation == "ampere" ? "A100-SXM-80GB" : "H100-SXM";
  c.generation = std::move(generation);
  c.confidence = "high";
  c.fields = {{"iteration_time_s", measured, simulated}};
  return c;
}

// Odd n: time errors -0.10, +0.20, +0.05 -> sorted {-0.10, 0.05, 0.20}: bias +0.05 (the middle one,
// not the mean 0.05 by coincidence: see the even case). |err| {0.05, 0.10, 0.20}: median 0.10,
// p90 at position 0.9 * 2 = 1.8 -> 0.10 + 0.8 * 0.10 = 0.18.
TEST(Summarize, BiasMedianP90OddCount) {
  const ValidationSummary s = summarize({timed("g-a", 10, 9), timed("g-b", 10, 12), timed("g-c", 20, 21)});
  EXPECT_EQ(s.cases, 3);
  EXPECT_EQ(s.samples, 3);
  EXPECT_NEAR(s.bias, 0.05, 1e-12);
  EXPECT_NEAR(s.median_abs_error, 0.10, 1e-12);
  EXPECT_NEAR(s.p90_abs_error, 0.18, 1e-12);
}

// Even n: add -0.30: time errors {-0.30, -0.10, 0.05, 0.20}: bias (-0.10 + 0.05) / 2 = -0.025 (the mean
// would be -0.0375). |err| {0.05, 0.10, 0.20, 0.30}: median 0.15, p90 at 2.7 -> 0.20 + 0.7 * 0.10 = 0.27.
TEST(Summarize, BiasMedianP90EvenCount) {
  const ValidationSummary s =
      summarize({timed("g-a", 10, 9), timed("g-b", 10, 12), timed("g-c", 20, 21), timed("g-d", 10, 7)});
  EXPECT_EQ(s.samples, 4);
  EXPECT_NEAR(s.bias, -0.025, 1e-12);
  EXPECT_NEAR(s.median_abs_error, 0.15, 1e-12);
  EXPECT_NEAR(s.p90_abs_error, 0.27, 1e-12);
}

// A throughput headline: TFLOPS +25 % is a time error of -20 % (simulated faster); |err| stays 25 %.
// Failed cases count in cases and failed, not in the statistics.
TEST(Summarize, BiasOfAThroughputHeadlineAndFailedCases) {
  ValidationCase t;
  t.name = "mcore-h100-x";
  t.fields = {{"tflops_per_gpu", 100, 125}};
  ValidationCase failed = timed("mcore-h100-y", 1, 100);
  failed.error = "heads not divisible";
  const ValidationSummary s = summarize({t, failed});
  EXPECT_EQ(s.cases, 2);
  EXPECT_EQ(s.failed, 1);
  EXPECT_EQ(s.samples, 1);
  EXPECT_NEAR(s.bias, -0.20, 1e-12);
  EXPECT_NEAR(s.median_abs_error, 0.25, 1e-12);
}

TEST(Summarize, ByGeneration) {
  ValidationCase unknown = timed("coll-x", 100, 110, "");
  const auto by = summarize_by_generation(
      {timed("a-1", 10, 9, "ampere"), timed("a-2", 10, 12, "ampere"), timed("h-1", 10, 11, "hopper"), unknown});
  ASSERT_EQ(by.size(), 3u);
  EXPECT_EQ(by.at("ampere").cases, 2);
  EXPECT_NEAR(by.at("ampere").bias, 0.05, 1e-12);  // {-0.10, +0.20}
  EXPECT_NEAR(by.at("ampere").median_abs_error, 0.15, 1e-12);
  EXPECT_NEAR(by.at("hopper").bias, 0.10, 1e-12);
  EXPECT_EQ(by.at("unknown").cases, 1);
}

ValidationSummary group_with_median(double median_abs_error, int cases = 5) {
  ValidationSummary s;
  s.cases = s.simulated = s.samples = cases;
  s.median_abs_error = median_abs_error;
  return s;
}

AccuracyRecord record_of(std::map<std::string, ValidationSummary> groups, std::vector<std::string> failed = {}) {
  return AccuracyRecord{std::move(groups), std::move(failed)};
}

const GroupComparison& group(const AccuracyComparison& c, const std::string& name) {
  for (const GroupComparison& g : c.groups)
    if (g.group == name) return g;
  throw Error("no group " + name);
}

TEST(CompareAccuracy, RegressionByMoreThanOnePointFails) {
  const AccuracyRecord recorded = record_of({{"g", group_with_median(0.10)}, {"h", group_with_median(0.20)}});
  const AccuracyComparison c =
      compare_accuracy(recorded, record_of({{"g", group_with_median(0.1101)}, {"h", group_with_median(0.20)}}));
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(group(c, "g").verdict, GroupVerdict::Regressed);
  EXPECT_NEAR(group(c, "g").delta_points, 1.01, 1e-9);
  EXPECT_EQ(group(c, "h").verdict, GroupVerdict::Unchanged);
  std::ostringstream out;
  write_accuracy_comparison(out, c);
  EXPECT_THAT(out.str(), HasSubstr("accuracy check: FAILED: g regressed by 1.01 points"));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("\ng +5 +0 .*11\\.0% +10\\.00% +\\+1\\.01 .*REGRESSED"));
}

TEST(CompareAccuracy, RegressionWithinOnePointPasses) {
  const AccuracyComparison c =
      compare_accuracy(record_of({{"g", group_with_median(0.10)}}), record_of({{"g", group_with_median(0.1099)}}));
  EXPECT_TRUE(c.passed());
  EXPECT_FALSE(c.re_record());
  EXPECT_EQ(group(c, "g").verdict, GroupVerdict::Unchanged);
  std::ostringstream out;
  write_accuracy_comparison(out, c);
  EXPECT_THAT(out.str(), HasSubstr("accuracy check: passed"));
  EXPECT_THAT(out.str(), Not(HasSubstr("re-record")));
}

TEST(CompareAccuracy, ToleranceIsAParameter) {
  const AccuracyComparison c =
      compare_accuracy(record_of({{"g", group_with_median(0.10)}}), record_of({{"g", group_with_median(0.1099)}}), 0.5);
  EXPECT_FALSE(c.passed());
}

TEST(CompareAccuracy, ImprovementPassesAndAsksToReRecord) {
  const AccuracyComparison c =
      compare_accuracy(record_of({{"g", group_with_median(0.20)}}), record_of({{"g", group_with_median(0.05)}}));
  EXPECT_TRUE(c.passed());
  EXPECT_TRUE(c.re_record());
  EXPECT_EQ(group(c, "g").verdict, GroupVerdict::Improved);
  std::ostringstream out;
  write_accuracy_comparison(out, c);
  EXPECT_THAT(out.str(), HasSubstr("passed"));
  EXPECT_THAT(out.str(), HasSubstr("re-record"));
}

TEST(CompareAccuracy, MissingGroupFailsNewGroupPasses) {
  const AccuracyRecord recorded = record_of({{"g", group_with_median(0.10)}, {"gone", group_with_median(0.10)}});
  const AccuracyComparison c =
      compare_accuracy(recorded, record_of({{"g", group_with_median(0.10)}, {"fresh", group_with_median(0.50)}}));
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(group(c, "gone").verdict, GroupVerdict::Missing);
  EXPECT_EQ(group(c, "fresh").verdict, GroupVerdict::New);
  std::ostringstream out;
  write_accuracy_comparison(out, c);
  EXPECT_THAT(out.str(), HasSubstr("group gone is gone"));

  const AccuracyComparison only_new =
      compare_accuracy(record_of({{"g", group_with_median(0.10)}}),
                       record_of({{"g", group_with_median(0.10)}, {"fresh", group_with_median(0.50)}}));
  EXPECT_TRUE(only_new.passed());
  EXPECT_TRUE(only_new.re_record());
}

// A case that fails now and was not recorded as failing fails the check, whatever the medians do;
// one recorded as failing that now simulates passes (re-record).
TEST(CompareAccuracy, NewlyFailingCaseFails) {
  const auto groups = std::map<std::string, ValidationSummary>{{"g", group_with_median(0.10)}};
  const AccuracyComparison c = compare_accuracy(record_of(groups, {"g-old"}), record_of(groups, {"g-new", "g-old"}));
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.newly_failed, std::vector<std::string>{"g-new"});
  std::ostringstream out;
  write_accuracy_comparison(out, c);
  EXPECT_THAT(out.str(), HasSubstr("newly failing to simulate: g-new"));

  const AccuracyComparison fixed = compare_accuracy(record_of(groups, {"g-old"}), record_of(groups));
  EXPECT_TRUE(fixed.passed());
  EXPECT_TRUE(fixed.re_record());
  EXPECT_EQ(fixed.newly_simulated, std::vector<std::string>{"g-old"});
}

TEST(AccuracyRecord, FromCasesToJsonAndBack) {
  ValidationCase failed = timed("g-z", 10, 0);
  failed.error = "cannot simulate";
  const std::vector<ValidationCase> cases = {timed("g-a", 10, 9), timed("g-b", 10, 12), timed("g-c", 20, 21), failed,
                                             timed("h-a", 3, 3.3)};
  const AccuracyRecord r = make_accuracy_record(cases);
  ASSERT_EQ(r.groups.size(), 2u);
  EXPECT_EQ(r.failed_cases, std::vector<std::string>{"g-z"});

  const auto j = nlohmann::json::parse(accuracy_record_to_json(r).dump());
  EXPECT_TRUE(j["about"].is_string());
  const auto& g = j["groups"]["g"];
  EXPECT_EQ(g["cases"], 4);
  EXPECT_EQ(g["simulated"], 3);
  EXPECT_EQ(g["failed"], 1);
  EXPECT_EQ(g["samples"], 3);
  EXPECT_DOUBLE_EQ(g["bias"].get<double>(), 0.05);
  EXPECT_DOUBLE_EQ(g["median_abs_error"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(g["p90_abs_error"].get<double>(), 0.18);
  EXPECT_EQ(j["failed_cases"], nlohmann::json::array({"g-z"}));

  const AccuracyRecord back = accuracy_record_from_json(j);
  EXPECT_EQ(back.failed_cases, r.failed_cases);
  EXPECT_NEAR(back.groups.at("h").median_abs_error, 0.10, 1e-6);
  // The round trip compares as unchanged with what it was made from.
  EXPECT_TRUE(compare_accuracy(back, r).passed());
  EXPECT_FALSE(compare_accuracy(back, r).re_record());
}

TEST(AccuracyRecord, MalformedIsAnErrorNamingTheKey) {
  EXPECT_THROW(accuracy_record_from_json(nlohmann::json::object()), Error);
  try {
    accuracy_record_from_json(nlohmann::json::parse(R"({"groups": {"g": {"cases": 1, "simulated": 1, "failed": 0}}})"));
    FAIL();
  } catch (const Error& e) { EXPECT_THAT(e.what(), HasSubstr("groups.g has no 'median_abs_error'")); }
  EXPECT_THROW(accuracy_record_from_json(nlohmann::json::parse(
                   R"({"groups": {"g": {"cases": "x", "simulated": 1, "failed": 0, "median_abs_error": 0.1}}})")),
               Error);
}

// The JSON of `trainsim validate --json`: bias, samples and the by-generation summary.
TEST(ValidationJson, BiasSamplesAndGenerations) {
  const auto j = nlohmann::json::parse(
      validation_to_json({timed("g-a", 10, 9, "ampere"), timed("g-b", 10, 12, "hopper"), timed("g-c", 20, 21, "")})
          .dump());
  EXPECT_EQ(j["cases"][0]["generation"], "ampere");
  EXPECT_TRUE(j["cases"][2]["generation"].is_null());
  const auto& s = j["summary"];
  EXPECT_EQ(s["samples"], 3);
  EXPECT_NEAR(s["bias"].get<double>(), 0.05, 1e-12);
  EXPECT_EQ(s["by_group"]["g"]["samples"], 3);
  EXPECT_NEAR(s["by_group"]["g"]["bias"].get<double>(), 0.05, 1e-12);
  EXPECT_EQ(s["by_generation"]["ampere"]["cases"], 1);
  EXPECT_NEAR(s["by_generation"]["hopper"]["bias"].get<double>(), 0.20, 1e-12);
  EXPECT_EQ(s["by_generation"]["unknown"]["cases"], 1);
  EXPECT_TRUE(s["by_gpu"].is_object());
}

TEST(ValidationMarkdown, GroupAndGenerationTablesWithBias) {
  std::ostringstream out;
  write_validation_markdown(out, {timed("g-a", 10, 9, "ampere"), timed("g-b", 10, 12, "ampere"), timed("h-a", 10, 11)});
  const std::string md = out.str();
  EXPECT_THAT(md, HasSubstr("| group | cases | simulated | failed | bias | median \\|err\\| | p90 \\|err\\| |"));
  EXPECT_THAT(md, HasSubstr("| g | 2 | 2 | 0 | +5.0% | 15.0% | 19.0% |"));  // p90: 0.10 + 0.9 * 0.10
  EXPECT_THAT(md, HasSubstr("## Summary by GPU generation"));
  EXPECT_THAT(md, HasSubstr("| ampere | 2 | 2 | 0 | +5.0% | 15.0% | 19.0% |"));
  EXPECT_THAT(md, HasSubstr("| hopper | 1 | 1 | 0 | +10.0% | 10.0% | 10.0% |"));
  EXPECT_THAT(md, Not(HasSubstr("wall")));
}

TEST(ValidationTable, GenerationRowsWithBias) {
  std::ostringstream out;
  write_validation_table(out, {timed("g-a", 10, 9, "ampere"), timed("g-b", 10, 12, "ampere"), timed("h-a", 10, 11)});
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("generation +cases +simulated +failed +bias +median \\|err\\| +p90"));
  EXPECT_THAT(out.str(), ::testing::ContainsRegex("ampere +2 +2 +0 +\\+5\\.0% +15\\.0% +19\\.0%"));
}

}  // namespace
}  // namespace trainsim
