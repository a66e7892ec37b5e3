#pragma once
// NCCL's own INFO lines for a communicator, as a real job prints them with NCCL_DEBUG=INFO: the graph search
// results (subsystem GRAPH: NCCL src/graph/search.cc ncclTopoPrintGraph), the rings, trees and channel counts
// (INIT: src/graph/rings.cc ncclBuildRings, src/init.cc), and the cost model's latency/bandwidth table (TUNING:
// src/graph/tuning.cc ncclTopoTuneModel), so that a user can diff trainsim's communicator against a real
// job's log line by line (the prefix "host:pid:tid [dev] NCCL INFO" aside).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collective/nccl/nccl_communicator.hpp"
#include "collective/nccl/nccl_tuning.hpp"

namespace trainsim {

// Which subsystems NCCL_DEBUG / NCCL_DEBUG_SUBSYS enable (NCCL src/debug.cc ncclDebugInit: the level INFO or
// TRACE turns logging on; the subsystem list is comma-separated, ALL for every one, a leading ^ inverts it;
// the default list is INIT,BOOTSTRAP,ENV).
struct NcclDebugSubsystems {
  bool init = false, graph = false, tuning = false;
  bool any() const { return init || graph || tuning; }
};
// nullopt when logging is off (no NCCL_DEBUG, or VERSION/WARN). Throws ScenarioError naming the variable for a
// level or subsystem NCCL does not know.
std::optional<NcclDebugSubsystems> nccl_debug_subsystems(const std::map<std::string, std::string>& env);

// The lines rank 0 of the communicator would log, message only, in NCCL's order: GRAPH (ring, tree, then NVLS
// graphs), INIT (rings, trees, channel counts), TUNING (the table).
std::vector<std::string> nccl_debug_lines(const NcclCommunicator& comm, const NcclTuningModel& tuning,
                                          const NcclDebugSubsystems& subsystems);

// NCCL_GRAPH_DUMP_FILE: rank 0's search graphs as NCCL writes them (src/graph/search.cc ncclTopoGetXmlFromGraphs,
// one <graph> per algorithm in NCCL's algorithm order: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree
// (the NVLS graph again), PAT (the tree graph again)), a file NCCL_GRAPH_FILE can read back.
std::string nccl_graph_xml(const NcclCommunicator& comm);

}  // namespace trainsim
