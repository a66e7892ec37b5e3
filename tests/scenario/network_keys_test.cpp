// Keys the topology layer adds under cluster.network (dual_tor, pcie_GBps, routing), and how packets cross host links.
#include "scenario_test_support.hpp"

namespace trainsim {
namespace {

using test::edit;
using test::kValidScenario;

TEST(NetworkKeys, DefaultsAndValues) {
  const Scenario d = parse_scenario(kValidScenario, "test.yaml");
  EXPECT_FALSE(d.cluster.network.dual_tor);
  EXPECT_DOUBLE_EQ(d.cluster.network.pcie_GBps, 64);
  EXPECT_EQ(d.cluster.network.routing, NetworkSpec::Routing::Ecmp);
  const Scenario s = parse_scenario(
      edit(kValidScenario, "cluster.network", "{topology: fat-tree, dual_tor: true, pcie_GBps: 32, routing: adaptive}"),
      "test.yaml");
  EXPECT_TRUE(s.cluster.network.dual_tor);
  EXPECT_DOUBLE_EQ(s.cluster.network.pcie_GBps, 32);
  EXPECT_EQ(s.cluster.network.routing, NetworkSpec::Routing::Adaptive);
  // hpn is dual-ToR by design; saying so is allowed.
  EXPECT_TRUE(parse_scenario(edit(kValidScenario, "cluster.network", "{topology: hpn, dual_tor: true}"), "test.yaml")
                  .cluster.network.dual_tor);
}

TEST(NetworkKeys, BadValuesNameTheKey) {
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network", "{topology: rail-optimized, dual_tor: true}"),
                        "cluster.network.dual_tor", "applies to topology fat-tree", "not to rail-optimized");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network", "{topology: hpn, dual_tor: false}"),
                        "cluster.network.dual_tor", "always dual-ToR");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.dual_tor", "maybe"), "cluster.network.dual_tor");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.pcie_GBps", "0"), "cluster.network.pcie_GBps",
                        "expected a positive number");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.routing", "random"), "cluster.network.routing", "ecmp",
                        "adaptive", "spray");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "cluster.network.pcie_gbps", "64"), "cluster.network.pcie_gbps",
                        "did you mean cluster.network.pcie_GBps?");
}

// Spraying moves packets: refused at flow level; spraying and adaptive routing reorder a flow's packets at packet
// level, which a lossy fabric's go-back-N takes for loss: refused there too, naming the key.
TEST(NetworkKeys, SprayingAndAdaptiveRoutingNeedPacketsOnALosslessFabric) {
  const Scenario packet =
      parse_scenario(kValidScenario, "test.yaml", {"cluster.network.routing=spray", "simulation.network_model=packet"});
  EXPECT_EQ(packet.cluster.network.routing, NetworkSpec::Routing::Spray);
  EXPECT_NO_THROW(parse_scenario(kValidScenario, "test.yaml",
                                 {"cluster.network.routing=adaptive", "simulation.network_model=flow"}));
  try {
    parse_scenario(kValidScenario, "test.yaml", {"cluster.network.routing=spray", "simulation.network_model=flow"});
    FAIL() << "spraying accepted at flow level";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "cluster.network.routing");
    EXPECT_NE(std::string(e.what()).find("simulation.network_model: packet"), std::string::npos) << e.what();
  }
  for (const char* routing : {"spray", "adaptive"}) {
    try {
      parse_scenario(kValidScenario, "test.yaml",
                     {std::string("cluster.network.routing=") + routing, "simulation.network_model=packet",
                      "cluster.network.roce.lossless=false"});
      FAIL() << routing << " accepted on a lossy fabric";
    } catch (const ScenarioError& e) {
      EXPECT_EQ(e.key(), "cluster.network.routing");
      EXPECT_NE(std::string(e.what()).find("cluster.network.roce.lossless: true"), std::string::npos) << e.what();
    }
  }
  EXPECT_NO_THROW(parse_scenario(kValidScenario, "test.yaml",
                                 {"simulation.network_model=packet", "cluster.network.roce.lossless=false"}));
}

TEST(NetworkKeys, SetOverrides) {
  const Scenario s = parse_scenario(
      kValidScenario, "test.yaml",
      {"cluster.network.topology=fat-tree", "cluster.network.dual_tor=true", "cluster.network.routing=adaptive"});
  EXPECT_TRUE(s.cluster.network.dual_tor);
  EXPECT_EQ(s.cluster.network.routing, NetworkSpec::Routing::Adaptive);
}

// simulation.packet_host_links: how packets cross NVLink and PCIe (fifo by default, delay); only at packet level.
TEST(NetworkKeys, PacketHostLinksChoosesFifoOrDelayAtPacketLevel) {
  using HostLinks = SimulationSpec::HostLinks;
  EXPECT_EQ(parse_scenario(kValidScenario, "test.yaml").simulation.packet_host_links, HostLinks::Fifo);
  const std::string packet = edit(kValidScenario, "simulation.network_model", "packet");
  EXPECT_EQ(
      parse_scenario(edit(packet, "simulation.packet_host_links", "delay"), "test.yaml").simulation.packet_host_links,
      HostLinks::Delay);
  EXPECT_EQ(
      parse_scenario(edit(packet, "simulation.packet_host_links", "fifo"), "test.yaml").simulation.packet_host_links,
      HostLinks::Fifo);
  EXPECT_SCENARIO_ERROR(edit(packet, "simulation.packet_host_links", "wormhole"), "simulation.packet_host_links",
                        "fifo", "delay");
  EXPECT_SCENARIO_ERROR(edit(kValidScenario, "simulation.packet_host_links", "delay"), "simulation.packet_host_links",
                        "network_model: packet");
}

}  // namespace
}  // namespace trainsim
