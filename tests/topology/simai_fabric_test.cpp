// A SimAI topology file as the cluster's fabric (topology/simai_fabric.hpp, generate_simai_file.cpp) and a built
// fabric written as one (simai_export.hpp): the graph the file describes, what the file must agree with, the
// files SimAI would misread or trainsim cannot route, and the round trip generate -> export -> read.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "topology/router.hpp"
#include "topology/simai_export.hpp"
#include "topology/simai_fabric.hpp"
#include "topology/summary.hpp"
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;

const std::string kExample = std::string(TRAINSIM_SOURCE_DIR) + "/examples/simai-rail-16gpu-h100.topo";

std::string write_topo(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("trainsim_simai_fabric_" + name + ".topo");
  std::ofstream(path) << text;
  return path.string();
}

// The cluster of test::cluster with its fabric read from `path`.
ClusterSpec from_file(int gpus, const std::string& path, int gpus_per_node = 8) {
  ClusterSpec c = cluster(gpus, NetworkTopology::RailOptimized, 2, 64, gpus_per_node, gpus_per_node);
  c.scale_up.hardware_domain_size = gpus_per_node;
  c.network.topology = NetworkTopology::SimaiFile;
  c.network.simai_topology = path;
  return c;
}

// The Error interpret_simai_topology throws for `text` ("" when none).
std::string fabric_error(const std::string& text) {
  try {
    interpret_simai_topology(parse_simai_topology(text, "f.topo"));
  } catch (const Error& e) { return e.what(); }
  return "";
}

// Two servers of two GPUs (ids 0-3), NVSwitches 4 and 5, rail ToRs 6 and 7, spine 8; `extra` lines appended.
std::string two_servers(const std::string& access3 = "3 7 400Gbps 500ns 0", const std::string& extra = "",
                        int extra_links = 0, int extra_switches = 0) {
  std::string ids = "4 5 6 7 8";
  for (int i = 0; i < extra_switches; ++i) ids += " " + std::to_string(9 + i);
  return std::to_string(9 + extra_switches) + " 2 2 " + std::to_string(3 + extra_switches) + " " +
         std::to_string(10 + extra_links) + " H100\n" + ids +
         "\n"
         "0 4 3600Gbps 25ns 0\n0 6 400Gbps 500ns 0\n"
         "1 4 3600Gbps 25ns 0\n1 7 400Gbps 500ns 0\n"
         "2 5 3600Gbps 25ns 0\n2 6 400Gbps 500ns 0\n"
         "3 5 3600Gbps 25ns 0\n" +
         access3 + "\n6 8 800Gbps 500ns 0\n7 8 800Gbps 500ns 0\n" + extra;
}

void expect_same_graph(const NetworkGraph& a, const NetworkGraph& b) {
  ASSERT_EQ(a.node_count(), b.node_count());
  ASSERT_EQ(a.link_count(), b.link_count());
  for (NodeId n = 0; n < a.node_count(); ++n) EXPECT_EQ(a.node_name(n), b.node_name(n));
  for (LinkId l = 0; l < a.link_count(); ++l) {
    const Link &x = a.link(l), &y = b.link(l);
    EXPECT_EQ(a.link_name(l), b.link_name(l));
    EXPECT_EQ(x.kind, y.kind) << a.link_name(l);
    EXPECT_DOUBLE_EQ(x.nominal_capacity_Bps, y.nominal_capacity_Bps) << a.link_name(l);
    EXPECT_DOUBLE_EQ(x.latency_ns, y.latency_ns) << a.link_name(l);
  }
}

// The example file is SimAI's Rail_Opti_SingleToR layout for 16 GPUs with 2 spines; the rail-optimized generator
// builds the same fabric with radix-8 switches (an SU of 2 nodes, 8 rail leaves, each leaf 2 x 400G up to 2
// spines): the same nodes, and every link with the same ends, class, capacity and latency, in the same order.
TEST(SimaiFabric, ExampleFileIsTheRailGeneratorsFabric) {
  const NetworkGraph generated = build_network(cluster(16, NetworkTopology::RailOptimized, 2, 8));
  const NetworkGraph read = build_network(from_file(16, kExample));
  expect_same_graph(generated, read);
  EXPECT_EQ(read.topology(), "simai-topology");
  EXPECT_EQ(read.role_count(SwitchRole::Leaf), 8);
  EXPECT_EQ(read.role_count(SwitchRole::Spine), 2);
  // The file's own ids, for faults named from it.
  EXPECT_EQ(read.source_id(read.switch_node(SwitchRole::Leaf, 0)), 18);
  EXPECT_EQ(read.source_id(read.switch_node(SwitchRole::Spine, 1)), 27);
  EXPECT_EQ(read.source_id(read.nvswitch(1)), 17);
  EXPECT_EQ(read.source_id(read.gpu(5)), 5);
  EXPECT_FALSE(read.source_id(read.nic(0, 0)));
  EXPECT_FALSE(generated.source_id(generated.switch_node(SwitchRole::Leaf, 0)));
}

