#include "topology/graphviz.hpp"

#include <ostream>

namespace trainsim {

namespace {

const char* shape_of(const Node& n) {
  switch (n.kind) {
    case NodeKind::Gpu: return "box";
    case NodeKind::NVSwitch: return "hexagon";
    case NodeKind::Nic: return "ellipse";
    case NodeKind::Switch: return "diamond";
  }
  return "ellipse";
}

}  // namespace

void write_dot(std::ostream& out, const NetworkGraph& g) {
  out << "graph \"" << g.topology() << "\" {\n  node [fontsize=10];\n";
  for (NodeId n = 0; n < g.node_count(); ++n) {
    out << "  \"" << g.node_name(n) << "\" [shape=" << shape_of(g.node(n));
    out << "];\n";
  }
  // Links come in pairs (l, l ^ 1): one edge per cable.
  for (LinkId l = 0; l < g.link_count(); l += 2) {
    const Link& a = g.link(l);
    const Link& b = g.link(NetworkGraph::reverse(l));
    const bool degraded = a.capacity_Bps < a.nominal_capacity_Bps || b.capacity_Bps < b.nominal_capacity_Bps;
    out << "  \"" << g.node_name(a.from) << "\" -- \"" << g.node_name(a.to) << "\" [label=\""
        << a.nominal_capacity_Bps / 1e9;
    if (degraded && a.up && b.up) out << " now " << a.capacity_Bps / 1e9 << "/" << b.capacity_Bps / 1e9;
    out << "\"";
    if (!a.up || !b.up)
      out << ", style=dashed, color=red";
    else if (degraded)
      out << ", color=orange";
    out << "];\n";
  }
  out << "}\n";
}

}  // namespace trainsim
