// The registry of collective algorithms (algorithm_registry.hpp) and the dispatch through it
// (custom_algorithms.hpp); the algorithms themselves live one per file (custom_algorithm_parts.hpp).
#include "collective/algorithms/custom_algorithms.hpp"

#include <algorithm>
#include <cctype>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

bool reduce_or_gather(CollKind k) {
  return k == CollKind::AllReduce || k == CollKind::ReduceScatter || k == CollKind::AllGather;
}

// NCCL's own choice, priced by the NCCL model the selector hands in.
CollectiveEstimate estimate_nccl(CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx) {
  TRAINSIM_CHECK(ctx.nccl, "estimate_custom: no NCCL model (CustomAlgoContext::nccl unset)");
  return ctx.nccl(kind, bytes, ctx.ppn, ctx.nnodes);
}

// Every algorithm, by name: the one table the scenario's names, the capability checks, the dispatch and
// `trainsim presets` read. NCCL's own choice has no flows here (the NCCL flow generator gives them).
constexpr CollectiveAlgorithmInfo kAlgorithms[] = {
    {CollectiveAlgorithm::Nccl, "nccl", "NCCL's own choice of algorithm, protocol and channels (its cost model)",
     "every collective", [](CollKind) { return true; }, nullptr, estimate_nccl, nullptr},
    {CollectiveAlgorithm::HalvingDoubling, "halving_doubling",
     "Rabenseifner: reduce-scatter by recursive halving, all-gather by recursive doubling (log2 n steps)",
     "all_reduce, reduce_scatter, all_gather", reduce_or_gather, nullptr, estimate_halving_doubling,
     [](CollKind k, std::int64_t b, const NcclCommunicator& comm, const ReductionServerSpec&) {
       return halving_doubling_flows(k, b, comm);
     }},
    {CollectiveAlgorithm::Hierarchical, "hierarchical",
     "intra-node reduce-scatter, inter-node all-reduce among same-local-index GPUs, intra-node all-gather",
     "all_reduce, reduce_scatter, all_gather (several nodes, equal ranks per node)", reduce_or_gather,
     hierarchical_group_problem, estimate_hierarchical,
     [](CollKind k, std::int64_t b, const NcclCommunicator& comm, const ReductionServerSpec&) {
       return hierarchical_flows(k, b, comm);
     }},
    {CollectiveAlgorithm::ReductionServer, "reduction_server",
     "Vertex AI reduction server: each node sends each gradient shard once to CPU reducers and gets it back reduced",
     "all_reduce only", [](CollKind k) { return k == CollKind::AllReduce; }, nullptr,
     [](CollKind, std::int64_t b, const CustomAlgoContext& c) { return estimate_reduction_server(b, c); },
     [](CollKind, std::int64_t b, const NcclCommunicator& comm, const ReductionServerSpec& rs) {
       return reduction_server_flows(b, comm, rs);
     }},
};

std::string unsupported_collective(const CollectiveAlgorithmInfo& info, CollKind kind) {
  return std::string("collective algorithm ") + info.name + " does not implement " + to_string(kind) +
         " (it supports " + info.collectives + ")";
}

}  // namespace

std::span<const CollectiveAlgorithmInfo> collective_algorithms() { return kAlgorithms; }

const CollectiveAlgorithmInfo& collective_algorithm(CollectiveAlgorithm a) {
  for (const CollectiveAlgorithmInfo& i : kAlgorithms)
    if (i.id == a) return i;
  TRAINSIM_UNREACHABLE("collective algorithm missing from the registry");
}

const char* to_string(CollectiveAlgorithm a) { return collective_algorithm(a).name; }

std::optional<CollectiveAlgorithm> parse_collective_algorithm(const std::string& name) {
  std::string key = name;
  std::transform(key.begin(), key.end(), key.begin(),
                 [](unsigned char c) { return c == '-' ? '_' : static_cast<char>(std::tolower(c)); });
  for (const CollectiveAlgorithmInfo& i : kAlgorithms)
    if (key == i.name) return i.id;
  return std::nullopt;
}

bool custom_algorithm_supports(CollectiveAlgorithm a, CollKind kind) { return collective_algorithm(a).supports(kind); }

std::string custom_algorithm_unsupported_reason(CollectiveAlgorithm a, CollKind kind, int nranks, int nnodes, int ppn) {
  const CollectiveAlgorithmInfo& info = collective_algorithm(a);
  if (!info.supports(kind)) return unsupported_collective(info, kind);
  return info.group_problem ? info.group_problem(kind, nranks, nnodes, ppn) : std::string();
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

CollectiveEstimate estimate_custom(CollectiveAlgorithm a, CollKind kind, std::int64_t bytes,
                                   const CustomAlgoContext& ctx) {
  const CollectiveAlgorithmInfo& info = collective_algorithm(a);
  if (!info.supports(kind)) throw Error(unsupported_collective(info, kind));
  return info.estimate(kind, bytes, ctx);
}

FlowDag custom_flows(CollectiveAlgorithm a, CollKind kind, std::int64_t bytes, const NcclCommunicator& comm,
                     const ReductionServerSpec& rs) {
  const CollectiveAlgorithmInfo& info = collective_algorithm(a);
  if (!info.supports(kind)) throw Error(unsupported_collective(info, kind));
  TRAINSIM_CHECK(info.flows != nullptr,
                 "custom_flows: NCCL's own algorithms get their flows from the NCCL flow generator (nccl_flows.hpp)");
  return info.flows(kind, bytes, comm, rs);
}

}  // namespace trainsim
