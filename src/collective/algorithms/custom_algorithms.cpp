// Names, capability table and dispatch of the custom collective algorithms (custom_algorithms.hpp);
// the algorithms themselves live one per file (custom_algorithm_parts.hpp).
#include "collective/algorithms/custom_algorithms.hpp"

#include <algorithm>
#include <cctype>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

const char* to_string(CollectiveAlgorithm a) {
  switch (a) {
    case CollectiveAlgorithm::Nccl: return "nccl";
    case CollectiveAlgorithm::HalvingDoubling: return "halving_doubling";
    case CollectiveAlgorithm::Hierarchical: return "hierarchical";
    case CollectiveAlgorithm::ReductionServer: return "reduction_server";
  }
  return "?";
}

// Case-insensitive, '-' accepted for '_' ("Halving-Doubling" reads as "halving_doubling").
std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& name) {
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(), [](unsigned char c) {
    return c == '-' ? '_' : static_cast<char>(std::tolower(c));
  });
  for (const auto a : {CollectiveAlgorithm::Nccl, CollectiveAlgorithm::HalvingDoubling, CollectiveAlgorithm::Hierarchical,
                       CollectiveAlgorithm::ReductionServer}) {
    if (key == to_string(a)) return a;
  }
  return std::nullopt;
}

bool custom_algorithm_supports(CollectiveAlgorithm a, CollKind kind) {
  const bool rs_ag_ar = kind == CollKind::AllReduce || kind == CollKind::ReduceScatter || kind == CollKind::AllGather;
  switch (a) {
    case CollectiveAlgorithm::Nccl: return true;
    case CollectiveAlgorithm::HalvingDoubling:
    case CollectiveAlgorithm::Hierarchical: return rs_ag_ar;
    case CollectiveAlgorithm::ReductionServer: return kind == CollKind::AllReduce;
  }
  return false;
}

std::string custom_algorithm_unsupported_reason(CollectiveAlgorithm a, CollKind kind, int nranks, int nnodes, int ppn) {
  const std::string what = std::string(to_string(a)) + " " + to_string(kind);
  if (!custom_algorithm_supports(a, kind)) {
    return std::string("collective algorithm ") + to_string(a) + " does not implement " + to_string(kind) +
           (a == CollectiveAlgorithm::ReductionServer ? " (it supports AllReduce only)"
                                                      : " (it supports AllReduce, ReduceScatter and AllGather)");
  }
  if (a == CollectiveAlgorithm::Hierarchical && nranks > 1) {
    if (nnodes < 2) {
      return what + ": the group's " + std::to_string(nranks) +
             " ranks sit on one node; hierarchical needs several nodes (use nccl or halving_doubling)";
    }
    if (ppn > 0 && ppn * nnodes != nranks) {
      return what + ": needs the same number of ranks on every node (" + std::to_string(nranks) + " ranks on " +
             std::to_string(nnodes) + " nodes)";
    }
  }
  return {};
}

CollectiveEstimate make_custom_estimate(NcclAlgorithm algorithm, CollKind kind, std::int64_t bytes, int nranks,
                                        double time_us) {
  CollectiveEstimate est;
  est.algorithm = algorithm;
  est.protocol = NcclProtocol::Simple;
  est.channels = 1;
  est.time = from_microseconds(time_us);
  if (time_us > 0 && bytes > 0) {
    est.algbw_GBps = static_cast<double>(bytes) / (1000.0 * time_us);
    est.busbw_GBps = est.algbw_GBps * busbw_factor(kind, nranks);
  }
  return est;
}

CollectiveEstimate estimate_custom(CollectiveAlgorithm a, CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx) {
  if (!custom_algorithm_supports(a, kind)) throw Error(custom_algorithm_unsupported_reason(a, kind, 0, 0, 0));
  switch (a) {
    case CollectiveAlgorithm::Nccl:
      TRAINSIM_CHECK(ctx.nccl, "estimate_custom: no NCCL model (CustomAlgoContext::nccl unset)");
      return ctx.nccl(kind, bytes, ctx.ppn, ctx.nnodes);
    case CollectiveAlgorithm::HalvingDoubling: return estimate_halving_doubling(kind, bytes, ctx);
    case CollectiveAlgorithm::Hierarchical: return estimate_hierarchical(kind, bytes, ctx);
    case CollectiveAlgorithm::ReductionServer: return estimate_reduction_server(bytes, ctx);
  }
  TRAINSIM_UNREACHABLE("estimate_custom: unknown collective algorithm");
}

FlowDag custom_flows(CollectiveAlgorithm a, CollKind kind, std::int64_t bytes, const NcclCommunicator& comm,
                     const ReductionServerSpec& rs) {
  if (!custom_algorithm_supports(a, kind)) throw Error(custom_algorithm_unsupported_reason(a, kind, 0, 0, 0));
  switch (a) {
    case CollectiveAlgorithm::Nccl:
      TRAINSIM_UNREACHABLE("custom_flows: NCCL's own algorithms get their flows from the NCCL flow generator (nccl_flows.hpp)");
    case CollectiveAlgorithm::HalvingDoubling: return halving_doubling_flows(kind, bytes, comm);
    case CollectiveAlgorithm::Hierarchical: return hierarchical_flows(kind, bytes, comm);
    case CollectiveAlgorithm::ReductionServer: return reduction_server_flows(bytes, comm, rs);
  }
  TRAINSIM_UNREACHABLE("custom_flows: unknown collective algorithm");
}

}  // namespace trainsim