// Latencies are the file's delays, plus the scenario's switch latency on a hop into a switch (the format has none).
TEST(SimaiFabric, LinkRatesAndDelaysComeFromTheFile) {
  ClusterSpec c = from_file(4, write_topo("rates", two_servers("3 7 400Gbps 1us 0")), 2);
  c.network.switch_latency_ns = 100;
  const NetworkGraph g = build_network(c);
  const LinkId up = g.link_by_name("node1.nic1>leaf1"), down = g.link_by_name("leaf1>node1.nic1");
  EXPECT_DOUBLE_EQ(g.link(up).latency_ns, 1000 + 100);
  EXPECT_DOUBLE_EQ(g.link(down).latency_ns, 1000);
  EXPECT_DOUBLE_EQ(g.link(g.link_by_name("leaf0>spine0")).capacity_Bps, 100e9);  // 800 Gb/s
  EXPECT_DOUBLE_EQ(g.link(g.scale_up_link(0)).capacity_Bps, 450e9);              // 3600 Gb/s
  EXPECT_DOUBLE_EQ(g.link(g.scale_up_link(0)).latency_ns, 0);  // NVLink hops: the collective model prices them
}

// Each mismatch names the scenario's key and the file's line that states the other value.
TEST(SimaiFabric, ClusterMustAgreeWithTheFile) {
  auto error = [](const ClusterSpec& c) { return test::build_error(c); };
  ClusterSpec c = from_file(16, kExample);
  c.num_gpus = 32;
  auto e = error(c);
  EXPECT_EQ(e.key, "cluster.num_gpus");
  EXPECT_NE(e.what.find(kExample + ":1: the SimAI topology has 16 GPUs (28 nodes - 2 NVSwitches - 10 switches); "
                                   "cluster.num_gpus is 32"),
            std::string::npos)
      << e.what;
  c = from_file(16, kExample);
  c.nic_gbps = 200;
  e = error(c);
  EXPECT_EQ(e.key, "cluster.nic_gbps");
  EXPECT_NE(e.what.find(kExample + ":4: gpu 0's links to switches"), std::string::npos) << e.what;
  c = from_file(16, kExample);
  c.scale_up.bandwidth_GBps = 400;
  e = error(c);
  EXPECT_EQ(e.key, "cluster.scale_up.bandwidth_GBps");
  EXPECT_NE(e.what.find(":3: gpu 0's NVLink links add up to 3600 Gb/s = 450 GB/s"), std::string::npos) << e.what;
  c = from_file(16, kExample);
  c.nics_per_node = 4;
  EXPECT_EQ(error(c).key, "cluster.nics_per_node");
  c = from_file(16, kExample);
  c.gpu.name = "H200";  // the file says H100
  e = error(c);
  EXPECT_EQ(e.key, "cluster.gpu");
  EXPECT_NE(e.what.find("GPU type is H100; cluster.gpu is H200"), std::string::npos) << e.what;
}

// The file's GPU type is compared only when both name catalog GPUs, by the name SimAI writes.
TEST(SimaiFabric, GpuTypeMatchesTheCatalogFamily) {
  const SimaiFabric f = read_simai_fabric(kExample);  // H100
  ClusterSpec c = from_file(16, kExample);
  for (const char* same : {"H100-SXM", "H100"}) {
    c.gpu.name = same;
    EXPECT_NO_THROW(check_cluster_matches(f, c)) << same;
  }
  c.gpu.name = "custom";  // a gpu_spec without a catalog entry: nothing to compare
  EXPECT_NO_THROW(check_cluster_matches(f, c));
  SimaiFabric h20 = f;
  h20.file.gpu_type = "H20";
  c.gpu.name = "H200";  // a prefix, but another GPU
  EXPECT_THROW(check_cluster_matches(h20, c), ScenarioError);
  h20.file.gpu_type = "A100";
  c.gpu.name = "A100-SXM-40GB";  // SimAI's A100 is either A100
  EXPECT_NO_THROW(check_cluster_matches(h20, c));
}

