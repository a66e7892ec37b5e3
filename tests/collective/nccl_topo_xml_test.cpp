// NCCL_TOPO_FILE reading (NCCL src/graph/xml.cc, topo.cc) and the generated DGX/HGX-like node.
#include <gtest/gtest.h>

#include <string>

#include "collective/nccl/nccl_node_topology.hpp"
#include "core/error.hpp"
#include "test_clusters.hpp"
#include "test_node_topologies.hpp"

namespace trainsim {
namespace {

const std::string kDgxFile = testing::dgx_h100_xml();

double link_bw(const NodeTopology& t, int from, int to, TopoLinkType type) {
  for (const TopoLink& l : t.vertices[static_cast<std::size_t>(from)].links)
    if (l.to == to && l.type == type) return l.bw;
  return -1;
}

// The DGX-H100 example: 8 GPUs, 8 NETs, 2 SRP sockets, one NVS; 18 NVLinks × 20.6 = 370.8 GB/s each way.
TEST(NcclTopoXml, DgxH100FileHasTheNodeOfSection91) {
  const NodeTopology t = load_nccl_topology_file(kDgxFile, "nccl.NCCL_TOPO_FILE");
  ASSERT_EQ(t.gpus.size(), 8u);
  ASSERT_EQ(t.nets.size(), 8u);
  ASSERT_EQ(t.cpus.size(), 2u);
  ASSERT_GE(t.nvswitch, 0);
  EXPECT_EQ(t.sm, 90);
  EXPECT_EQ(t.vendor, CpuVendor::Intel);
  for (int c : t.cpus) EXPECT_DOUBLE_EQ(t.vertices[static_cast<std::size_t>(c)].inter_socket_bw, 22.0);  // SRP
  for (int r = 0; r < 8; ++r) {
    const TopoVertex& g = t.vertices[static_cast<std::size_t>(t.gpus[static_cast<std::size_t>(r)])];
    EXPECT_EQ(g.rank, r);
    EXPECT_EQ(g.dev, r);
    EXPECT_TRUE(g.gdr);
    EXPECT_NEAR(link_bw(t, t.gpus[static_cast<std::size_t>(r)], t.nvswitch, TopoLinkType::Nvl), 370.8, 1e-9);
    EXPECT_NEAR(link_bw(t, t.nvswitch, t.gpus[static_cast<std::size_t>(r)], TopoLinkType::Nvl), 370.8, 1e-9);
    const TopoVertex& n = t.vertices[static_cast<std::size_t>(t.nets[static_cast<std::size_t>(r)])];
    EXPECT_EQ(n.dev, r);
    EXPECT_DOUBLE_EQ(n.net_bw, 50.0);  // 400000 Mb/s / 8000
    EXPECT_EQ(n.name, "mlx5_" + std::to_string(r));
  }
}

// Links to the same vertex add up; PCIe bandwidth = width × lane value / 80.
TEST(NcclTopoXml, LinkBandwidthsFollowNccl) {
  const std::string xml = R"(<system version="1">
 <cpu numaid="0" arch="x86_64" vendor="AuthenticAMD" familyid="25" modelid="1">
  <pci busid="0000:01:00.0" class="0x030000" link_speed="16.0 GT/s PCIe" link_width="8">
   <gpu dev="0" sm="80" rank="0" gdr="1"><nvlink target="0000:02:00.0" count="4" tclass="0x030000"/>
     <nvlink target="0000:02:00.0" count="2" tclass="0x030000"/></gpu>
  </pci>
  <pci busid="0000:02:00.0" class="0x030000" link_speed="bogus" link_width="0">
   <gpu dev="1" sm="80" rank="1" gdr="1"><nvlink target="0000:01:00.0" count="6" tclass="0x030000"/></gpu>
  </pci>
 </cpu>
</system>)";
  const NodeTopology t = parse_nccl_topology_xml(xml, "t.xml", "k");
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.nvswitch, -1);
  EXPECT_EQ(t.vendor, CpuVendor::Amd);
  EXPECT_DOUBLE_EQ(link_bw(t, t.gpus[0], t.gpus[1], TopoLinkType::Nvl), 120.0);  // (4 + 2) × 20
  EXPECT_DOUBLE_EQ(link_bw(t, t.gpus[0], t.cpus[0], TopoLinkType::Pci), 12.0);   // Gen4 x8
  EXPECT_DOUBLE_EQ(link_bw(t, t.gpus[1], t.cpus[0], TopoLinkType::Pci), 12.0);   // unknown speed: Gen3, x16
}

