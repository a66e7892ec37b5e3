// A SimAI topology file as the fabric of a run (cluster.network.simai_topology): the example's file against
// trainsim's generator for the same fabric, faults named on it, and generate -> export -> read, all at flow level.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

using namespace trainsim;

namespace {

const std::string kExample = std::string(TRAINSIM_SOURCE_DIR) + "/examples/simai-topo-16-h100.yaml";

double iteration(const Scenario& s) { return run_scenario(s).result.iteration_time_s; }

// The example's file is SimAI's rail-optimized layout for 16 GPUs, 2 spines; radix-8 switches make trainsim's
// generator build the same graph, link for link in the same order (tests/topology/simai_fabric_test.cpp), so the
// same flows take the same paths (ECMP picks among a switch's links in their order) and the times are equal, not
// just close.
TEST(SimaiTopologyRun, FileFabricGivesTheGeneratorsIterationTime) {
  const Scenario file = load_scenario(kExample);
  const Scenario generated =
      load_scenario(kExample, {"cluster.network.simai_topology=null", "cluster.network.topology=rail-optimized",
                               "cluster.network.switch_radix=8"});
  ASSERT_EQ(file.cluster.network.topology, NetworkTopology::SimaiFile);
  const RunOutput a = run_scenario(file), b = run_scenario(generated);
  EXPECT_EQ(a.result.simulation.network_model, "flow");
  EXPECT_GT(a.result.simulation.flows, 0);
  ASSERT_FALSE(a.result.hot_links.empty());  // the DP traffic crossed the file's fabric
  EXPECT_NEAR(a.result.iteration_time_s / b.result.iteration_time_s, 1.0, 1e-12)
      << a.result.iteration_time_s << " vs " << b.result.iteration_time_s;
  EXPECT_EQ(a.result.hot_links.front().name, b.result.hot_links.front().name);
}

// A file in SimAI's No_Rail_Opti_SingleToR layout (DCN+: all GPUs of a server on one ToR), written here: 4 servers of
// 8 GPUs (0-31), NVSwitches 32-35, ToRs 36-39, 2 spines 40-41, every ToR 1600 Gb/s to each spine. trainsim's
// fat-tree at radix 16 builds the same (one host per ToR, 8 uplinks split over 2 spines); here the data-parallel
// rings cross the spines, each flow hashed to one of two, so ECMP on the file's fabric is checked too.
TEST(SimaiTopologyRun, HandWrittenDcnFileGivesTheFatTreesIterationTime) {
  std::string topo = "42 8 4 6 72 H100\n32 33 34 35 36 37 38 39 40 41\n";
  for (int g = 0; g < 32; ++g)
    topo += std::to_string(g) + " " + std::to_string(32 + g / 8) + " 3600Gbps 0.000025ms 0\n" + std::to_string(g) +
            " " + std::to_string(36 + g / 8) + " 400Gbps 0.0005ms 0\n";
  for (int tor = 36; tor < 40; ++tor)
    for (int spine = 40; spine < 42; ++spine)
      topo += std::to_string(tor) + " " + std::to_string(spine) + " 1600Gbps 0.0005ms 0\n";
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_simai_topology_run_dcn";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "dcn.topo") << topo;
  const std::string job = R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 64, micro_batch_size: 2}
parallelism: {tensor: 2, pipeline: 1}
cluster: {gpu: H100-SXM, num_gpus: 32, network: NETWORK}
simulation: {network_model: flow}
)";
  auto with_network = [&](const std::string& network) {
    std::string text = job;
    return parse_scenario(text.replace(text.find("NETWORK"), 7, network), (dir / "s.yaml").string());
  };
  const RunOutput file = run_scenario(with_network("{simai_topology: dcn.topo}"));
  const RunOutput generated = run_scenario(with_network("{topology: fat-tree, switch_radix: 16}"));
  double spine_bytes = 0;
  for (const auto& l : file.links)
    if (l.kind == "leaf-spine") spine_bytes += l.bytes;
  EXPECT_GT(spine_bytes, 0);
  EXPECT_NEAR(file.result.iteration_time_s / generated.result.iteration_time_s, 1.0, 1e-12)
      << file.result.iteration_time_s << " vs " << generated.result.iteration_time_s;
}

// Faults name the file's switches by their trainsim names (leaf i = the i-th switch GPUs link to).
TEST(SimaiTopologyRun, FaultsOnTheFilesLinks) {
  const Scenario s =
      load_scenario(kExample, {"faults=[{kind: link_down, link: leaf0-spine0, always: true}, {kind: link_degraded, "
                               "link: leaf1-spine1, factor: 0.25, always: true}]"});
  const RunResult r = run_scenario(s).result;
  ASSERT_TRUE(r.faults.has_value());
  EXPECT_EQ(r.faults->faults, 2);
  EXPECT_GE(r.faults->slowdown, 1.0);
  EXPECT_DOUBLE_EQ(r.faults->fault_free_iteration_time_s, iteration(load_scenario(kExample)));
  try {
    run_scenario(load_scenario(kExample, {"faults=[{kind: link_down, link: leaf0-spine7, always: true}]"}));
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "faults[0].link");
    EXPECT_NE(std::string(e.what()).find("spine0..spine1"), std::string::npos) << e.what();
  }
}

// trainsim's fabric written as a SimAI file and read back runs the job in the same time: single-ToR rails, HPN's
// dual-ToR planes, a 3-tier fat-tree.
TEST(SimaiTopologyRun, ExportThenReadGivesTheSameIterationTime) {
  const std::string job = R"(
model: {preset: gpt3-1.3b}
training: {global_batch_size: 64, micro_batch_size: 2}
parallelism: {tensor: 2, pipeline: 2}
cluster:
  gpu: H100-SXM
  num_gpus: 32
  network: NETWORK
simulation: {network_model: flow}
)";
  auto with_network = [&](const std::string& network) {
    std::string text = job;
    return text.replace(text.find("NETWORK"), 7, network);
  };
  const auto dir = std::filesystem::temp_directory_path() / "trainsim_simai_topology_run";
  std::filesystem::create_directories(dir);
  for (const char* network : {"{topology: rail-optimized, switch_radix: 8}", "{topology: hpn, switch_radix: 16}",
                              "{topology: fat-tree, tiers: 3, switch_radix: 16, oversubscription: [2, 1, 1]}"}) {
    SCOPED_TRACE(network);
    const Scenario generated = parse_scenario(with_network(network), (dir / "gen.yaml").string());
    const std::string path = (dir / "fabric.topo").string();
    export_simai_topology(generated, path);
    const Scenario read = parse_scenario(with_network("{simai_topology: fabric.topo}"), (dir / "read.yaml").string());
    EXPECT_NEAR(iteration(read) / iteration(generated), 1.0, 1e-12);
  }
}

TEST(SimaiTopologyRun, ExportNamesTheKeyTheFormatCannotDescribe) {
  const Scenario s =
      parse_scenario("cluster: {gpu: H100-SXM, num_gpus: 16, nics_per_node: 4, network: {topology: rail-optimized}}\n",
                     "c.yaml", {}, ScenarioNeeds::ClusterOnly);
  try {
    export_simai_topology(s, testing::TempDir() + "/never.topo");
    FAIL() << "no error";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.file(), "c.yaml");
    EXPECT_EQ(e.key(), "cluster.nics_per_node");
  }
}

}  // namespace
