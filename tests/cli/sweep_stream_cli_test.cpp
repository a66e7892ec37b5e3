// `sweep --csv FILE` writes each row as its point finishes, in point order: a sweep stopped midway
// keeps the rows it finished, and a point that is slow holds back the rows after it (never written
// ahead of it) whatever the threads. A point reading its op database from a named pipe blocks until
// the test writes to the pipe, which makes "slow" exact instead of a race.
#include <filesystem>
#include <fstream>
#include <sstream>

#include <sys/stat.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "background_process.hpp"
#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fs = std::filesystem;

std::string path(const std::string& name) {
  return (fs::temp_directory_path() / ("trainsim_stream_cli_" + name)).string();
}

std::vector<std::string> csv_lines(const std::string& p) {
  std::ifstream f(p);
  std::vector<std::string> out;
  for (std::string line; std::getline(f, line);) out.push_back(line);
  return out;
}

// A named pipe standing for an op database that is not there yet.
std::string fifo(const std::string& name) {
  const std::string p = path(name);
  fs::remove(p);
  if (mkfifo(p.c_str(), 0600) != 0) return "";
  return p;
}

TEST(SweepStreamCli, AStoppedSweepKeepsTheRowsItFinished) {
  const std::string scenario = temp_file("stream_kill.yaml", kSmallSweepScenario), csv = path("kill.csv"),
                    pipe = fifo("kill.fifo");
  ASSERT_FALSE(pipe.empty());
  fs::remove(csv);
  // Points 0 and 1 simulate; point 2 waits on the pipe for ever.
  Background sweep(std::string(TRAINSIM_BINARY) + " sweep " + scenario + " --zip compute.database=null,null," + pipe +
                   " --zip cluster.nic_gbps=100,200,400 --threads 1 --csv " + csv + " > /dev/null 2>&1");
  ASSERT_TRUE(sweep.started());
  const bool two_rows = wait_until([&] { return csv_lines(csv).size() >= 3; }, 60);
  EXPECT_TRUE(sweep.running()) << "the sweep should still be waiting on point 2";
  sweep.stop();
  fs::remove(pipe);
  ASSERT_TRUE(two_rows);
  const auto rows = csv_lines(csv);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_THAT(rows[0], StartsWith("compute.database,cluster.nic_gbps,status,reason,scenario,iteration_time_s"));
  EXPECT_THAT(rows[1], StartsWith("null,100,ok,,"));
  EXPECT_THAT(rows[2], StartsWith("null,200,ok,,"));
}

TEST(SweepStreamCli, RowsAfterASlowPointWaitForItAndTheFileEndsAsWithOneThread) {
  const std::string scenario = temp_file("stream_order.yaml", kSmallSweepScenario), csv = path("order.csv"),
                    pipe = fifo("order.fifo");
  ASSERT_FALSE(pipe.empty());
  fs::remove(csv);
  const std::string points = " --zip compute.database=" + pipe + ",null,null --zip cluster.nic_gbps=100,200,400";
  Background sweep(std::string(TRAINSIM_BINARY) + " sweep " + scenario + points + " --threads 3 --csv " + csv +
                   " > /dev/null 2>&1");
  ASSERT_TRUE(sweep.started());
  // Points 1 and 2 finish in milliseconds; point 0 is blocked, so only the header may be there.
  ASSERT_TRUE(wait_until([&] { return !csv_lines(csv).empty(); }, 60));
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  EXPECT_EQ(csv_lines(csv).size(), 1u) << "rows were written ahead of point 0";
  // Point 0 reads a database that is not one: an invalid row, then every row at once. (Opening the
  // pipe for writing waits for its reader: only while the sweep is there to read it.)
  ASSERT_TRUE(sweep.running());
  { std::ofstream(pipe) << "not,an,op,database\n"; }
  ASSERT_TRUE(wait_until([&] { return !sweep.running(); }, 60));
  fs::remove(pipe);
  const auto rows = csv_lines(csv);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_THAT(rows[1], StartsWith(pipe + ",100,invalid,"));
  EXPECT_THAT(rows[2], StartsWith("null,200,ok,,"));
  EXPECT_THAT(rows[3], StartsWith("null,400,ok,,"));
  // The same bytes as a run whose points all finish in order (the point-0 database as a file).
  const std::string file_db = temp_file("stream_order_db.csv", "not,an,op,database\n");
  const std::string again = path("order_again.csv");
  const auto r = run("sweep " + scenario + " --zip compute.database=" + file_db +
                     ",null,null --zip cluster.nic_gbps=100,200,400 --threads 1 --csv " + again);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto reference = csv_lines(again);
  ASSERT_EQ(reference.size(), rows.size());
  EXPECT_EQ(reference[0], rows[0]);
  EXPECT_EQ(reference[2], rows[2]);
  EXPECT_EQ(reference[3], rows[3]);
}

}  // namespace