// Ranks in the file need not start at 0 (node 1 of a job): local ranks follow their order.
TEST(NcclTopoXml, LocalRanksFollowXmlRankOrder) {
  const std::string xml =
      R"(<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
  <pci busid="0000:01:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="9" gdr="1"/></pci>
  <pci busid="0000:02:00.0" class="0x030200" link_speed="32.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="90" rank="8" gdr="1"/></pci>
  </cpu></system>)";
  const NodeTopology t = parse_nccl_topology_xml(xml, "t.xml", "k");
  ASSERT_EQ(t.gpus.size(), 2u);
  EXPECT_EQ(t.vertices[static_cast<std::size_t>(t.gpus[0])].dev, 1);  // rank 8
  EXPECT_EQ(t.vertices[static_cast<std::size_t>(t.gpus[1])].dev, 0);  // rank 9
}

void expect_rejected(const std::string& xml, const std::string& what) {
  try {
    parse_nccl_topology_xml(xml, "bad.xml", "nccl.NCCL_TOPO_FILE");
    ADD_FAILURE() << "accepted: " << xml;
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "nccl.NCCL_TOPO_FILE");
    EXPECT_EQ(e.file(), "bad.xml");
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

const char* kCpuOpen = R"(<cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">)";

TEST(NcclTopoXml, RejectsBadInputNamingTheKeyAndTheProblem) {
  expect_rejected("this is not xml <<<", "not a valid XML document");
  expect_rejected("<graphs version=\"1\"/>", "no <system>");
  expect_rejected("<system version=\"2\"></system>", "only reads version 1");
  expect_rejected("<system></system>", "no version attribute");
  expect_rejected(
      std::string("<system version=\"1\">") + kCpuOpen +
          R"(<pci busid="0000:01:00.0" class="0x030200" link_width="16"><gpu dev="0" sm="90" gdr="1"/></pci></cpu></system>)",
      "without a rank");
  expect_rejected(
      std::string("<system version=\"1\">") + kCpuOpen +
          R"(<pci busid="zz:01" class="0x030200" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1"/></pci></cpu></system>)",
      "bad PCI busid 'zz:01'");
  expect_rejected(std::string("<system version=\"1\">") + kCpuOpen + "</cpu></system>", "no GPUs");
  expect_rejected(
      std::string("<system version=\"1\">") + kCpuOpen +
          R"(<pci busid="0000:01:00.0" class="0x030200" link_width="16"><gpu dev="0" sm="x" rank="0" gdr="1"/></pci></cpu></system>)",
      "attribute sm of <gpu> is not an integer");
  expect_rejected(R"(<system version="1"><cpu numaid="0" arch="risc"/></system>)", "unknown arch 'risc'");
}

TEST(NcclTopoXml, MissingFileIsAScenarioError) {
  EXPECT_THROW(load_nccl_topology_file("/nonexistent/topo.xml", "nccl.NCCL_TOPO_FILE"), ScenarioError);
}

// The generated H100 node has the DGX-H100 example's shape: 2 sockets, a Gen5 switch per GPU with its NIC, 18 NVLinks.
TEST(NcclTopoGenerate, H100NodeHasTheDgxShape) {
  const NodeTopology t = generate_node_topology(testing::h100_cluster(2));
  ASSERT_EQ(t.gpus.size(), 8u);
  ASSERT_EQ(t.nets.size(), 8u);
  ASSERT_EQ(t.cpus.size(), 2u);
  ASSERT_GE(t.nvswitch, 0);
  for (int c : t.cpus) EXPECT_DOUBLE_EQ(t.vertices[static_cast<std::size_t>(c)].inter_socket_bw, 22.0);
  EXPECT_NEAR(link_bw(t, t.gpus[3], t.nvswitch, TopoLinkType::Nvl), 370.8, 1e-9);
  int switches = 0;
  for (const TopoVertex& v : t.vertices) switches += v.kind == TopoKind::Pci;
  EXPECT_EQ(switches, 8);
  EXPECT_DOUBLE_EQ(t.vertices[static_cast<std::size_t>(t.nets[5])].net_bw, 50.0);
  // The document itself is what users can save and edit.
  EXPECT_NE(generate_node_topology_xml(testing::h100_cluster(2)).find("<system version=\"1\">"), std::string::npos);
}