TEST(SimaiFabric, GpusThatCannotReachEachOtherAreErrors) {
  EXPECT_EQ(fabric_error(two_servers()), "");
  // gpu 3 without its NIC link: the header then counts one link less.
  std::string no_nic = two_servers();
  no_nic.replace(no_nic.find("3 7 400Gbps 500ns 0\n"), 20, "");
  no_nic.replace(no_nic.find(" 10 H100"), 8, " 9 H100");
  EXPECT_NE(fabric_error(no_nic).find("f.topo:1: gpu 3 has no link to a switch (its NIC), gpu 0 has (line 4)"),
            std::string::npos)
      << fabric_error(no_nic);
  // gpu 3 on a ToR (9) that no spine joins to the others: a switch hanging off nothing but a GPU.
  const std::string island = two_servers("3 9 400Gbps 500ns 0", "", 0, 1);
  EXPECT_NE(fabric_error(island).find("f.topo:10: gpu 3 cannot reach gpu 0"), std::string::npos)
      << fabric_error(island);
}

TEST(SimaiFabric, LinksSimaiWouldMisreadAreErrors) {
  // gpu 1 (server 0) on server 1's NVSwitch 5.
  std::string wrong = two_servers();
  wrong.replace(wrong.find("1 4 3600Gbps"), 12, "1 5 3600Gbps");
  EXPECT_NE(fabric_error(wrong).find("f.topo:5: gpu 1 (server 0) links to NVSwitch 5, which is server 1's"),
            std::string::npos)
      << fabric_error(wrong);
  EXPECT_NE(fabric_error(two_servers("3 7 400Gbps 500ns 0", "0 1 400Gbps 1ns 0\n", 1))
                .find("f.topo:13: links GPUs 0 and 1 directly"),
            std::string::npos);
  EXPECT_NE(fabric_error(two_servers("3 7 400Gbps 500ns 0", "4 8 400Gbps 1ns 0\n", 1))
                .find("f.topo:13: links NVSwitch 4 to switch 8"),
            std::string::npos);
  EXPECT_NE(fabric_error(two_servers("3 7 400Gbps 500ns 0", "6 7 400Gbps 1ns 0\n", 1))
                .find("f.topo:13: links switches 6 and 7 of the same tier"),
            std::string::npos);
  EXPECT_NE(fabric_error(two_servers("3 7 400Gbps 500ns 0.001")).find("f.topo:10: error rate 0.001"),
            std::string::npos);
  // Unequal NICs: gpu 3's port at 200G.
  EXPECT_NE(fabric_error(two_servers("3 7 200Gbps 500ns 0"))
                .find("f.topo:10: gpu 3's links to switches add up to 200 "
                      "Gb/s, gpu 0's to 400 Gb/s (line 4)"),
            std::string::npos);
  // A switch (9) no GPU's network reaches.
  EXPECT_NE(fabric_error(two_servers("3 7 400Gbps 500ns 0", "", 0, 1)).find("f.topo:2: switch 9 is linked to no GPU"),
            std::string::npos);
}

