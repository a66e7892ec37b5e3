// Node and link names: what users write in `faults: [{kind: link_down, link: ...}]`.
#include "topology_test_support.hpp"

namespace trainsim {
namespace {

using test::cluster;

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) { return e.what(); }
  return "";
}

TEST(LinkNames, NamesRoundTrip) {
  const NetworkGraph g = build_network(cluster(512, NetworkTopology::RailOptimized, 3, 16, 4, 4));
  for (NodeId n = 0; n < g.node_count(); ++n) ASSERT_EQ(g.find_node(g.node_name(n)), n) << g.node_name(n);
  for (LinkId l = 0; l < g.link_count(); ++l) ASSERT_EQ(g.link_by_name(g.link_name(l)), l) << g.link_name(l);
  EXPECT_EQ(g.node_name(g.nic(12, 3)), "node12.nic3");
  EXPECT_EQ(g.node_name(g.gpu(7)), "gpu7");
  EXPECT_EQ(g.node_name(g.nvswitch(1)), "nvswitch1");
  EXPECT_EQ(g.link_name(g.scale_up_link(5)), "gpu5>nvswitch1");
  EXPECT_EQ(g.link_name(g.link_between(g.nic(12, 3), g.switch_node(SwitchRole::Leaf, 7)).value()), "node12.nic3>leaf7");
}

TEST(LinkNames, UndirectedNameMeansBothDirections) {
  const NetworkGraph g = build_network(cluster(512, NetworkTopology::RailOptimized));
  const auto both = g.links_by_name("leaf5-spine2");
  ASSERT_EQ(both.size(), 2u);
  EXPECT_EQ(g.link_name(both[0]), "leaf5>spine2");
  EXPECT_EQ(g.link_name(both[1]), "spine2>leaf5");
  EXPECT_EQ(g.links_by_name("spine2-leaf5").size(), 2u);
  EXPECT_EQ(g.links_by_name("spine2>leaf5"), std::vector<LinkId>{both[1]});
}

TEST(LinkNames, UnknownNamesExplainWhatIsValid) {
  const NetworkGraph g = build_network(cluster(512, NetworkTopology::RailOptimized));
  std::string e = error_of([&] { g.links_by_name("leaf99>spine0"); });
  EXPECT_NE(e.find("'leaf99'"), std::string::npos) << e;
  EXPECT_NE(e.find("leaf0..leaf15"), std::string::npos) << e;
  EXPECT_NE(e.find("e.g. 'node0.nic0>leaf0'"), std::string::npos) << e;
  e = error_of([&] { g.links_by_name("leaf0>leaf1"); });
  EXPECT_NE(e.find("not connected"), std::string::npos) << e;
  e = error_of([&] { g.links_by_name("leaf0 spine0"); });
  EXPECT_NE(e.find("'>' or '-'"), std::string::npos) << e;
  for (const char* bad : {"", ">", "-", "gpu>", "leaf01>spine0", "node1.nic>leaf0", "node1nic0>leaf0", "leaf0>spine+1"})
    EXPECT_THROW(g.links_by_name(bad), Error) << bad;
  EXPECT_FALSE(g.find_node("xbar"));  // only the ideal network has one
}

TEST(LinkNames, FaultsChangeStateAndVersion) {
  NetworkGraph g = build_network(cluster(64, NetworkTopology::RailOptimized));
  const auto v0 = g.version();
  const auto changed = g.set_nic_down(2, 5);
  EXPECT_EQ(changed.size(), 4u);  // its leaf cable and its PCIe cable, both ways
  EXPECT_GT(g.version(), v0);
  const auto node = g.set_node_down(3);
  EXPECT_EQ(node.size(), 8u * 4 + 8u * 2);
  EXPECT_THROW(g.set_nic_down(8, 0), Error);
  g.clear_faults();
  for (const Link& l : g.links()) EXPECT_TRUE(l.up);
}

}  // namespace
}  // namespace trainsim
