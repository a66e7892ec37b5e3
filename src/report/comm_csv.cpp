// The per-collective table as CSV, for spreadsheets and plotting scripts. Columns carry the same
// names as the JSON "comm" objects; doubles are written with fmt's shortest round-trip form.
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "report/format_utils.hpp"
#include "report/reports.hpp"

namespace trainsim {

void write_comm_csv(std::ostream& out, const RunResult& r) {
  using report_format::csv_field;
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf),
                 "kind,group,group_size,count,bytes,time_s,exposed_s,algorithm,protocol,max_call_s\n");
  for (const CommStat& c : r.comm) {
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{},{},{},{},{}\n", csv_field(c.kind), csv_field(c.group),
                   c.group_size, c.count, c.bytes, c.time_s, c.exposed_s, csv_field(c.algorithm), csv_field(c.protocol),
                   c.max_call_s);
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

void write_links_csv(std::ostream& out, const std::vector<LinkUsageRow>& links) {
  using report_format::csv_field;
  // A packet-level run adds what congestion did at each link.
  const bool packet = std::any_of(links.begin(), links.end(), [](const LinkUsageRow& l) { return l.packet; });
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf), "link,kind,capacity_GBps,bytes,busy_s,peak_flows,utilisation{}\n",
                 packet ? ",max_queue_kb,pause_events,paused_s,ecn_marks,drops" : "");
  for (const LinkUsageRow& l : links) {
    fmt::format_to(std::back_inserter(buf), "{},{},{},{},{},{},{}", csv_field(l.name), csv_field(l.kind),
                   l.capacity_GBps, l.bytes, l.busy_s, l.peak_flows, l.utilisation);
    if (packet)
      fmt::format_to(std::back_inserter(buf), ",{},{},{},{},{}", l.max_queue_kb, l.pause_events, l.paused_s,
                     l.ecn_marks, l.drops);
    buf.push_back('\n');
  }
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

namespace {

// A port's rows over time: `link,kind,` then the row's own columns.
template <class Row, class Format>
void write_port_rows(std::ostream& out, const char* header, const std::vector<Row>& rows, Format rest) {
  using report_format::csv_field;
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf), "link,kind,{}\n", header);
  for (const Row& r : rows)
    fmt::format_to(std::back_inserter(buf), "{},{},{}\n", csv_field(r.link), csv_field(r.kind), rest(r));
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace

void write_queues_csv(std::ostream& out, const std::vector<QueueSampleRow>& samples) {
  write_port_rows(out, "time_us,queue_kb", samples,
                  [](const QueueSampleRow& q) { return fmt::format("{},{}", q.time_us, q.queue_kb); });
}

void write_pauses_csv(std::ostream& out, const std::vector<PauseRow>& pauses) {
  write_port_rows(out, "start_us,end_us,cause", pauses, [](const PauseRow& p) {
    return fmt::format("{},{},{}", p.start_us, p.end_us, report_format::csv_field(p.cause));
  });
}

void write_rates_csv(std::ostream& out, const std::vector<RateRow>& rates) {
  fmt::memory_buffer buf;
  fmt::format_to(std::back_inserter(buf), "flow,link,time_us,rate_gbps\n");
  for (const RateRow& r : rates)
    fmt::format_to(std::back_inserter(buf), "{},{},{},{}\n", r.flow, report_format::csv_field(r.link), r.time_us,
                   r.rate_gbps);
  out.write(buf.data(), static_cast<std::streamsize>(buf.size()));
}

}  // namespace trainsim
