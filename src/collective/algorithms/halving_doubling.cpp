// Analytical time of halving-doubling (Thakur, Rabenseifner & Gropp 2005, §4; the rank arithmetic is
// in halving_doubling_plan.hpp). With S = nBytes, p = largest power of two <= n, each step a
// full-duplex exchange between partners (both directions at once):
//   reduce-scatter step k (k = 0..log2 p - 1): lat_c + S/2^(k+1) / bw_c
//   all-gather step k (k = log2 p - 1..0):     lat_c + S/2^(k+1) / bw_c
// so a power-of-two AllReduce on one link class costs 2·log2(p)·lat + 2(p-1)/p·S/bw (Thakur et al.'s
// "2 lg p α + 2 (p-1)/p n β", reduction cost ignored: GPUs reduce far faster than links move).
// c is the link class of the step's slowest pair: intra-node (NVLink/PCIe) when every pair of the
// step sits on one node, else the network. Non-powers of two add a fold before and after:
//   AllReduce: S in, S out; ReduceScatter: S in, S/n out; AllGather: S/n in, S out.
// Bytes follow NCCL's nBytes (the full buffer for AG/RS); for non-powers of two the middle phase
// treats the buffer as p equal blocks (MPICH uses unequal counts there; the difference is at most
// one block per step).
#include <string>

#include "collective/algorithms/custom_algorithm_parts.hpp"
#include "collective/algorithms/halving_doubling_plan.hpp"
#include "core/error.hpp"

namespace trainsim {

namespace {

// Ranks are numbered node by node with `ppn` per node (CustomAlgoContext's uniform groups).
bool same_node(int a, int b, int ppn) { return a / ppn == b / ppn; }

// Every pair of halving/doubling step k on one node? Partners' ranks differ by at least 2^k, so
// steps at distance >= ppn always cross nodes; the rest are checked pair by pair (at most log2(ppn)
// steps of p/2 pairs, stopping at the first crossing).
bool step_is_intra(const HalvingDoublingPlan& plan, int k, int ppn, int nnodes) {
  if (nnodes <= 1) return true;
  const int distance = 1 << k;
  if (distance >= ppn) return false;
  for (int x = 0; x < plan.p; ++x) {
    const int y = plan.partner(x, k);
    if (y > x && !same_node(plan.rank_of(x), plan.rank_of(y), ppn)) return false;
  }
  return true;
}

bool fold_is_intra(const HalvingDoublingPlan& plan, int ppn, int nnodes) {
  if (nnodes <= 1 || ppn % 2 == 0) return true;  // pairs (2i, 2i+1) never straddle an even node size
  for (int i = 0; i < plan.extras; ++i) {
    if (!same_node(2 * i, 2 * i + 1, ppn)) return false;
  }
  return true;
}

void require_positive(double value, const char* field) {
  if (!(value > 0)) {
    throw Error(std::string("halving_doubling: the cluster's ") + field + " must be positive (got " +
                std::to_string(value) + ")");
  }
}

}  // namespace

CollectiveEstimate estimate_halving_doubling(CollKind kind, std::int64_t bytes, const CustomAlgoContext& ctx) {
  const int n = ctx.nranks;
  if (n <= 1 || bytes <= 0) return make_custom_estimate(NcclAlgorithm::HalvingDoubling, kind, bytes, n, 0.0);
  if (ctx.nnodes < 1 || ctx.ppn < 1) {
    throw Error("halving_doubling: group of " + std::to_string(n) + " ranks needs nnodes >= 1 and ppn >= 1 (got " +
                std::to_string(ctx.nnodes) + ", " + std::to_string(ctx.ppn) + ")");
  }
  const HalvingDoublingPlan plan(n);
  const double S = static_cast<double>(bytes);
  bool any_intra = false, any_net = false;
  auto step_time = [&](bool intra, double step_bytes) {
    (intra ? any_intra : any_net) = true;
    return intra ? message_us(step_bytes, ctx.intra_lat_us, ctx.intra_bw_GBps)
                 : message_us(step_bytes, ctx.net_lat_us, ctx.net_bw_GBps);
  };

  double time_us = 0;
  if (plan.extras > 0) {
    const bool intra = fold_is_intra(plan, ctx.ppn, ctx.nnodes);
    const double fold_in = kind == CollKind::AllGather ? S / n : S;
    const double fold_out = kind == CollKind::ReduceScatter ? S / n : S;
    time_us += step_time(intra, fold_in) + step_time(intra, fold_out);
  }
  const bool reduce_scatter = kind == CollKind::AllReduce || kind == CollKind::ReduceScatter;
  const bool all_gather = kind == CollKind::AllReduce || kind == CollKind::AllGather;
  for (int k = 0; k < plan.steps; ++k) {
    const bool intra = step_is_intra(plan, k, ctx.ppn, ctx.nnodes);
    const double step_bytes = S / static_cast<double>(2LL << k);  // S / 2^(k+1), both phases
    if (reduce_scatter) time_us += step_time(intra, step_bytes);
    if (all_gather) time_us += step_time(intra, step_bytes);
  }
  if (any_intra) require_positive(ctx.intra_bw_GBps, "intra-node bandwidth (intra_bw_GBps)");
  if (any_net) require_positive(ctx.net_bw_GBps, "network bandwidth (net_bw_GBps)");
  return make_custom_estimate(NcclAlgorithm::HalvingDoubling, kind, bytes, n, time_us);
}

}  // namespace trainsim
