// nccl-test refuses steps that do not advance or that give more rows than a table may have, before
// computing a row, and prints its rows between the header and the average line.
#include <chrono>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;

TEST(NcclTestRowsCli, AnIncrementGivingTooManyRowsIsRefusedWithTheCount) {
  Result r;
  const double seconds = timed("nccl-test " + example("tiny-8-h100.yaml") + " -b 8 -e 1G -i 1", r);
  EXPECT_NE(r.status, 0) << r.out;
  // Refused before any row, in milliseconds; 10 s leaves room for a sanitizer build on a loaded machine
  // and is still far below the runaway (a billion rows) this guards against.
  EXPECT_LT(seconds, 10.0);
  EXPECT_THAT(r.out, HasSubstr("-i 1 from -b 8 to -e 1073741824 gives 1,073,741,817 rows, more than 10,000"));
  // 0..10000 by 1 is 10,001 rows: one too many, and the smallest -i that fits is 2.
  r = run("nccl-test " + example("tiny-8-h100.yaml") + " -b 0 -e 10000 -i 1");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("10,001 rows"));
  EXPECT_THAT(r.out, HasSubstr("use -i 2 or more"));
  r = run("nccl-test " + example("tiny-8-h100.yaml") + " -b 0 -e 10000 -i 2 --json");
  EXPECT_EQ(r.status, 0) << r.out.substr(0, 400);
}

TEST(NcclTestRowsCli, AFactorThatDoesNotGrowTheSizeIsAnError) {
  Result r = run("nccl-test " + example("tiny-8-h100.yaml") + " -b 8 -e 1M -f 1.001");
  EXPECT_NE(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("-f 1.001 does not grow 8 bytes"));
  // Too many rows by factor: 1.0001 grows 10 KiB by a byte a row.
  r = run("nccl-test " + example("tiny-8-h100.yaml") + " -b 10K -e 1G -f 1.0001");
  EXPECT_NE(r.status, 0);
  EXPECT_THAT(r.out, HasSubstr("gives more than 10,000 rows"));
  // A single size needs no step.
  r = run("nccl-test " + example("tiny-8-h100.yaml") + " -b 8 -e 8 -f 1.001 --json");
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(NcclTestRowsCli, TextRowsAreTheJsonRowsBetweenHeaderAndAverage) {
  const Result text = run("nccl-test " + example("tiny-8-h100.yaml") + " -b 8 -e 1M -f 4");
  ASSERT_EQ(text.status, 0) << text.out;
  std::stringstream s(text.out);
  std::vector<std::string> rows;
  std::string last;
  for (std::string line; std::getline(s, line); last = line)
    if (!line.empty() && line[0] != '#') rows.push_back(line);
  EXPECT_EQ(rows.size(), 9u);  // 8 B x 4^k up to 512 KiB
  EXPECT_THAT(last, HasSubstr("# Avg bus bandwidth"));
  EXPECT_THAT(rows.front(), HasSubstr("           8"));
}

}  // namespace
