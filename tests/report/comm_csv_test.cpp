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

LinkUsageRow link_row(const char* name, bool packet) {
  LinkUsageRow l;
  l.name = name;
  l.kind = "nic-switch";
  l.capacity_GBps = 50;
  l.bytes = 1e6;
  l.busy_s = 0.5;
  l.peak_flows = 3;
  l.utilisation = 0.25;
  if (packet) {
    l.packet = true;
    l.max_queue_kb = 259.5;
    l.pause_events = 12;
    l.paused_s = 0.001;
    l.ecn_marks = 40;
    l.drops = 0;
  }
  return l;
}

std::vector<std::string> csv_lines(const std::vector<LinkUsageRow>& rows) {
  std::ostringstream out;
  write_links_csv(out, rows);
  return lines_of(out.str());
}

// Flow level: the traffic columns; packet level adds the queue, PFC, ECN and drop columns.
TEST(LinksCsv, PacketRunsAddCongestionColumns) {
  const auto flow = csv_lines({link_row("node0.nic0>leaf0", false)});
  ASSERT_EQ(flow.size(), 2u);
  EXPECT_EQ(flow[0], "link,kind,capacity_GBps,bytes,busy_s,peak_flows,utilisation");
  EXPECT_EQ(flow[1], "node0.nic0>leaf0,nic-switch,50,1000000,0.5,3,0.25");
  const auto packet = csv_lines({link_row("node0.nic0>leaf0", true)});
  ASSERT_EQ(packet.size(), 2u);
  EXPECT_EQ(packet[0],
            "link,kind,capacity_GBps,bytes,busy_s,peak_flows,utilisation,max_queue_kb,pause_events,paused_s,"
            "ecn_marks,drops");
  EXPECT_EQ(packet[1], "node0.nic0>leaf0,nic-switch,50,1000000,0.5,3,0.25,259.5,12,0.001,40,0");
}

}  // namespace
}  // namespace trainsim
