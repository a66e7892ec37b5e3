#pragma once
// The network graph as Graphviz DOT (`trainsim topo --dot FILE`): one undirected edge per cable,
// labelled with its built capacity per direction in GB/s; down cables dashed red, degraded ones
// orange with their capacity now (this direction / the other).
#include <iosfwd>

#include "topology/network_graph.hpp"

namespace trainsim {

void write_dot(std::ostream& out, const NetworkGraph& graph);

}  // namespace trainsim
