// `trainsim topo` end to end: the summary table, --json (summary, nodes, links), --dot, --set,
// faults applied and checked, and errors that name the key.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_support.hpp"

using namespace trainsim_cli_test;

namespace {

// 2 SUs of 32 DGX H100 nodes on radix-64 switches: 16 rail leaves, 8 spines.
std::string two_su_cluster(const std::string& extra = "") {
  const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  return temp_file("topo_" + test + ".yaml",
                   "cluster: {gpu: H100-SXM, num_gpus: 512, gpus_per_node: 8, nics_per_node: 8, nic_gbps: 400,\n"
                   "          network: {topology: rail-optimized, tiers: 2, switch_radix: 64}}\n"
                   "collective: {op: all_reduce}\n" +
                       extra);
}

nlohmann::json topo_json(const std::string& args) {
  const Result r = run("topo " + args + " --json");
  EXPECT_EQ(r.status, 0) << r.out;
  return nlohmann::json::parse(r.out);
}

}  // namespace

TEST(TopoCli, PrintsTheSummaryTable) {
  const Result r = run("topo " + two_su_cluster());
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("rail-optimized, 2 tiers, switch radix 64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("tier 0: 16 leaf; tier 1: 8 spine; total 24"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("bisection        12.8 TB/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("nodes_per_scalable_unit 32"), std::string::npos) << r.out;
}

TEST(TopoCli, JsonHasSummaryNodesAndLinks) {
  const auto j = topo_json(two_su_cluster());
  const auto& s = j["summary"];
  EXPECT_EQ(s["topology"], "rail-optimized");
  EXPECT_EQ(s["gpus"], 512);
  EXPECT_DOUBLE_EQ(s["bisection_GBps"].get<double>(), 12800.0);
  EXPECT_EQ(s["derived"]["spines_per_pod"], 8);
  // 512 GPUs + 64 NVSwitches + 512 NICs + 24 switches.
  EXPECT_EQ(j["nodes"].size(), 512u + 64 + 512 + 24);
  // NVLink, PCIe and NIC cables: 512 each; leaf-spine trunks: 16 x 8; two links per cable.
  ASSERT_EQ(j["links"].size(), 2u * (3 * 512 + 16 * 8));
  bool found = false;
  for (const auto& l : j["links"]) {
    for (const char* key : {"name", "from", "to", "capacity_GBps", "latency_ns"}) ASSERT_TRUE(l.contains(key)) << key;
    if (l["name"] == "leaf0>spine0") {
      found = true;
      EXPECT_EQ(l["from"], "leaf0");
      EXPECT_EQ(l["to"], "spine0");
      EXPECT_DOUBLE_EQ(l["capacity_GBps"].get<double>(), 200.0);  // a 4-cable trunk
      EXPECT_DOUBLE_EQ(l["latency_ns"].get<double>(), 800.0);     // 500 wire + 300 switch (defaults)
    }
  }
  EXPECT_TRUE(found);
}

TEST(TopoCli, SetOverridesAndDot) {
  const std::string dot = (std::filesystem::temp_directory_path() / "trainsim_cli_topo_graph.dot").string();
  const auto j = topo_json(two_su_cluster() +
                           " --set cluster.network.topology=fat-tree --set cluster.network.dual_tor=true"
                           " --dot " +
                           dot);
  EXPECT_EQ(j["summary"]["topology"], "fat-tree");
  EXPECT_EQ(j["summary"]["derived"]["hosts_per_tor"], 8);
  std::ifstream f(dot);
  std::stringstream text;
  text << f.rdbuf();
  EXPECT_EQ(text.str().rfind("graph \"fat-tree\" {", 0), 0u) << text.str().substr(0, 100);
  EXPECT_NE(text.str().find("\"node0.nic0\" -- \"leaf0\" [label=\"25\"];"), std::string::npos);
}

