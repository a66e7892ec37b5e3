// SimAI topology files as text (topology/simai_topology.hpp): the layout SimAI's generators write and its ns-3
// backend reads, parsed strictly; every bad line is named as FILE:LINE.
#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "topology/simai_topology.hpp"

namespace trainsim {
namespace {

// Two servers of two GPUs, one NVSwitch each, one ToR per rail and a spine: 4 GPUs + 2 NVSwitches + 3 switches.
constexpr const char* kSmall =
    "9 2 2 3 10 H100\n"
    "4 5 6 7 8\n"
    "0 4 3600Gbps 0.000025ms 0\n"
    "0 6 400Gbps 0.0005ms 0\n"
    "1 4 3600Gbps 0.000025ms 0\n"
    "1 7 400Gbps 0.0005ms 0\n"
    "2 5 3600Gbps 0.000025ms 0\n"
    "2 6 400Gbps 0.0005ms 0\n"
    "3 5 3600Gbps 0.000025ms 0\n"
    "3 7 400Gbps 0.0005ms 0\n"
    "6 8 800Gbps 0.0005ms 0\n"
    "7 8 800Gbps 0.0005ms 0\n";

// The message of the Error parse_simai_topology throws ("" when it does not).
std::string parse_error(const std::string& text) {
  try {
    parse_simai_topology(text, "t.topo");
  } catch (const Error& e) { return e.what(); }
  return "";
}

// `text` with line `n` (1-based) replaced.
std::string with_line(std::string text, int n, const std::string& line) {
  std::size_t start = 0;
  for (int i = 1; i < n; ++i) start = text.find('\n', start) + 1;
  const std::size_t end = text.find('\n', start);
  return text.replace(start, end - start, line);
}

TEST(SimaiTopologyText, ReadsTheHeaderSwitchLineAndLinks) {
  const SimaiTopology t = parse_simai_topology(kSmall, "t.topo");
  EXPECT_EQ(t.node_count, 9);
  EXPECT_EQ(t.gpus_per_server, 2);
  EXPECT_EQ(t.gpu_type, "H100");
  EXPECT_EQ(t.gpu_count(), 4);  // 9 nodes - 2 NVSwitches - 3 switches
  EXPECT_EQ(t.nvswitch_ids, (std::vector<int>{4, 5}));
  EXPECT_EQ(t.switch_ids, (std::vector<int>{6, 7, 8}));
  ASSERT_EQ(t.links.size(), 10u);
  EXPECT_EQ(t.links[0].rate_bps, 3'600'000'000'000);
  EXPECT_EQ(t.links[0].delay_ps, 25'000);  // 0.000025 ms = 25 ns
  EXPECT_EQ(t.links[1].rate_bps, 400'000'000'000);
  EXPECT_EQ(t.links[1].delay_ps, 500'000);  // 0.0005 ms = 500 ns, exact despite the binary fraction
  EXPECT_EQ(t.links[1].file_line, 4);
}

// ns-3's DataRate and Time spellings: bytes as well as bits, binary prefixes, a bare number in bit/s or seconds.
TEST(SimaiTopologyText, RatesAndDelaysInNs3Units) {
  auto link = [](const std::string& rate, const std::string& delay) {
    return parse_simai_topology(with_line(kSmall, 4, "0 6 " + rate + " " + delay + " 0"), "t.topo").links[1];
  };
  EXPECT_EQ(link("50GB/s", "500ns").rate_bps, 400'000'000'000);  // 50 GB/s x 8
  EXPECT_EQ(link("1.5Gbps", "1us").rate_bps, 1'500'000'000);
  EXPECT_EQ(link("100", "1us").rate_bps, 100);  // bare: bit/s
  EXPECT_EQ(link("1Gib/s", "1us").rate_bps, 1'073'741'824);
  EXPECT_EQ(link("400Gbps", "500ns").delay_ps, 500'000);
  EXPECT_EQ(link("400Gbps", "1e-6").delay_ps, 1'000'000);  // bare: seconds
  EXPECT_EQ(link("400Gbps", "2600fs").delay_ps, 3);        // rounded to the picosecond clock
}

TEST(SimaiTopologyText, UnknownUnitsAreErrorsNamingTheLine) {
  EXPECT_EQ(parse_error(with_line(kSmall, 4, "0 6 400Gbit 0.0005ms 0"))
                .rfind("t.topo:4: rate '400Gbit': unknown "
                       "unit 'Gbit'",
                       0),
            0u);
  EXPECT_NE(parse_error(with_line(kSmall, 4, "0 6 400Gbps 1min 0")).find("t.topo:4: delay '1min': unknown unit"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 4, "0 6 Gbps 1ns 0"))
                .find("t.topo:4: rate 'Gbps' does not start with a "
                      "number"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 4, "0 6 400Gbps -1ns 0")).find("t.topo:4: delay '-1ns' is negative"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 4, "0 6 400Gbps 1ns 2")).find("t.topo:4: error rate '2'"), std::string::npos);
}

TEST(SimaiTopologyText, WrongCountsAreErrorsNamingTheLine) {
  EXPECT_NE(parse_error(with_line(kSmall, 1, "9 2 2 3 10")).find("t.topo:1: the header has 5 fields"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 2, "4 5 6 7"))
                .find("t.topo:2: 4 switch ids; the header (line 1) counts 2 "
                      "NVSwitches and 3 switches"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 1, "9 2 2 3 11 H100"))
                .find("t.topo:12: the header (line 1) counts 11 links "
                      "but the file ends after 10"),
            std::string::npos);
  EXPECT_NE(parse_error(std::string(kSmall) + "\n5 8 1Gbps 1ns 0\n")
                .find("t.topo:14: the header (line 1) counts 10 "
                      "links; this is one more"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 4, "0 6 400Gbps 0.0005ms")).find("t.topo:4: a link line has five fields"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 1, "9 2 5 4 10 H100")).find("t.topo:1: 9 nodes leave no GPU"),
            std::string::npos);
  EXPECT_NE(parse_error("").find("t.topo:1: empty"), std::string::npos);
}

TEST(SimaiTopologyText, LinksToUnknownNodesAndRepeatedCablesAreErrors) {
  EXPECT_NE(parse_error(with_line(kSmall, 4, "0 99 400Gbps 0.0005ms 0")).find("t.topo:4: node 99 does not exist"),
            std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 4, "6 6 400Gbps 0.0005ms 0")).find("t.topo:4: a link from node 6 to itself"),
            std::string::npos);
  // The same cable written the other way round on line 12 (first on line 11).
  EXPECT_NE(parse_error(with_line(kSmall, 12, "8 6 800Gbps 0.0005ms 0"))
                .find("t.topo:12: nodes 8 and 6 are already linked on line 11"),
            std::string::npos);
}

