// `trainsim run --queues-csv FILE` at packet level: every fabric port that queued, its egress queue over time (the
// samples the trace's counter tracks draw from), consistent with the peak queue `--links-csv` reports; stdout does
// not change with it; a run that is not packet level is an error naming --queues-csv. `--pauses-csv FILE`: every
// interval PFC paused a port, as many and as long as `--links-csv` counts them. `--rates-csv FILE`: every change of
// every flow's sending rate.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli_support.hpp"

namespace {

using namespace trainsim_cli_test;
using ::testing::HasSubstr;

// Two nodes of the small example on leaves of 16 ports at 4:1: the data-parallel all-reduce queues at the leaves.
const std::string kCongested = "run " + kTinyExample +
                               " --set cluster.num_gpus=16 --set simulation.network_model=packet"
                               " --set cluster.network.topology=fat-tree --set cluster.network.switch_radix=16"
                               " --set cluster.network.oversubscription=4 --set model.num_layers=2";

// Runs the congested example with `flags` (options writing files) and without: stdout is the same.
void expect_the_same_result_with(const std::string& flags) {
  const Result plain = run(kCongested + " --json --no-timing");
  const Result r = run(kCongested + " --json --no-timing " + flags);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(r.out, plain.out);  // the same result, the file beside it
}

// The CSV file's rows, after checking its header.
std::istringstream csv_rows(const std::string& file, const std::string& header) {
  std::istringstream in(read_file(file));
  std::string line;
  EXPECT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, header);
  return in;
}

TEST(QueuesCsvCli, EveryQueuedPortOverTimeAgreesWithTheLinkTable) {
  const std::string queues = temp_path("queues.csv"), links = temp_path("queues_links.csv");
  ASSERT_NO_FATAL_FAILURE(expect_the_same_result_with("--queues-csv " + queues + " --links-csv " + links));
  std::istringstream q = csv_rows(queues, "link,kind,time_us,queue_kb");
  std::string line;
  std::map<std::string, double> last_time, peak;
  int rows = 0;
  while (std::getline(q, line)) {
    const auto f = csv_fields(line);
    ASSERT_EQ(f.size(), 4u) << line;
    const double t = std::stod(f[2]), kb = std::stod(f[3]);
    EXPECT_GE(kb, 0.0) << line;
    if (last_time.count(f[0])) {
      EXPECT_GE(t, last_time[f[0]]) << line;  // each port's samples in time order
    }
    last_time[f[0]] = t;
    peak[f[0]] = std::max(peak[f[0]], kb);
    ++rows;
  }
  EXPECT_GT(rows, 20);
  for (const auto& [link, kb] : peak) EXPECT_GT(kb, 0.0) << link << ": listed, so it queued";

  // Every fabric port whose peak queue the link table reports is in the file, its samples reaching most of that peak
  // (a sample per 4 packets of change, at most one a microsecond). NVLink and PCIe hops are credit-based, not
  // fabric ports: the table shows what waited at them, the file does not.
  std::istringstream l(read_file(links));
  ASSERT_TRUE(std::getline(l, line));
  const auto header = csv_fields(line);
  const auto col = std::find(header.begin(), header.end(), "max_queue_kb") - header.begin();
  const auto kind = std::find(header.begin(), header.end(), "kind") - header.begin();
  ASSERT_LT(static_cast<std::size_t>(col), header.size()) << line;
  int queued = 0;
  while (std::getline(l, line)) {
    const auto f = csv_fields(line);
    const double max_kb = std::stod(f[static_cast<std::size_t>(col)]);
    const std::string& k = f[static_cast<std::size_t>(kind)];
    if (max_kb < 100 || k == "nvlink" || k == "pcie") continue;  // a few packets (sampling may skip it), or a host hop
    ++queued;
    ASSERT_TRUE(peak.count(f[0])) << f[0];
    EXPECT_LE(peak[f[0]], max_kb + 1e-6) << f[0];
    EXPECT_GE(peak[f[0]], 0.5 * max_kb) << f[0];
  }
  EXPECT_GT(queued, 0);
}

