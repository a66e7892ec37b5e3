// percentile, headline choice and summarize: the numbers docs/accuracy.md is built on.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/error.hpp"
#include "report/validation_report.hpp"

namespace trainsim {
namespace {

// Linear interpolation (numpy's default): for {1,2,3,4}, position q(n-1): p50 -> 1.5 -> 2.5;
// p90 -> 2.7 -> 3 + 0.7 (4 - 3) = 3.7.
TEST(Percentile, LinearInterpolationOnKnownInputs) {
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0.5), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0.9), 3.7);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 0.9), 3.7);  // order of input does not matter
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(percentile({5, 1, 3}, 0.5), 3.0);  // odd count: the middle value
  EXPECT_DOUBLE_EQ(percentile({7}, 0.9), 7.0);
}

TEST(Percentile, EmptyIsZeroAndNaNIsDropped) {
  EXPECT_DOUBLE_EQ(percentile({}, 0.5), 0.0);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_DOUBLE_EQ(percentile({nan, 1, 3}, 0.5), 2.0);
  EXPECT_DOUBLE_EQ(percentile({nan}, 0.5), 0.0);
}

TEST(Percentile, QOutsideUnitIntervalThrows) {
  EXPECT_THROW(percentile({1, 2}, -0.1), Error);
  EXPECT_THROW(percentile({1, 2}, 1.5), Error);
  EXPECT_THROW(percentile({1, 2}, std::numeric_limits<double>::quiet_NaN()), Error);
}

// error() = (simulated - measured) / measured, signed.
TEST(ValidationField, SignedRelativeError) {
  EXPECT_DOUBLE_EQ((ValidationField{"mfu", 0.5, 0.45}.error()), -0.1);
  EXPECT_DOUBLE_EQ((ValidationField{"tflops_per_gpu", 100, 120}.error()), 0.2);
}

// Headline priority: iteration_time_s, tflops_per_gpu, mfu, hfu, tokens_per_s_per_gpu, busbw_GBps,
// regardless of the order the fields are listed in.
TEST(ValidationCase, HeadlinePriority) {
  ValidationCase c;
  c.fields = {{"mfu", 0.5, 0.5}, {"tflops_per_gpu", 100, 110}, {"iteration_time_s", 10, 11}};
  ASSERT_NE(c.headline(), nullptr);
  EXPECT_EQ(c.headline()->field, "iteration_time_s");
  EXPECT_EQ(c.headline(), &c.fields[2]);  // points into the case, not a copy

  c.fields = {{"mfu", 0.5, 0.5}, {"tflops_per_gpu", 100, 110}};
  EXPECT_EQ(c.headline()->field, "tflops_per_gpu");
  c.fields = {{"hfu", 0.5, 0.5}, {"mfu", 0.4, 0.4}};
  EXPECT_EQ(c.headline()->field, "mfu");
  c.fields = {{"busbw_GBps", 300, 310}, {"hfu", 0.5, 0.5}};
  EXPECT_EQ(c.headline()->field, "hfu");
  c.fields = {{"busbw_GBps", 300, 310}, {"tokens_per_s_per_gpu", 3000, 3100}};
  EXPECT_EQ(c.headline()->field, "tokens_per_s_per_gpu");
  c.fields = {{"busbw_GBps", 300, 310}};
  EXPECT_EQ(c.headline()->field, "busbw_GBps");
  c.fields = {{"something_else", 1, 2}};
  EXPECT_EQ(c.headline(), nullptr);
  c.fields.clear();
  EXPECT_EQ(c.headline(), nullptr);
}

ValidationCase make_case(std::string name, std::string group, std::string gpu, double measured, double simulated,
                         std::string error = "") {
  ValidationCase c;
  c.name = std::move(name);
  c.group = std::move(group);
  c.gpu = std::move(gpu);
  c.confidence = "high";
  c.fields = {{"iteration_time_s", measured, simulated}};
  c.error = std::move(error);
  return c;
}

// Headline errors -10 %, +20 %, +5 %: |err| sorted {0.05, 0.10, 0.20}; median 0.10; p90 at position
// 1.8 -> 0.10 + 0.8 (0.20 - 0.10) = 0.18. The failed case (with a huge stale error) is not counted.
TEST(Summarize, MedianAndP90IgnoringFailedCases) {
  std::vector<ValidationCase> cases = {make_case("a", "g1", "A100", 10, 9), make_case("b", "g1", "H100", 10, 12),
                                       make_case("c", "g2", "H100", 20, 21),
                                       make_case("d", "g2", "H100", 1, 100, "heads not divisible by tensor")};
  const ValidationSummary s = summarize(cases);
  EXPECT_EQ(s.cases, 4);
  EXPECT_EQ(s.simulated, 3);
  EXPECT_EQ(s.failed, 1);
  EXPECT_NEAR(s.median_abs_error, 0.10, 1e-12);
  EXPECT_NEAR(s.p90_abs_error, 0.18, 1e-12);
}

// Only the headline counts: a wild non-headline field does not move the summary.
TEST(Summarize, UsesHeadlineFieldOnly) {
  ValidationCase c = make_case("a", "g", "A100", 10, 11);  // +10 % on iteration time
  c.fields.push_back({"mfu", 0.5, 5.0});                   // +900 %, not the headline
  const ValidationSummary s = summarize({c});
  EXPECT_NEAR(s.median_abs_error, 0.10, 1e-12);
}

// A zero measurement has no relative error: the case is simulated but adds no error sample.
TEST(Summarize, ZeroMeasurementIsNotAnErrorSample) {
  const ValidationSummary s = summarize({make_case("a", "g", "A100", 0, 1), make_case("b", "g", "A100", 10, 12)});
  EXPECT_EQ(s.simulated, 2);
  EXPECT_NEAR(s.median_abs_error, 0.20, 1e-12);
}

TEST(Summarize, EmptyInput) {
  const ValidationSummary s = summarize({});
  EXPECT_EQ(s.cases, 0);
  EXPECT_DOUBLE_EQ(s.median_abs_error, 0.0);
}

TEST(Summarize, ByGroupAndByGpu) {
  std::vector<ValidationCase> cases = {make_case("a", "g1", "A100", 10, 9), make_case("b", "g1", "H100", 10, 12),
                                       make_case("c", "g2", "H100", 20, 21),
                                       make_case("d", "g2", "H100", 1, 100, "failed")};
  const auto by_group = summarize_by_group(cases);
  ASSERT_EQ(by_group.size(), 2u);
  EXPECT_EQ(by_group.at("g1").cases, 2);
  EXPECT_NEAR(by_group.at("g1").median_abs_error, 0.15, 1e-12);  // mean of 0.10 and 0.20
  EXPECT_EQ(by_group.at("g2").failed, 1);
  EXPECT_NEAR(by_group.at("g2").median_abs_error, 0.05, 1e-12);

  const auto by_gpu = summarize_by_gpu(cases);
  ASSERT_EQ(by_gpu.size(), 2u);
  EXPECT_EQ(by_gpu.at("A100").cases, 1);
  EXPECT_EQ(by_gpu.at("H100").cases, 3);
  EXPECT_NEAR(by_gpu.at("H100").median_abs_error, 0.125, 1e-12);  // {0.05, 0.20} -> 0.125
}

}  // namespace
}  // namespace trainsim
