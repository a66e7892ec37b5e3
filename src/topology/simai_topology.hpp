#pragma once
// SimAI topology files as text (docs/topologies.md, "SimAI topology files"): what Alibaba's SimAI generators
// (astra-sim-alibabacloud/inputs/topo/gen_Topo_Template.py and the gen_HPN_* scripts) write and its ns-3 network
// backend reads (network_frontend/ns3/common.h, SetupNetwork):
//
//   line 1   NODES GPUS_PER_SERVER NVSWITCHES SWITCHES LINKS GPU_TYPE
//   line 2   the NVSwitch node ids, then the other switches' ids
//   then     one line per cable: SRC DST RATE DELAY ERROR_RATE   (0 16 400Gbps 0.0005ms 0)
//
// Nodes are numbered 0..NODES-1; the ids not on line 2 are the GPUs, which SimAI runs as ranks 0..GPUS-1
// (AstraSimNetwork.cc: gpu_num = NODES - NVSWITCHES - SWITCHES, rank i = node i). RATE is an ns-3 DataRate
// ("400Gbps", "50GB/s"), DELAY an ns-3 Time ("0.0005ms", "500ns"). This file only reads and writes the text,
// strictly: every bad line is an Error "FILE:LINE: what". simai_fabric.hpp gives it meaning.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

struct SimaiLink {
  int src = 0, dst = 0;
  std::int64_t rate_bps = 0;  // bits per second, each direction (ns-3 DataRate is integer bit/s)
  std::int64_t delay_ps = 0;  // propagation delay, rounded to trainsim's picosecond clock
  double error_rate = 0;      // packet error rate (ns-3 RateErrorModel), 0..1
  int file_line = 0;          // 1-based line in the file (for errors)
};

struct SimaiTopology {
  std::string path;  // named in errors
  int node_count = 0;
  int gpus_per_server = 1;
  std::string gpu_type;
  std::vector<int> nvswitch_ids;  // line 2, first NVSWITCHES ids
  std::vector<int> switch_ids;    // line 2, the rest
  std::vector<SimaiLink> links;   // in file order

  int gpu_count() const {
    return node_count - static_cast<int>(nvswitch_ids.size()) - static_cast<int>(switch_ids.size());
  }
};

// Parses the text of `path` (named in errors). Throws Error "PATH:LINE: what" for the first bad line: a header that
// is not six fields with non-negative counts, a switch line whose count or ids disagree with the header (ids out of
// range, repeated, or below the GPUs' ids), a link line that is not five fields, names an unknown node or itself,
// repeats a cable, has a rate or delay in a unit ns-3 does not read, or a number where the header's link count
// says the file ends.
SimaiTopology parse_simai_topology(std::string_view text, const std::string& path);
SimaiTopology read_simai_topology_file(const std::string& path);

// The text SimAI reads, one link per line; rates and delays in the largest unit that keeps them exact.
std::string format_simai_topology(const SimaiTopology& t);

}  // namespace trainsim
