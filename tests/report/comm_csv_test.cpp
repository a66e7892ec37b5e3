// write_comm_csv: a header plus one row per CommStat, RFC 4180 quoting where needed.
#include <gtest/gtest.h>

#include <sstream>

#include "report/reports.hpp"
#include "sample_result.hpp"

namespace trainsim {
namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

TEST(CommCsv, HeaderAndOneRowPerCollective) {
  std::ostringstream out;
  write_comm_csv(out, test::sample_result());
  const auto lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0], "kind,group,group_size,count,bytes,time_s,exposed_s,algorithm,protocol,max_call_s");
  // 3 GiB = 3221225472 bytes, written as an exact integer-valued double.
  EXPECT_EQ(lines[1], "all_reduce,tp,8,9216,3221225472,2.25,0.8,Ring,Simple,0");
  EXPECT_EQ(lines[2], "reduce_scatter,dp,16,2,1536,0.5,0.4,Ring,LL128,0");
}

TEST(CommCsv, EmptyTableIsJustTheHeader) {
  RunResult r;
  std::ostringstream out;
  write_comm_csv(out, r);
  EXPECT_EQ(lines_of(out.str()).size(), 1u);
}

TEST(CommCsv, FieldsWithCommasAndQuotesAreQuoted) {
  RunResult r;
  r.comm.push_back(CommStat{"all_reduce", "tp,dp", 2, 1, 8, 1, 0, "say \"hi\"", ""});
  std::ostringstream out;
  write_comm_csv(out, r);
  EXPECT_EQ(lines_of(out.str())[1], "all_reduce,\"tp,dp\",2,1,8,1,0,\"say \"\"hi\"\"\",,0");
}

}  // namespace
}  // namespace trainsim
