// cluster.network.simai_topology: a SimAI topology file resolved next to the scenario, its rates and sizes the
// cluster's defaults, every disagreement an error naming the key and the file's line, and the keys of a generated
// fabric refused beside it.
#include <filesystem>
#include <fstream>

#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

const std::string kExample = std::string(TRAINSIM_SOURCE_DIR) + "/examples/simai-rail-16gpu-h100.topo";

// A directory of its own holding `name` with the example's text (or `text`); returns the directory.
std::filesystem::path scenario_dir(const std::string& name, const std::string& text = "") {
  const auto dir = std::filesystem::temp_directory_path() / ("trainsim_simai_keys_" + name);
  std::filesystem::create_directories(dir);
  if (text.empty())
    std::filesystem::copy_file(kExample, dir / "net.topo", std::filesystem::copy_options::overwrite_existing);
  else
    std::ofstream(dir / "net.topo") << text;
  return dir;
}

// kValidScenario without the cluster keys the file states, naming net.topo.
std::string with_file(const std::string& yaml = kValidScenario) {
  std::string s = edit(yaml, "cluster.nics_per_node", nullptr);
  s = edit(s, "cluster.nic_gbps", nullptr);
  s = edit(s, "cluster.gpus_per_node", nullptr);
  return edit(s, "cluster.network.simai_topology", "net.topo");
}

test::CaughtError load_error(const std::string& yaml, const std::filesystem::path& dir) {
  test::CaughtError e;
  try {
    parse_scenario(yaml, (dir / "s.yaml").string());
  } catch (const ScenarioError& err) {
    e.thrown = true;
    e.what = err.what();
    e.key = err.key();
    e.file = err.file();
  }
  return e;
}

// The path is relative to the scenario's directory; the file's NIC rate, NVLink bandwidth, servers and NICs become
// the cluster's.
TEST(SimaiTopologyKeys, FileNextToTheScenarioGivesTheClusterItsRates) {
  const auto dir = scenario_dir("defaults");
  std::string yaml = edit(with_file(), "cluster.scale_up", nullptr);
  yaml = edit(yaml, "cluster.gpu", "H800-SXM");  // catalog NVLink 200 GB/s: the file's 450 wins
  const auto e = load_error(yaml, dir);
  ASSERT_TRUE(e.thrown);  // H800 is not the file's H100
  EXPECT_EQ(e.key, "cluster.gpu");
  EXPECT_NE(e.what.find("net.topo:1: the SimAI topology's GPU type is H100; cluster.gpu is H800-SXM"),
            std::string::npos)
      << e.what;

  const Scenario s = parse_scenario(with_file(), (dir / "s.yaml").string());
  EXPECT_EQ(s.cluster.network.topology, NetworkTopology::SimaiFile);
  EXPECT_EQ(s.cluster.network.simai_topology, (dir / "net.topo").lexically_normal().string());
  EXPECT_EQ(s.cluster.gpus_per_node, 8);
  EXPECT_EQ(s.cluster.nics_per_node, 8);
  EXPECT_DOUBLE_EQ(s.cluster.nic_gbps, 400);
  EXPECT_DOUBLE_EQ(s.cluster.scale_up.bandwidth_GBps, 450);  // 3600 Gb/s
  EXPECT_EQ(s.cluster.scale_up.domain_size, 8);
}

TEST(SimaiTopologyKeys, StatedValuesMustAgreeWithTheFile) {
  const auto dir = scenario_dir("mismatch");
  auto e = load_error(edit(with_file(), "cluster.nic_gbps", "200"), dir);
  EXPECT_EQ(e.key, "cluster.nic_gbps");
  EXPECT_NE(e.what.find("s.yaml: cluster.nic_gbps: " + (dir / "net.topo").string() + ":4: gpu 0's links to switches"),
            std::string::npos)
      << e.what;
  e = load_error(edit(with_file(), "cluster.num_gpus", "32"), dir);
  EXPECT_EQ(e.key, "cluster.num_gpus");
  EXPECT_NE(e.what.find("net.topo:1: the SimAI topology has 16 GPUs"), std::string::npos) << e.what;
  e = load_error(edit(with_file(), "cluster.scale_up", "{bandwidth_GBps: 900}"), dir);
  EXPECT_EQ(e.key, "cluster.scale_up.bandwidth_GBps");
  EXPECT_NE(e.what.find("net.topo:3:"), std::string::npos) << e.what;
  e = load_error(edit(with_file(), "cluster.nics_per_node", "4"), dir);
  EXPECT_EQ(e.key, "cluster.nics_per_node");
  // Values equal to the file's are fine.
  EXPECT_FALSE(
      load_error(edit(edit(with_file(), "cluster.nic_gbps", "400"), "cluster.gpus_per_node", "8"), dir).thrown);
}

TEST(SimaiTopologyKeys, KeysOfAGeneratedFabricAreRefused) {
  const auto dir = scenario_dir("shape");
  for (const auto& [key, value] : std::vector<std::pair<std::string, const char*>>{{"topology", "fat-tree"},
                                                                                   {"tiers", "3"},
                                                                                   {"oversubscription", "2"},
                                                                                   {"switch_radix", "8"},
                                                                                   {"link_latency_ns", "100"},
                                                                                   {"pod_size", "16"}}) {
    const auto e = load_error(edit(with_file(), "cluster.network." + key, value), dir);
    EXPECT_EQ(e.key, "cluster.network." + key);
    EXPECT_NE(e.what.find("leave it out"), std::string::npos) << e.what;
  }
  // What the format has no field for keeps working.
  const Scenario s =
      parse_scenario(edit(with_file(), "cluster.network.switch_latency_ns", "100"), (dir / "s.yaml").string());
  EXPECT_DOUBLE_EQ(s.cluster.network.switch_latency_ns, 100);
}

TEST(SimaiTopologyKeys, BadFileIsReportedAtItsLine) {
  const auto dir = scenario_dir("bad", "28 8 2 10 1 H100\n16 17 18 19 20 21 22 23 24 25 26 27\n0 16 400Gbit 1ns 0\n");
  const auto e = load_error(with_file(), dir);
  EXPECT_EQ(e.key, "cluster.network.simai_topology");
  EXPECT_NE(e.what.find((dir / "net.topo").string() + ":3: rate '400Gbit': unknown unit 'Gbit'"), std::string::npos)
      << e.what;
  const auto missing = load_error(edit(with_file(), "cluster.network.simai_topology", "nowhere.topo"), dir);
  EXPECT_EQ(missing.key, "cluster.network.simai_topology");
  EXPECT_NE(missing.what.find("cannot open the SimAI topology file"), std::string::npos) << missing.what;
  EXPECT_EQ(load_error(edit(with_file(), "cluster.network.simai_topology", "''"), dir).key,
            "cluster.network.simai_topology");
}

}  // namespace
}  // namespace trainsim
