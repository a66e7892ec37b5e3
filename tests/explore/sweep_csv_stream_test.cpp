// The sweep CSV written while the sweep runs: rows leave in point order as soon as every earlier
// point is done (whatever order the threads finish them in), each write is flushed so the file can
// be read while the sweep goes on, and the finished file is what write_sweep_csv writes at the end.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "explore/sweep_csv_stream.hpp"
#include "point_outcomes.hpp"

namespace trainsim::explore {
namespace {

using ::testing::ElementsAre;
using json = nlohmann::ordered_json;

// A simulated point whose result is the JSON text `result`.
PointOutcome ok_parsed(const char* result) { return test::ok_outcome(json::parse(result)); }

std::string path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("trainsim_stream_" + name + ".csv")).string();
}

// The file as another process would read it now (the stream still open).
std::vector<std::string> file_lines(const std::string& p) {
  std::ifstream f(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

std::string file_text(const std::string& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(SweepCsvStream, RowsLeaveInPointOrderAsSoonAsEveryEarlierPointIsDone) {
  const Sweep sweep = make_sweep({"parallelism.tensor=1,2,4,8"});
  const std::string p = path("order");
  SweepCsvStream csv(p, sweep, 4);
  EXPECT_THAT(file_lines(p), ElementsAre("parallelism.tensor,status,reason"));  // a header at once
  csv.add(2, ok_parsed(R"({"t": 3})"));
  csv.add(1, ok_parsed(R"({"t": 2})"));
  // Points 1 and 2 are done but point 0 is not: nothing may be written ahead of it.
  EXPECT_THAT(file_lines(p), ElementsAre("parallelism.tensor,status,reason"));
  EXPECT_EQ(csv.written(), 0u);
  csv.add(0, ok_parsed(R"({"t": 1})"));
  EXPECT_THAT(file_lines(p), ElementsAre("parallelism.tensor,status,reason,t", "1,ok,,1", "2,ok,,2", "4,ok,,3"));
  EXPECT_EQ(csv.written(), 3u);
  csv.add(3, ok_parsed(R"({"t": 4})"));
  csv.finish();
  EXPECT_THAT(file_lines(p),
              ElementsAre("parallelism.tensor,status,reason,t", "1,ok,,1", "2,ok,,2", "4,ok,,3", "8,ok,,4"));
}

TEST(SweepCsvStream, NewColumnsRewriteTheFileSoItEndsAsTheWholeTable) {
  const Sweep sweep = make_sweep({"cluster.nic_gbps=100,200,400"});
  const std::vector<PointOutcome> outcomes = {test::not_run_outcome(PointStatus::Invalid, "bad, \"quoted\""),
                                              ok_parsed(R"({"a": 1, "b": {"c": 2.5}})"),
                                              ok_parsed(R"({"a": 3, "d": "x"})")};
  const std::string p = path("columns");
  SweepCsvStream csv(p, sweep, outcomes.size());
  csv.add(0, outcomes[0]);
  EXPECT_THAT(file_lines(p), ElementsAre("cluster.nic_gbps,status,reason", "100,invalid,\"bad, \"\"quoted\"\"\""));
  csv.add(1, outcomes[1]);
  EXPECT_THAT(file_lines(p), ElementsAre("cluster.nic_gbps,status,reason,a,b.c",
                                         "100,invalid,\"bad, \"\"quoted\"\"\",,", "200,ok,,1,2.5"));
  csv.add(2, outcomes[2]);
  csv.finish();
  std::stringstream whole;
  write_sweep_csv(whole, make_sweep_table(sweep, outcomes));
  EXPECT_EQ(file_text(p), whole.str());
}

TEST(SweepCsvStream, FinishSaysWhenPointsAreMissingOrTheFileCannotBeWritten) {
  const Sweep sweep = make_sweep({"parallelism.tensor=1,2"});
  SweepCsvStream csv(path("missing"), sweep, 2);
  csv.add(1, ok_parsed(R"({"t": 2})"));
  EXPECT_THROW(csv.finish(), Error);
  EXPECT_THROW(SweepCsvStream("/nonexistent-dir/x.csv", sweep, 2), Error);
}

}  // namespace
}  // namespace trainsim::explore
