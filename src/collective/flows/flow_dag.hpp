#pragma once
// A collective as a DAG of point-to-point flows (NCCL src/device/*.h, src/enqueue.cc; docs/collectives.md):
// what the flow-level and packet-level network backends execute. Each flow moves `bytes` on the wire
// (payload plus protocol overhead: LL ×2, LL128 ×128/120) from one endpoint to another over one link
// class, through a given NIC, and may start only after the flows it depends on have finished.
//
// Aggregation (docs/collectives.md): NCCL's behaviour is uniform across the equal chunks of one
// channel, so by default (`FlowGranularity::PerChannel`) one flow carries all the chunks one channel
// sends over one hop of the collective (a ring channel = nranks concurrent flows, a tree channel =
// one flow per tree edge and direction), with the pipeline's fill latency carried in
// `FlowDag::latency_us`. `PerStep` emits one flow per (channel, loop, step, hop) with step-to-step
// dependencies, for checking the aggregation on small cases.
#include <cstdint>
#include <string>
#include <vector>

#include "collective/collective_model.hpp"

namespace trainsim {

enum class LinkClass : std::uint8_t { NVLink, PCIe, Network, NVLinkSharp /*GPU<->NVSwitch multicast*/ };
const char* to_string(LinkClass c);

// Who is at the end of a flow: a GPU (communicator rank), a node's NVSwitch (for NVLS multicast and
// reduction traffic), a reduction server (CPU reducer, for the reduction-server algorithm), or the
// network fabric's in-network reduction (CollNet/SHARP: an aggregation tree the switches run; the
// flow-level backend routes it to the top of the fabric and treats the reduction as atomic, as NCCL's CollNet does).
struct FlowEndpoint {
  enum class Kind : std::uint8_t { Gpu, NvSwitch, Reducer, InNetwork } kind = Kind::Gpu;
  int index = 0;  // rank, node index, reducer index, or aggregation tree (channel / head)
  bool operator==(const FlowEndpoint&) const = default;
};

struct Flow {
  FlowEndpoint src, dst;
  std::int64_t bytes = 0;    // on the wire, incl. protocol overhead
  std::int64_t payload = 0;  // user data carried
  LinkClass link = LinkClass::NVLink;
  int src_net = -1;  // NIC (index into the sending node's nets) for Network flows, else -1
  int dst_net = -1;  // NIC on the receiving node
  int relay = -1;    // PXN: the rank on the source node whose NIC sends (data goes src -> relay over NVLink first)
  int channel = 0;
  int step = -1;  // step index within the channel (PerStep), -1 when aggregated
  // Dependencies: indices of earlier flows in FlowDag::flows (CSR in FlowDag::dep_index).
  std::uint32_t dep_begin = 0, dep_end = 0;
};

enum class FlowGranularity : std::uint8_t { PerChannel, PerStep };

struct FlowDag {
  std::vector<Flow> flows;
  std::vector<std::uint32_t> dep_index;  // flow i depends on dep_index[dep_begin..dep_end)
  double latency_us = 0;  // fixed latency the network backend adds to the DAG's makespan (NCCL's lat term)
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  int channels = 0;
  std::string note;  // how the DAG was aggregated, for --json / docs

  // Sum of wire bytes sent / received by a GPU rank (NVLS/reducer endpoints excluded).
  std::int64_t bytes_sent_by(int rank) const;
  std::int64_t bytes_received_by(int rank) const;
  std::int64_t payload_sent_by(int rank) const;
};

}  // namespace trainsim