// SimAI runs nodes 0..G-1 as its ranks and the next ids as NVSwitches (AstraSimNetwork.cc): line 2 must agree.
TEST(SimaiTopologyText, SwitchIdsMustFollowTheGpus) {
  EXPECT_NE(parse_error(with_line(kSmall, 2, "3 5 6 7 8")).find("t.topo:2: switch id 3 is below 4"), std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 2, "4 6 5 7 8")).find("t.topo:2: NVSwitch id 6"), std::string::npos);
  EXPECT_NE(parse_error(with_line(kSmall, 2, "4 5 6 6 8")).find("t.topo:2: switch id 6 is listed twice"),
            std::string::npos);
}

// Windows line ends and blank lines between links read as the generators' files do.
TEST(SimaiTopologyText, CrLfAndBlankLinesAreAccepted) {
  std::string crlf;
  for (char c : std::string(kSmall)) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  EXPECT_EQ(parse_simai_topology(crlf, "t.topo").links.size(), 10u);
  EXPECT_EQ(parse_simai_topology(with_line(kSmall, 5, "\n1 4 3600Gbps 0.000025ms 0"), "t.topo").links[2].file_line, 6);
}

TEST(SimaiTopologyText, FormatReadsBackToTheSameTopology) {
  const SimaiTopology t = parse_simai_topology(kSmall, "t.topo");
  const std::string text = format_simai_topology(t);
  EXPECT_NE(text.find("0 4 3600Gbps 25ns 0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("0 6 400Gbps 500ns 0\n"), std::string::npos) << text;
  const SimaiTopology again = parse_simai_topology(text, "again.topo");
  EXPECT_EQ(format_simai_topology(again), text);
  ASSERT_EQ(again.links.size(), t.links.size());
  for (std::size_t i = 0; i < t.links.size(); ++i) {
    EXPECT_EQ(again.links[i].rate_bps, t.links[i].rate_bps);
    EXPECT_EQ(again.links[i].delay_ps, t.links[i].delay_ps);
  }
}

}  // namespace
}  // namespace trainsim