// Alibaba HPN's dual-ToR, dual-plane layout (gen_Topo_Template.py Rail_Opti_DualToR_DualPlane): each GPU has a port
// on a plane-0 and a plane-1 ToR of its rail, at half the NIC rate; the planes' spines never meet. The NIC is the
// two ports (400G), both dual-homed, and every GPU still reaches every other.
TEST(SimaiFabric, DualPlaneHpnFileBuildsDualHomedNics) {
  // 4 GPUs (2 servers of 2), NVSwitches 4-5, ToRs 6-7 (plane 0, rails 0-1) and 8-9 (plane 1), spines 10 and 11.
  std::string text = "12 2 2 6 16 H100\n4 5 6 7 8 9 10 11\n";
  for (int g = 0; g < 4; ++g)
    text += std::to_string(g) + " " + std::to_string(4 + g / 2) + " 3600Gbps 25ns 0\n" + std::to_string(g) + " " +
            std::to_string(6 + g % 2) + " 200Gbps 500ns 0\n" + std::to_string(g) + " " + std::to_string(8 + g % 2) +
            " 200Gbps 500ns 0\n";
  text += "6 10 400Gbps 500ns 0\n7 10 400Gbps 500ns 0\n8 11 400Gbps 500ns 0\n9 11 400Gbps 500ns 0\n";
  const SimaiFabric f = interpret_simai_topology(parse_simai_topology(text, "hpn.topo"));
  EXPECT_EQ(f.nic_bps, 400'000'000'000);
  const NetworkGraph g = build_network(from_file(4, write_topo("hpn", text), 2));
  EXPECT_EQ(g.out_links(g.nic(1, 1)).size(), 3u);  // PCIe to its GPU and two ports
  EXPECT_EQ(test::count_links(g, LinkKind::Access), 16);
  Router router(g, 0);
  EXPECT_EQ(router.hop_count({0, 0}, {1, 1}), 4);  // NIC -> ToR -> spine -> ToR -> NIC, in either plane
}

// gen_Topo_Template.py's NVLink_Only layout (--no-asw --no-psw): one server needs no switch; two would be islands.
TEST(SimaiFabric, NvlinkOnlyFileIsOneServerOrAnError) {
  std::string one = "9 8 1 0 8 H100\n8 \n";  // the generator ends the id line with a space
  for (int g = 0; g < 8; ++g) one += std::to_string(g) + " 8 3600Gbps 0.000025ms 0\n";
  const NetworkGraph g = build_network(from_file(8, write_topo("nvlink_only", one)));
  EXPECT_EQ(g.switch_count(), 0);
  EXPECT_EQ(test::count_links(g, LinkKind::Access), 0);
  EXPECT_EQ(Router(g, 0).scale_up_path(0, 7).size(), 2u);
  std::string two = "18 8 2 0 16 H100\n16 17\n";
  for (int gpu = 0; gpu < 16; ++gpu)
    two += std::to_string(gpu) + " " + std::to_string(16 + gpu / 8) + " 3600Gbps 25ns 0\n";
  EXPECT_NE(fabric_error(two).find("f.topo:1: no GPU links to a switch, so the 2 servers cannot reach each other"),
            std::string::npos)
      << fabric_error(two);
}

TEST(SimaiFabric, SummaryReadsTiersRadixAndRatiosOffTheGraph) {
  const NetworkGraph g = build_network(from_file(16, kExample));
  ClusterSpec c = from_file(16, kExample);
  const NetworkSummary s = summarize(g, c.network);
  EXPECT_EQ(s.source_file, kExample);
  EXPECT_EQ(s.tiers, 2);
  EXPECT_EQ(s.switch_radix, 8);  // a spine: one cable from each of the 8 leaves
  ASSERT_EQ(s.oversubscription.size(), 1u);
  EXPECT_DOUBLE_EQ(s.oversubscription[0], 1.0);  // 16 x 400G down, 16 x 400G up
  EXPECT_DOUBLE_EQ(s.bisection_Bps, 16 * 50e9 / 2);
}

// generate -> export -> read: the same graph, for a single-ToR rail fabric, HPN's dual-ToR planes and 3 tiers.
TEST(SimaiFabric, ExportedFabricReadsBackAsTheSameGraph) {
  struct FabricCase {
    NetworkTopology topology;
    int gpus, tiers, radix, gpus_per_node;
  };
  // Radix 8 with 4-GPU nodes: 4 pods of 4 rail leaves, 4 spines each, 8 cores.
  for (const FabricCase& k :
       {FabricCase{NetworkTopology::RailOptimized, 32, 2, 8, 8}, FabricCase{NetworkTopology::HPN, 32, 2, 16, 8},
        FabricCase{NetworkTopology::RailOptimized, 64, 3, 8, 4}}) {
    ClusterSpec c = cluster(k.gpus, k.topology, k.tiers, k.radix, k.gpus_per_node, k.gpus_per_node);
    c.gpu.name = "H100-SXM";
    c.scale_up.hardware_domain_size = k.gpus_per_node;
    const NetworkGraph generated = build_network(c);
    const std::string path = write_topo(fmt::format("export_{}_{}", to_string(k.topology), k.tiers), "");
    const SimaiTopology t = simai_topology_of(generated, c, path);
    EXPECT_EQ(t.gpu_type, "H100");
    std::ofstream(path) << format_simai_topology(t);
    ClusterSpec back = c;
    back.network.topology = NetworkTopology::SimaiFile;
    back.network.simai_topology = path;
    SCOPED_TRACE(path);
    expect_same_graph(generated, build_network(back));
  }
}

TEST(SimaiFabric, ExportRefusesWhatTheFormatCannotSay) {
  auto key = [](const ClusterSpec& c) {
    try {
      simai_topology_of(build_network(c), c, "x.topo");
    } catch (const ScenarioError& e) { return e.key(); }
    return std::string();
  };
  EXPECT_EQ(key(cluster(64, NetworkTopology::Dragonfly, 2, 16)), "cluster.network.topology");
  EXPECT_EQ(key(cluster(16, NetworkTopology::RailOptimized, 2, 64, 8, 4)), "cluster.nics_per_node");
  ClusterSpec nvl = cluster(16, NetworkTopology::RailOptimized, 2, 64, 4, 4);
  nvl.scale_up.domain_size = 16;
  EXPECT_EQ(key(nvl), "cluster.scale_up.domain_size");
  EXPECT_EQ(simai_gpu_type("A100-SXM-80GB"), "A100");
  EXPECT_EQ(simai_gpu_type("my gpu"), "my_gpu");
}

}  // namespace
}  // namespace trainsim
