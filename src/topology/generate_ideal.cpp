// The ideal network: every NIC on one non-blocking crossbar. Only the NICs' own rates bind, so it
// is the bound that any real fabric is compared against.
#include "topology/generators.hpp"
#include "topology/graph_builder.hpp"

namespace trainsim::topology_detail {

NetworkGraph generate_ideal(const ClusterSpec& c) {
  NetworkGraphBuilder b(c);
  const NodeId xbar = b.add_switches(SwitchRole::Crossbar, 0, 1);
  for (int n = 0; n < c.num_nodes(); ++n)
    for (int k = 0; k < c.nics_per_node; ++k) b.add_cable(b.nic(n, k), xbar, LinkKind::Access, b.port_Bps());
  return std::move(b).finish();
}

}  // namespace trainsim::topology_detail
