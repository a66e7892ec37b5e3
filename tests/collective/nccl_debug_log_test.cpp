// NCCL_DEBUG=INFO: the levels and subsystems NCCL accepts, and the INFO lines in NCCL's formats carrying the
// communicator's own numbers (graphs, rings, trees, the cost table), so that they diff against a real job's log.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <numeric>
#include <regex>

#include <pugixml.hpp>

#include "collective/nccl/nccl_analytical_model.hpp"
#include "collective/nccl/nccl_debug_log.hpp"
#include "core/error.hpp"
#include "test_clusters.hpp"

namespace trainsim {
namespace {

using Env = std::map<std::string, std::string>;

TEST(NcclDebugLog, LevelsAndSubsystemsAsNcclReadsThem) {
  EXPECT_FALSE(nccl_debug_subsystems({}).has_value());
  EXPECT_FALSE(nccl_debug_subsystems({{"NCCL_DEBUG", "WARN"}}).has_value());
  const auto plain = nccl_debug_subsystems({{"NCCL_DEBUG", "INFO"}});  // NCCL's default list: INIT,BOOTSTRAP,ENV
  ASSERT_TRUE(plain.has_value());
  EXPECT_TRUE(plain->init);
  EXPECT_FALSE(plain->graph || plain->tuning);
  const auto some = nccl_debug_subsystems({{"NCCL_DEBUG", "info"}, {"NCCL_DEBUG_SUBSYS", "GRAPH,TUNING"}});
  ASSERT_TRUE(some.has_value());
  EXPECT_TRUE(some->graph && some->tuning && !some->init);
  const auto inverted = nccl_debug_subsystems({{"NCCL_DEBUG", "TRACE"}, {"NCCL_DEBUG_SUBSYS", "^INIT"}});
  ASSERT_TRUE(inverted.has_value());
  EXPECT_TRUE(inverted->graph && inverted->tuning && !inverted->init);
  const auto all = nccl_debug_subsystems({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "ALL"}});
  ASSERT_TRUE(all.has_value());
  EXPECT_TRUE(all->init && all->graph && all->tuning);
  EXPECT_FALSE(nccl_debug_subsystems({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "NET"}}).has_value());
  try {
    nccl_debug_subsystems({{"NCCL_DEBUG", "LOUD"}});
    ADD_FAILURE() << "not refused";
  } catch (const ScenarioError& e) { EXPECT_EQ(e.key(), "nccl.NCCL_DEBUG"); }
  try {
    nccl_debug_subsystems({{"NCCL_DEBUG", "INFO"}, {"NCCL_DEBUG_SUBSYS", "INIT,GRAF"}});
    ADD_FAILURE() << "not refused";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "nccl.NCCL_DEBUG_SUBSYS");
    EXPECT_NE(std::string(e.what()).find("GRAF"), std::string::npos);
  }
}

std::vector<int> first(int n) {
  std::vector<int> r(static_cast<std::size_t>(n));
  std::iota(r.begin(), r.end(), 0);
  return r;
}

TEST(NcclDebugLog, LinesCarryTheCommunicatorsNumbersInNcclsFormats) {
  const ClusterSpec c = testing::h100_cluster(2);
  const NcclAnalyticalModel model(c, {});
  const GroupPlacement where = GroupPlacement::of(first(16), c);
  const auto comm = model.communicator(where);
  const auto tuning = model.tuning(where);
  const std::vector<std::string> lines = nccl_debug_lines(*comm, *tuning, {true, true, true});
  ASSERT_FALSE(lines.empty());
  // GRAPH: the ring graph first, one line per search channel, NICs around the node's GPUs.
  std::smatch m;
  ASSERT_TRUE(std::regex_match(
      lines[0], m,
      std::regex(
          R"(Pattern 4, crossNic \d, nChannels (\d+), bw \d+\.\d{6}/\d+\.\d{6}, type [A-Z]{3}/[A-Z]{3}, sameChannels [01])")))
      << lines[0];
  EXPECT_EQ(std::stoi(m[1]), comm->ring_graph.nchannels);
  EXPECT_TRUE(std::regex_match(lines[1], std::regex(R"( 0 : NET/0-[0-9a-f]+( GPU/0-[0-9a-f]+){8} NET/0-[0-9a-f]+)")))
      << lines[1];
  // INIT: rank 0's view of every ring, ranks at the width of the largest.
  const std::string ring0 = fmt::format("Channel 00/{:02d} :", comm->rings.size());
  const auto ring =
      std::find_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.starts_with(ring0); });
  ASSERT_NE(ring, lines.end());
  std::string expected = ring0;
  for (int r : comm->rings[0].order) expected += fmt::format(" {:>2}", r);
  EXPECT_EQ(*ring, expected);
  EXPECT_NE(
      std::find(lines.begin(), lines.end(),
                fmt::format("{} coll channels, 0 collnet channels, {} nvls channels, {} p2p channels, {} p2p "
                            "channels per peer",
                            comm->nchannels, comm->nvls_channels, comm->p2p_nchannels, comm->p2p_channels_per_peer)),
      lines.end());
  // TUNING: the AllReduce row's Ring/Simple cell is the cost model's entry.
  const NcclCostEntry e = tuning->entry(NcclFunction::AllReduce, NcclAlgorithm::Ring, NcclProtocol::Simple);
  const auto row =
      std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("    AllReduce |"); });
  ASSERT_NE(row, lines.end());
  EXPECT_NE(row->find(fmt::format("{:8.1f}/{:6.1f} |", e.latency_us, e.algbw_GBps)), std::string::npos) << *row;
}