TEST(TopoCli, AlwaysFaultsAreAppliedAndTimedOnesChecked) {
  const std::string sc = two_su_cluster(
      "faults:\n"
      "  - {kind: link_down, link: leaf0-spine0, always: true}\n"
      "  - {kind: link_degraded, link: 'leaf1>spine0', factor: 0.5, always: true}\n"
      "  - {kind: nic_down, node: 3, nic: 2, always: true}\n"
      "  - {kind: link_down, link: leaf2-spine1, at_s: 10}\n");
  const auto j = topo_json(sc);
  EXPECT_EQ(j["summary"]["faults_applied"], 3);
  EXPECT_EQ(j["summary"]["faults_later"], 1);
  for (const auto& l : j["links"]) {
    if (l["name"] == "leaf0>spine0" || l["name"] == "spine0>leaf0" || l["name"] == "node3.nic2>leaf2") {
      EXPECT_FALSE(l["up"].get<bool>()) << l["name"];
    }
    if (l["name"] == "leaf1>spine0") { EXPECT_DOUBLE_EQ(l["capacity_GBps"].get<double>(), 100.0); }
    if (l["name"] == "spine0>leaf1" || l["name"] == "leaf2>spine1") { EXPECT_TRUE(l["up"].get<bool>()) << l["name"]; }
  }
  const Result text = run("topo " + sc);
  EXPECT_NE(text.out.find("faults           3 applied (always), 1 at later times"), std::string::npos) << text.out;
}

TEST(TopoCli, ErrorsNameTheKey) {
  // A misspelt link in a timed fault still fails, with the fault's key and valid examples.
  Result r = run("topo " + two_su_cluster("faults: [{kind: link_down, link: leaf0>spine99, at_s: 1}]\n"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("faults[0].link"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spine0..spine7"), std::string::npos) << r.out;
  // 2 tiers cannot hold 4,096 GPUs on radix 64: the error names the file and cluster.network.tiers.
  const std::string sc = two_su_cluster();
  r = run("topo " + sc + " --set cluster.num_gpus=4096");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find(sc + ": cluster.network.tiers:"), std::string::npos) << r.out;
  r = run("topo " + sc + " --set cluster.network.routing=random");
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("cluster.network.routing"), std::string::npos) << r.out;
}

TEST(TopoCli, ExampleScenarios) {
  const Result r = run("topo " + example("llama3-405b-16384-h100.yaml"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("16384 GPUs on 2048 nodes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("spine->core 7:1"), std::string::npos) << r.out;
}

// A SimAI topology file as the fabric: the summary names the file, each node carries its id in it, and `export
// --format simai-topo` writes a file that reads back to the same fabric.
TEST(TopoCli, SimaiTopologyFileAndItsExport) {
  const auto j = topo_json(example("simai-topo-16-h100.yaml"));
  EXPECT_EQ(j["summary"]["topology"], "simai-topology");
  EXPECT_NE(j["summary"]["simai_topology"].get<std::string>().find("simai-rail-16gpu-h100.topo"), std::string::npos);
  std::map<std::string, int> ids;
  for (const auto& n : j["nodes"])
    if (n.contains("simai_id")) ids[n["name"]] = n["simai_id"];
  EXPECT_EQ(ids["gpu15"], 15);
  EXPECT_EQ(ids["nvswitch1"], 17);
  EXPECT_EQ(ids["leaf0"], 18);
  EXPECT_EQ(ids["spine1"], 27);
  EXPECT_EQ(ids.count("node0.nic0"), 0u);  // the file's GPUs are their own NICs

  const std::string out = (std::filesystem::temp_directory_path() / "trainsim_cli_exported.topo").string();
  const Result e = run("export " + example("simai-topo-16-h100.yaml") + " --format simai-topo -o " + out);
  ASSERT_EQ(e.status, 0) << e.out;
  std::ifstream in(out);
  std::string header;
  std::getline(in, header);
  EXPECT_EQ(header, "28 8 2 10 48 H100");
  const std::string scenario =
      temp_file("topo_reexported.yaml", "cluster: {gpu: H100-SXM, num_gpus: 16, network: {simai_topology: " + out +
                                            "}}\ncollective: {op: all_reduce}\n");
  const auto again = topo_json(scenario);
  ASSERT_EQ(again["links"].size(), j["links"].size());
  for (std::size_t i = 0; i < j["links"].size(); ++i) EXPECT_EQ(again["links"][i], j["links"][i]) << i;
  const Result bad = run("export " + example("simai-topo-16-h100.yaml") + " --format simai-topo --per-rank -o " + out);
  EXPECT_EQ(bad.status, 1);
  EXPECT_NE(bad.out.find("--per-rank"), std::string::npos) << bad.out;
}
