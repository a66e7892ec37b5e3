#include "collective/flows/flow_dag.hpp"

namespace trainsim {

const char* to_string(LinkClass c) {
  switch (c) {
    case LinkClass::NVLink: return "NVLink";
    case LinkClass::PCIe: return "PCIe";
    case LinkClass::Network: return "Network";
    case LinkClass::NVLinkSharp: return "NVLinkSharp";
  }
  return "?";
}

namespace {
bool is_gpu(const FlowEndpoint& e, int rank) { return e.kind == FlowEndpoint::Kind::Gpu && e.index == rank; }
}  // namespace

std::int64_t FlowDag::bytes_sent_by(int rank) const {
  std::int64_t sum = 0;
  for (const Flow& f : flows)
    if (is_gpu(f.src, rank)) sum += f.bytes;
  return sum;
}

std::int64_t FlowDag::bytes_received_by(int rank) const {
  std::int64_t sum = 0;
  for (const Flow& f : flows)
    if (is_gpu(f.dst, rank)) sum += f.bytes;
  return sum;
}

std::int64_t FlowDag::payload_sent_by(int rank) const {
  std::int64_t sum = 0;
  for (const Flow& f : flows)
    if (is_gpu(f.src, rank)) sum += f.payload;
  return sum;
}

}  // namespace trainsim
