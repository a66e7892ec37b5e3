#include "core/kernel_desc.hpp"
#include "workload/parallel_plan.hpp"
#include "workload/workload.hpp"

namespace trainsim {

const char* to_string(GroupKind k) {
  switch (k) {
    case GroupKind::TP: return "tp";
    case GroupKind::CP: return "cp";
    case GroupKind::DP: return "dp";
    case GroupKind::PP: return "pp";
    case GroupKind::Embedding: return "embedding";
    case GroupKind::ModelParallel: return "tp-pp";
    case GroupKind::World: return "world";
    case GroupKind::EP: return "ep";
    case GroupKind::ExpertTP: return "etp";
    case GroupKind::ExpertTPxEP: return "etp-ep";
    case GroupKind::ExpertDP: return "edp";
  }
  return "?";
}

const char* to_string(Stream s) {
  switch (s) {
    case Stream::Compute: return "compute";
    case Stream::TpComm: return "tp-comm";
    case Stream::CpComm: return "cp-comm";
    case Stream::DpComm: return "dp-comm";
    case Stream::PpComm: return "pp-comm";
    case Stream::PpCommNext: return "pp-comm-next";
    case Stream::EpComm: return "ep-comm";
    case Stream::ExpertDpComm: return "edp-comm";
    case Stream::kCount: break;
  }
  return "?";
}

const char* to_string(Phase p) {
  switch (p) {
    case Phase::Forward: return "forward";
    case Phase::Backward: return "backward";
    case Phase::Recompute: return "recompute";
    case Phase::GradSync: return "grad-sync";
    case Phase::Optimizer: return "optimizer";
    case Phase::Other: return "other";
  }
  return "?";
}

std::size_t Workload::op_count() const {
  std::size_t n = 0;
  for (const auto& r : ranks) n += r.ops.size();
  return n;
}

}  // namespace trainsim
