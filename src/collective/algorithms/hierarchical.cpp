// Hierarchical collectives priced as a sequence of NCCL collectives (ctx.nccl), S = nBytes in NCCL's
// convention (full buffer for AG/RS), m = nodes, ppn = GPUs per node, S/ppn rounded up:
//   AllReduce     = RS(S) inside each node  -> each GPU holds S/ppn reduced over its node
//                 + AR(S/ppn) among the m GPUs with the same local index (one per node)
//                 + AG(S) inside each node
//   ReduceScatter = RS(S) inside each node + RS(S/ppn) across nodes  (S/ppn input, S/n output each)
//   AllGather     = AG(S/ppn) across nodes + AG(S) inside each node  (mirror of ReduceScatter)
// The phases run one after the other (each needs the previous one's result), so the time is their
// sum. The network carries (m-1)/m·S/ppn per GPU per direction for RS/AG (twice that for AR) instead
// of a flat ring's (n-1)/n·S: the point of the hierarchy. The ReduceScatter/AllGather layouts need a
// local permutation of blocks (block of rank (node j, local l) must sit in local l's shard), a copy
// we do not charge.
#include <string>
#include <vector>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "core/check.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

struct SubCollective {
  CollKind kind;
  std::int64_t bytes;
  int ppn, nnodes;
};

std::vector<SubCollective> hierarchical_sub_collectives(CollKind kind, std::int64_t bytes, int ppn, int nnodes) {
  const std::int64_t shard = (bytes + ppn - 1) / ppn;
  switch (kind) {
    case CollKind::AllReduce:
      return {{CollKind::ReduceScatter, bytes, ppn, 1},
              {CollKind::AllReduce, shard, 1, nnodes},
              {CollKind::AllGather, bytes, ppn, 1}};
    case CollKind::ReduceScatter:
      return {{CollKind::ReduceScatter, bytes, ppn, 1}, {CollKind::ReduceScatter, shard, 1, nnodes}};
    case CollKind::AllGather: return {{CollKind::AllGather, shard, 1, nnodes}, {CollKind::AllGather, bytes, ppn, 1}};
    default: return {};
  }
}

}  // namespace

std::string hierarchical_group_problem(CollKind kind, int nranks, int nnodes, int ppn) {
  if (nranks <= 1) return {};
  const std::string what = std::string("hierarchical ") + to_string(kind);
  if (nnodes < 2) {
    return what + ": the group's " + std::to_string(nranks) +
           " ranks sit on one node; hierarchical needs several nodes (use nccl or halving_doubling)";
  }
  if (ppn > 0 && ppn * nnodes != nranks) {
    return what + ": needs the same number of ranks on every node (" + std::to_string(nranks) + " ranks on " +
           std::to_string(nnodes) + " nodes)";
  }
  return {};
}

CollectiveEstimate estimate_hierarchical(CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx) {
  const int n = ctx.nranks;
  if (n <= 1 || bytes <= 0) return make_custom_estimate(NcclAlgorithm::Hierarchical, kind, bytes, n, 0.0);
  if (ctx.nnodes < 2) {
    throw Error("hierarchical " + std::string(to_string(kind)) + ": the group's " + std::to_string(n) +
                " ranks sit on one node; hierarchical needs several nodes (use nccl or halving_doubling)");
  }
  if (ctx.ppn < 1 || ctx.ppn * ctx.nnodes != n) {
    throw Error("hierarchical " + std::string(to_string(kind)) + ": needs the same number of ranks on every node (" +
                std::to_string(n) + " ranks on " + std::to_string(ctx.nnodes) + " nodes, " + std::to_string(ctx.ppn) +
                " per node)");
  }
  TRAINSIM_CHECK(ctx.nccl, "hierarchical: no NCCL model to price its phases (CustomAlgoContext::nccl unset)");

  SimTime total = 0;
  CollectiveEstimate inter{};
  for (const SubCollective& phase : hierarchical_sub_collectives(kind, bytes, ctx.ppn, ctx.nnodes)) {
    if (phase.ppn * phase.nnodes <= 1) continue;  // a group of one GPU (ppn = 1): nothing to do
    const CollectiveEstimate e = ctx.nccl(phase.kind, phase.bytes, phase.ppn, phase.nnodes);
    total += e.time;
    if (phase.nnodes > 1) inter = e;
  }
  CollectiveEstimate est = make_custom_estimate(NcclAlgorithm::Hierarchical, kind, bytes, n, to_microseconds(total));
  est.time = total;  // exactly the phases' sum, no µs round trip
  // Report the network phase's protocol and channels: it is the one that dominates at scale.
  est.protocol = inter.protocol;
  est.channels = inter.channels;
  return est;
}

}  // namespace trainsim
