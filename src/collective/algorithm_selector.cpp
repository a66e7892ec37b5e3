// The scenario's `algorithms:` block in front of NCCL: all_reduce / all_gather / reduce_scatter run
// with the algorithm the user chose where it can run on the group (hierarchical needs several
// nodes with the same number of ranks each), and with NCCL's own choice everywhere else - a TP
// group inside one node keeps NCCL even when the DP all-reduce is hierarchical.
#include <memory>

#include "collective/algorithms/custom_algorithms.hpp"
#include "collective/algorithms/custom_step_latency.hpp"
#include "collective/flows/flow_dag.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"

namespace trainsim {

namespace {

class SelectingModel final : public CollectiveModel {
 public:
  SelectingModel(const ClusterSpec& cluster, const std::map<std::string, std::string>& env, const AlgorithmsSpec& spec)
      : nccl_(cluster, env), spec_(spec) {}

  CollectiveEstimate estimate(CollKind kind, std::int64_t bytes, const GroupPlacement& where) const override {
    const CollectiveAlgorithm a = chosen(kind, where);
    if (a == CollectiveAlgorithm::Nccl || where.size <= 1 || bytes <= 0) return nccl_.estimate(kind, bytes, where);
    return estimate_custom(a, kind, bytes, context(where));
  }

  CollectiveEstimate estimate_group(CollKind kind, std::int64_t bytes, int count,
                                    const GroupPlacement& where) const override {
    if (chosen(kind, where) == CollectiveAlgorithm::Nccl) return nccl_.estimate_group(kind, bytes, count, where);
    return CollectiveModel::estimate_group(kind, bytes, count, where);  // custom algorithms do not aggregate
  }

  CollectiveEstimate estimate_exchange(std::int64_t bytes, const TokenExchange& exchange,
                                       const GroupPlacement& where) const override {
    return nccl_.estimate_exchange(bytes, exchange, where);
  }

  FlowDag exchange_flows(std::int64_t bytes, const TokenExchange& exchange, const GroupPlacement& where,
                         FlowGranularity g) const override {
    return nccl_.exchange_flows(bytes, exchange, where, g);
  }

  void prepare(const std::vector<GroupPlacement>& placements, int threads) const override {
    nccl_.prepare(placements, threads);
  }

  FlowDag flows(CollKind kind, std::int64_t bytes, const GroupPlacement& where, FlowGranularity g) const override {
    const CollectiveAlgorithm a = chosen(kind, where);
    if (a == CollectiveAlgorithm::Nccl || where.size <= 1 || bytes <= 0) return nccl_.flows(kind, bytes, where, g);
    return custom_flows(a, kind, bytes, *nccl_.communicator(where), spec_.reduction_server);
  }

 private:
  NcclAnalyticalModel nccl_;
  AlgorithmsSpec spec_;

  CollectiveAlgorithm chosen(CollKind kind, const GroupPlacement& where) const {
    const CollectiveAlgorithm a = spec_.for_kind(kind);
    if (a == CollectiveAlgorithm::Nccl) return a;
    const int ppn = where.uniform ? where.max_per_node : 0;
    return custom_algorithm_unsupported_reason(a, kind, where.size, where.nodes, ppn).empty()
               ? a
               : CollectiveAlgorithm::Nccl;
  }

  // Bandwidths as NCCL's topology reports them for this group; per-message latencies from NCCL's
  // per-hop Simple latencies (custom_step_latency.hpp); sub-collectives priced by NCCL on the same
  // local GPUs (one GPU per node for the inter-node phase).
  CustomAlgoContext context(const GroupPlacement& where) const {
    const auto tuning = nccl_.tuning(where);
    const NcclTopology& t = tuning->topology();
    CustomAlgoContext ctx;
    ctx.nranks = where.size;
    ctx.nnodes = where.nodes;
    ctx.ppn = where.max_per_node;
    ctx.intra_bw_GBps = t.intra_bw_per_gpu;
    ctx.net_bw_GBps = t.net_bw_per_gpu;
    ctx.intra_lat_us = custom_step_latency_us(t.ring.nvlink_intra ? LinkClass::NVLink : LinkClass::PCIe);
    ctx.net_lat_us = custom_step_latency_us(LinkClass::Network);
    ctx.reduction_server = spec_.reduction_server;
    const std::vector<int> locals = where.local_ranks;
    ctx.nccl = [this, locals](CollKind k, std::int64_t b, int ppn, int nnodes) {
      GroupPlacement sub;
      sub.size = ppn * nnodes;
      sub.nodes = nnodes;
      sub.max_per_node = ppn;
      sub.local_ranks.assign(
          locals.begin(), locals.begin() + std::min<std::ptrdiff_t>(ppn, static_cast<std::ptrdiff_t>(locals.size())));
      return nccl_.estimate(k, b, sub);
    };
    return ctx;
  }
};

}  // namespace

std::unique_ptr<CollectiveModel> make_collective_model(const ClusterSpec& cluster,
                                                       const std::map<std::string, std::string>& env,
                                                       const AlgorithmsSpec& algorithms) {
  return std::make_unique<SelectingModel>(cluster, env, algorithms);
}

}  // namespace trainsim