TEST(NcclTopoGenerate, ScaleUpKindsAndGenerations) {
  // A100: 300 / 25 = 12 NVLinks × 20 = 240; Gen4 x16 = 24.
  NodeTopology a = generate_node_topology(testing::a100_cluster(1));
  EXPECT_DOUBLE_EQ(link_bw(a, a.gpus[0], a.nvswitch, TopoLinkType::Nvl), 240.0);
  EXPECT_DOUBLE_EQ(
      link_bw(a, a.gpus[0], a.vertices[static_cast<std::size_t>(a.gpus[0])].links.back().to, TopoLinkType::Pci), 24.0);
  EXPECT_NE(a.vertices[static_cast<std::size_t>(a.cpus[0])].inter_socket_bw, 22.0);  // not Sapphire Rapids
  // B200: 900 / 50 = 18 × 40.1 = 721.8.
  ClusterSpec b = testing::h100_cluster(1);
  b.gpu = testing::b200_gpu();
  b.scale_up.bandwidth_GBps = 900;
  NodeTopology bt = generate_node_topology(b);
  EXPECT_NEAR(link_bw(bt, bt.gpus[0], bt.nvswitch, TopoLinkType::Nvl), 721.8, 1e-9);
  // PCIe only: no NVLink at all.
  ClusterSpec p = testing::h100_cluster(1);
  p.scale_up.kind = ScaleUpKind::PCIe;
  NodeTopology pt = generate_node_topology(p);
  EXPECT_EQ(pt.nvswitch, -1);
  for (int g : pt.gpus)
    for (const TopoLink& l : pt.vertices[static_cast<std::size_t>(g)].links) EXPECT_NE(l.type, TopoLinkType::Nvl);
  // NVLink mesh: 18 links split over 7 peers -> 3 links (61.8 GB/s) to each.
  ClusterSpec m = testing::h100_cluster(1);
  m.scale_up.kind = ScaleUpKind::NVLinkMesh;
  NodeTopology mt = generate_node_topology(m);
  EXPECT_EQ(mt.nvswitch, -1);
  EXPECT_NEAR(link_bw(mt, mt.gpus[0], mt.gpus[7], TopoLinkType::Nvl), 61.8, 1e-9);
  // NVSwitch domains of 4 in an 8-GPU node: NVLink only inside each island.
  ClusterSpec d = testing::h100_cluster(1);
  d.scale_up.domain_size = 4;
  NodeTopology dt = generate_node_topology(d);
  EXPECT_GT(link_bw(dt, dt.gpus[0], dt.gpus[3], TopoLinkType::Nvl), 0);
  EXPECT_LT(link_bw(dt, dt.gpus[0], dt.gpus[4], TopoLinkType::Nvl), 0);
  // AMD GPUs (sm 0) get an AMD host and are treated as SM90.
  ClusterSpec amd = testing::h100_cluster(1);
  amd.gpu.vendor = "AMD";
  amd.gpu.sm_version = 0;
  NodeTopology at = generate_node_topology(amd);
  EXPECT_EQ(at.vendor, CpuVendor::Amd);
  EXPECT_EQ(at.sm, 90);
}

// NICs: N/G per GPU under its switch, or one NIC per G/N GPUs under the first one's switch.
TEST(NcclTopoGenerate, NicPlacement) {
  ClusterSpec c = testing::h100_cluster(1);
  c.nics_per_node = 4;
  NodeTopology t = generate_node_topology(c);
  ASSERT_EQ(t.nets.size(), 4u);
  c.nics_per_node = 16;
  EXPECT_EQ(generate_node_topology(c).nets.size(), 16u);
  c.nics_per_node = 0;
  EXPECT_TRUE(generate_node_topology(c).nets.empty());
  c.gpus_per_node = 0;
  EXPECT_THROW(generate_node_topology(c), ScenarioError);
}

}  // namespace
}  // namespace trainsim