// rings.cc dumpLine: a 128-byte buffer. With two-digit ranks (64) the next " %2d" overruns it, so the line ends in
// "..." at 127 characters; with three-digit ranks (256) 28 ranks fill it exactly and nothing is cut.
std::string first_ring_line(int nodes) {
  const ClusterSpec c = testing::h100_cluster(nodes);
  const NcclAnalyticalModel model(c, {});
  const GroupPlacement where = GroupPlacement::of(first(8 * nodes), c);
  const auto lines = nccl_debug_lines(*model.communicator(where), *model.tuning(where), {true, false, false});
  const auto ring =
      std::find_if(lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("Channel 00/"); });
  return ring == lines.end() ? std::string() : *ring;
}

TEST(NcclDebugLog, LongRingLinesAreCutAsNcclCutsThem) {
  const std::string cut = first_ring_line(8);
  EXPECT_EQ(cut.size(), 127u) << cut;
  EXPECT_TRUE(cut.ends_with("...")) << cut;
  const std::string full = first_ring_line(32);
  EXPECT_EQ(full.size(), 127u) << full;
  EXPECT_FALSE(full.ends_with("...")) << full;
}

// NCCL_GRAPH_DUMP_FILE: one <graph> per NCCL algorithm (Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree,
// PAT), each channel the GPUs of rank 0's node between its entry and exit NICs, as NCCL_GRAPH_FILE reads them.
TEST(NcclDebugLog, GraphDumpIsNcclsGraphXml) {
  const ClusterSpec c = testing::h100_cluster(2);
  const NcclAnalyticalModel model(c, {});
  const auto comm = model.communicator(GroupPlacement::of(first(16), c));
  pugi::xml_document doc;
  ASSERT_TRUE(doc.load_string(nccl_graph_xml(*comm).c_str()));
  const pugi::xml_node graphs = doc.child("graphs");
  EXPECT_EQ(graphs.attribute("version").as_int(), 1);
  std::vector<pugi::xml_node> all;
  for (pugi::xml_node g : graphs.children("graph")) all.push_back(g);
  ASSERT_EQ(all.size(), 7u);
  const std::vector<int> ids = {1, 0, 4, 2, 3, 3, 1};
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i].attribute("id").as_int(), ids[i]) << i;
  const pugi::xml_node ring = all[1];
  EXPECT_EQ(ring.attribute("pattern").as_int(), 4);
  EXPECT_EQ(ring.attribute("nchannels").as_int(), comm->ring_graph.nchannels);
  int channels = 0;
  for (pugi::xml_node ch : ring.children("channel")) {
    int gpus = 0, nets = 0;
    for (pugi::xml_node n : ch.children()) (std::string(n.name()) == "gpu" ? gpus : nets) += 1;
    EXPECT_EQ(gpus, 8);
    EXPECT_EQ(nets, 2);
    EXPECT_EQ(ch.child("gpu").attribute("rank").as_int(),
              comm->ring_graph.intra[static_cast<std::size_t>(channels)][0]);
    ++channels;
  }
  EXPECT_EQ(channels, comm->ring_graph.nchannels);
  // NVLS graphs list their head GPU only.
  for (pugi::xml_node ch : all[4].children("channel"))
    EXPECT_EQ(std::distance(ch.children("gpu").begin(), ch.children("gpu").end()), 1);
}

}  // namespace
}  // namespace trainsim
