#include "collective/nccl/nccl_analytical_model.hpp"

#include <set>

#include "collective/flows/flow_dag.hpp"
#include "collective/flows/nccl_flows.hpp"
#include "collective/p2p_model.hpp"
#include "core/parallel.hpp"

namespace trainsim {

namespace {

NcclFunction function_of(CollKind kind) {
  switch (kind) {
    case CollKind::Broadcast: return NcclFunction::Broadcast;
    case CollKind::Reduce: return NcclFunction::Reduce;
    case CollKind::AllGather: return NcclFunction::AllGather;
    case CollKind::ReduceScatter: return NcclFunction::ReduceScatter;
    default: return NcclFunction::AllReduce;
  }
}

}  // namespace

double busbw_factor(CollKind kind, int n) {
  if (n <= 1) return 1.0;
  switch (kind) {
    case CollKind::AllReduce: return 2.0 * (n - 1) / n;
    case CollKind::AllGather:
    case CollKind::ReduceScatter:
    case CollKind::AllToAll: return static_cast<double>(n - 1) / n;
    default: return 1.0;  // Broadcast, Reduce, SendRecv
  }
}

NcclAnalyticalModel::NcclAnalyticalModel(const ClusterSpec& cluster, const std::map<std::string, std::string>& env)
    : cluster_(cluster), env_(NcclEnv::parse(env)), builder_(cluster, env_) {}

std::shared_ptr<const NcclTuningModel> NcclAnalyticalModel::tuning(const GroupPlacement& where) const {
  // A communicator is determined by (nodes, ranks per node, which local GPUs) - the builder's key.
  const auto key = std::make_tuple(where.nodes, where.max_per_node, where.local_ranks);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = cache_.find(key); it != cache_.end()) return it->second;
  }
  const auto comm = builder_.communicator(where);
  auto model = std::make_shared<const NcclTuningModel>(tuning_inputs(*comm, cluster_, env_), env_);
  std::lock_guard<std::mutex> lock(mutex_);
  return cache_.emplace(key, std::move(model)).first->second;
}

void NcclAnalyticalModel::prepare(const std::vector<GroupPlacement>& placements, int threads) const {
  builder_.prepare(placements, threads);
  if (threads <= 1) return;
  std::vector<const GroupPlacement*> todo;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::set<std::tuple<int, int, std::vector<int>>> seen;
    for (const GroupPlacement& where : placements) {
      if (where.size <= 1) continue;
      auto key = std::make_tuple(where.nodes, where.max_per_node, where.local_ranks);
      if (cache_.count(key) == 0 && seen.insert(std::move(key)).second) todo.push_back(&where);
    }
  }
  run_in_parallel(todo.size(), threads, [&](std::size_t i) { tuning(*todo[i]); });
}

CollectiveEstimate NcclAnalyticalModel::estimate(CollKind kind, std::int64_t bytes, const GroupPlacement& where) const {
  CollectiveEstimate est;
  // A group of one rank (or an empty buffer) moves nothing: NCCL returns at once (nRanks = 1).
  if (where.size <= 1 || bytes <= 0) return est;
  const auto model = tuning(where);
  if (kind == CollKind::AllToAll || kind == CollKind::SendRecv) return estimate_p2p(kind, bytes, model->topology());

  const double nbytes = static_cast<double>(bytes);
  const NcclChoice choice = model->choose(function_of(kind), nbytes);
  est.time = from_microseconds(choice.time_us);
  est.algorithm = choice.algorithm;
  est.protocol = choice.protocol;
  est.channels = choice.channels;
  est.algbw_GBps = nbytes / (1000.0 * choice.time_us);
  est.busbw_GBps = est.algbw_GBps * busbw_factor(kind, where.size);
  return est;
}

// DeepEP's kernels over the group's GPUs and NICs as NCCL's topology sees them (estimate_token_exchange).
CollectiveEstimate NcclAnalyticalModel::estimate_exchange(std::int64_t bytes, const TokenExchange& exchange,
                                                          const GroupPlacement& where) const {
  if (where.size <= 1 || bytes <= 0) return CollectiveEstimate{};
  return estimate_token_exchange(bytes, exchange, tuning(where)->topology());
}

FlowDag NcclAnalyticalModel::exchange_flows(std::int64_t bytes, const TokenExchange& exchange,
                                            const GroupPlacement& where, FlowGranularity) const {
  if (where.size <= 1 || bytes <= 0) return FlowDag{};
  FlowDag dag = generate_exchange_flows(*builder_.communicator(where), bytes, exchange);
  dag.latency_us = token_exchange_latency_us(tuning(where)->topology());
  return dag;
}

// ncclPrepareTasks: equal calls of one function fall into one size bin (within 4×); NCCL chooses on the
// aggregate's bytes with numPipeOps = ceil(count / nChannels) and runs them as one plan, the
// channels split over the calls by CBD, so the group costs one aggregate transfer.
CollectiveEstimate NcclAnalyticalModel::estimate_group(CollKind kind, std::int64_t bytes, int count,
                                                       const GroupPlacement& where) const {
  if (count <= 1 || kind == CollKind::AllToAll || kind == CollKind::SendRecv)
    return CollectiveModel::estimate_group(kind, bytes, count, where);
  CollectiveEstimate est;
  if (where.size <= 1 || bytes <= 0) return est;
  const auto model = tuning(where);
  const double total = static_cast<double>(bytes) * count;
  const int channels = std::max(1, model->topology().comm_channels);
  const NcclChoice choice = model->choose(function_of(kind), total, (count + channels - 1) / channels);
  est.time = from_microseconds(choice.time_us);
  est.algorithm = choice.algorithm;
  est.protocol = choice.protocol;
  est.channels = choice.channels;
  est.algbw_GBps = total / (1000.0 * choice.time_us);
  est.busbw_GBps = est.algbw_GBps * busbw_factor(kind, where.size);
  return est;
}

FlowDag NcclAnalyticalModel::flows(CollKind kind, std::int64_t bytes, const GroupPlacement& where,
                                   FlowGranularity granularity) const {
  FlowDag dag;
  if (where.size <= 1 || bytes <= 0) return dag;
  const auto comm = builder_.communicator(where);
  FlowOptions options;
  options.granularity = granularity;
  options.buffsize = env_.buffsize;
  options.p2p_net_chunksize = env_.p2p_net_chunksize;
  options.p2p_pxn_level = env_.pxn_disable ? 0 : env_.p2p_pxn_level;
  if (kind == CollKind::AllToAll || kind == CollKind::SendRecv) {
    const CollectiveEstimate est = estimate(kind, bytes, where);
    dag = generate_collective_flows(*comm, kind, bytes, CallPlan{NcclAlgorithm::P2P, est.protocol, est.channels},
                                    options);
    return dag;
  }
  const auto model = tuning(where);
  const NcclFunction f = function_of(kind);
  const NcclChoice choice = model->choose(f, static_cast<double>(bytes));
  dag = generate_collective_flows(*comm, kind, bytes, CallPlan{choice.algorithm, choice.protocol, choice.channels},
                                  options);
  dag.latency_us = model->entry(f, choice.algorithm, choice.protocol).latency_us;
  return dag;
}

std::unique_ptr<CollectiveModel> make_nccl_analytical_model(const ClusterSpec& cluster,
                                                            const std::map<std::string, std::string>& env) {
  return std::make_unique<NcclAnalyticalModel>(cluster, env);
}

}  // namespace trainsim
