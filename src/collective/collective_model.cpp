#include "collective/collective_model.hpp"

#include "collective/flows/flow_dag.hpp"

namespace trainsim {

namespace {

// A token exchange's copies as one all-to-all buffer, for models that know no token exchange.
std::int64_t all_copies(std::int64_t bytes, const TokenExchange& x) {
  return static_cast<std::int64_t>(static_cast<double>(bytes) * (x.remote_copies + x.nvlink_copies));
}

}  // namespace

CollectiveEstimate estimate_call(const CollectiveModel& model, CollKind kind, std::int64_t bytes,
                                 const TokenExchange& exchange, const GroupPlacement& where) {
  return exchange.on() ? model.estimate_exchange(bytes, exchange, where) : model.estimate(kind, bytes, where);
}

CollectiveEstimate CollectiveModel::estimate_exchange(std::int64_t bytes, const TokenExchange& exchange,
                                                      const GroupPlacement& where) const {
  return estimate(CollKind::AllToAll, all_copies(bytes, exchange), where);
}

FlowDag CollectiveModel::exchange_flows(std::int64_t bytes, const TokenExchange& exchange, const GroupPlacement& where,
                                        FlowGranularity granularity) const {
  return flows(CollKind::AllToAll, all_copies(bytes, exchange), where, granularity);
}

}  // namespace trainsim