TEST(QueuesCsvCli, EveryPauseAgreesWithTheLinkTable) {
  const std::string pauses = temp_path("pauses.csv"), links = temp_path("pauses_links.csv");
  ASSERT_NO_FATAL_FAILURE(expect_the_same_result_with("--pauses-csv " + pauses + " --links-csv " + links));
  std::istringstream p = csv_rows(pauses, "link,kind,start_us,end_us,cause");
  std::string line;
  std::map<std::string, int> count;
  std::map<std::string, double> paused_us, last_end;
  std::set<std::string> causes;
  while (std::getline(p, line)) {
    const auto f = csv_fields(line);
    ASSERT_EQ(f.size(), 5u) << line;
    if (!f[4].empty()) causes.insert(f[4]);
    const double start = std::stod(f[2]), end = std::stod(f[3]);
    EXPECT_LE(start, end) << line;
    if (last_end.count(f[0])) {
      EXPECT_GE(start, last_end[f[0]]) << line;  // a port's pauses in order, apart
    }
    last_end[f[0]] = end;
    ++count[f[0]];
    paused_us[f[0]] += end - start;
  }
  ASSERT_FALSE(count.empty());

  // The link table's pause_events and paused_s, port by port (times in the file are rounded to the nanosecond).
  std::istringstream l(read_file(links));
  ASSERT_TRUE(std::getline(l, line));
  const auto header = csv_fields(line);
  const auto column = [&](const char* name) {
    return static_cast<std::size_t>(std::find(header.begin(), header.end(), name) - header.begin());
  };
  const std::size_t events = column("pause_events"), seconds = column("paused_s");
  ASSERT_LT(seconds, header.size()) << line;
  int paused_links = 0;
  while (std::getline(l, line)) {
    const auto f = csv_fields(line);
    const int n = std::stoi(f[events]);
    const bool listed = count.count(f[0]) > 0;  // (no operator[]: it would list the link)
    EXPECT_EQ(listed ? count.at(f[0]) : 0, n) << f[0];
    EXPECT_NEAR(listed ? paused_us.at(f[0]) : 0.0, std::stod(f[seconds]) * 1e6, 1e-3 * n + 1e-9) << f[0];
    paused_links += n > 0;
  }
  EXPECT_EQ(paused_links, static_cast<int>(count.size()));
  // The pauses' causes are the ports the paused links' bytes waited at: fabric links that queued, each in the table.
  EXPECT_FALSE(causes.empty());
  const std::string table = read_file(links);
  for (const std::string& c : causes) EXPECT_NE(table.find("\n" + c + ","), std::string::npos) << c;
}

// Each flow's rows, in time order: it starts at its NIC port's line rate (400 Gb/s here) or below, DCQCN cuts some
// flows on the congested leaves, and each ends at 0 when it finishes, leaving through one NIC port.
TEST(QueuesCsvCli, EveryFlowsRateOverTime) {
  const std::string rates = temp_path("rates.csv");
  ASSERT_NO_FATAL_FAILURE(expect_the_same_result_with("--rates-csv " + rates));
  std::istringstream in = csv_rows(rates, "flow,link,time_us,rate_gbps");
  std::string line;
  struct Seen {
    std::string link;
    double first = -1, last = -1, lowest = 1e300, time = -1;
  };
  std::map<std::string, Seen> flows;
  double previous_time = 0;
  while (std::getline(in, line)) {
    const auto f = csv_fields(line);
    ASSERT_EQ(f.size(), 4u) << line;
    const double t = std::stod(f[2]), gbps = std::stod(f[3]);
    EXPECT_GE(t, previous_time) << line;  // the file is in time order
    previous_time = t;
    Seen& s = flows[f[0]];
    if (s.first < 0) {
      s.first = gbps;
      s.link = f[1];
    }
    EXPECT_EQ(f[1], s.link) << line;
    EXPECT_LE(gbps, 400.0 + 1e-6) << line;
    s.last = gbps;
    s.lowest = std::min(s.lowest, gbps == 0 ? s.lowest : gbps);
    s.time = t;
  }
  ASSERT_GT(flows.size(), 8u);
  int cut = 0;
  for (const auto& [flow, s] : flows) {
    EXPECT_GT(s.first, 0.0) << flow;
    EXPECT_EQ(s.last, 0.0) << flow << ": finished";
    EXPECT_THAT(s.link, HasSubstr("nic")) << flow;
    cut += s.lowest < s.first;
  }
  EXPECT_GT(cut, 0);
}

TEST(QueuesCsvCli, OnlyAtPacketLevel) {
  for (const char* model : {"analytical", "flow"})
    for (const char* flag : {"--queues-csv", "--pauses-csv", "--rates-csv"}) {
      const Result r = run("run " + kTinyExample + " --set simulation.network_model=" + model + " " + flag + " " +
                           temp_path("never.csv"));
      EXPECT_EQ(r.status, 1) << r.out;
      EXPECT_THAT(r.out, HasSubstr(flag));
      EXPECT_THAT(r.out, HasSubstr("simulation.network_model: packet"));
    }
}

}  // namespace
