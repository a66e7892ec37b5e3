#pragma once
// The first CollectiveModel: NCCL's own cost model (nccl_tuning) over a simplified topology
// (nccl_topology) for collectives, and the p2p estimate (p2p_model) for AllToAll/SendRecv.
// make_nccl_analytical_model (collective_model.hpp) returns one of these.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>

#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_comm_builder.hpp"
#include "collective/nccl/nccl_env.hpp"
#include "collective/nccl/nccl_tuning.hpp"

namespace trainsim {

class NcclAnalyticalModel final : public CollectiveModel {
 public:
  // Parses `env` eagerly so that a bad nccl block fails before the simulation starts.
  NcclAnalyticalModel(const ClusterSpec& cluster, const std::map<std::string, std::string>& env);

  CollectiveEstimate estimate(CollKind kind, std::int64_t bytes, const GroupPlacement& where) const override;
  CollectiveEstimate estimate_group(CollKind kind, std::int64_t bytes, int count,
                                    const GroupPlacement& where) const override;
  // The flows of NCCL's chosen algorithm on the communicator NCCL would build; latency_us carries
  // the cost model's latency term of that choice.
  FlowDag flows(CollKind kind, std::int64_t bytes, const GroupPlacement& where,
                FlowGranularity granularity) const override;

  CollectiveEstimate estimate_exchange(std::int64_t bytes, const TokenExchange& exchange,
                                       const GroupPlacement& where) const override;
  // DeepEP's flows (generate_exchange_flows) with the estimate's latency.
  FlowDag exchange_flows(std::int64_t bytes, const TokenExchange& exchange, const GroupPlacement& where,
                         FlowGranularity granularity) const override;
  // The communicators and tuning tables of `placements`, built on up to `threads` threads.
  void prepare(const std::vector<GroupPlacement>& placements, int threads) const override;

  // The communicator-level tables for a placement (cached; safe to call from several threads).
  std::shared_ptr<const NcclTuningModel> tuning(const GroupPlacement& where) const;
  // The communicator NCCL would build for a placement (rings, trees, NICs), cached.
  std::shared_ptr<const NcclCommunicator> communicator(const GroupPlacement& where) const {
    return builder_.communicator(where);
  }
  bool communicator_built(const GroupPlacement& where) const { return builder_.built(where); }
  const NcclEnv& env() const { return env_; }

 private:
  ClusterSpec cluster_;
  NcclEnv env_;
  NcclCommBuilder builder_;
  mutable std::mutex mutex_;
  mutable std::map<std::tuple<int, int, std::vector<int>>, std::shared_ptr<const NcclTuningModel>> cache_;
};

// nccl-tests' bus-bandwidth factor (busbw = algbw × factor) for a collective over n ranks.
double busbw_factor(CollKind kind, int n);

}  // namespace trainsim
