// libFuzzer target for the NCCL_TOPO_FILE reader: any byte string is a possible topology file. The
// reader may reject it, but only with trainsim::Error (design.md: "Bad input never crashes"); what it
// accepts must also survive path computation and the graph search. Built with -DTRAINSIM_FUZZ=ON.
//   ./nccl_topo_xml_fuzz -max_len=8192 corpus/   (seed the corpus with data/topologies/*.xml)
#include <cstddef>
#include <cstdint>
#include <string>

#include "collective/nccl/nccl_graph_search.hpp"
#include "collective/nccl/nccl_node_topology.hpp"
#include "core/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    trainsim::NodeTopology node = trainsim::parse_nccl_topology_xml(text, "fuzz.xml", "nccl.NCCL_TOPO_FILE");
    if (node.gpus.size() <= 16 && node.vertices.size() <= 256) {
      trainsim::compute_paths(node, trainsim::PathOptions{});
      trainsim::search_graph(node, trainsim::GraphPattern::Ring, trainsim::SearchOptions{.multi_node = true});
    }
  } catch (const trainsim::Error&) {
    // Rejected with a message: the expected outcome for most inputs.
  }
  return 0;
}
