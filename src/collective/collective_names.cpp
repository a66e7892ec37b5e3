#include "collective/collective_model.hpp"

namespace trainsim {

// NCCL's own spellings (ncclAlgoStr / ncclProtoStr), which NCCL_ALGO / NCCL_PROTO accept.
const char* to_string(NcclAlgorithm a) {
  switch (a) {
    case NcclAlgorithm::Tree: return "Tree";
    case NcclAlgorithm::Ring: return "Ring";
    case NcclAlgorithm::CollNetDirect: return "CollNetDirect";
    case NcclAlgorithm::CollNetChain: return "CollNetChain";
    case NcclAlgorithm::NVLS: return "NVLS";
    case NcclAlgorithm::NVLSTree: return "NVLSTree";
    case NcclAlgorithm::PAT: return "PAT";
    case NcclAlgorithm::P2P: return "P2P";
    case NcclAlgorithm::HalvingDoubling: return "HalvingDoubling";
    case NcclAlgorithm::Hierarchical: return "Hierarchical";
    case NcclAlgorithm::ReductionServer: return "ReductionServer";
  }
  return "?";
}

const char* to_string(NcclProtocol p) {
  switch (p) {
    case NcclProtocol::LL: return "LL";
    case NcclProtocol::LL128: return "LL128";
    case NcclProtocol::Simple: return "Simple";
  }
  return "?";
}

}  // namespace trainsim
