#pragma once
// Collective communication, first version: NCCL's own cost model (lat + bytes / bw per algorithm
// and protocol, NCCL src/tuning ncclTopoTuneModel) over a simplified graph derived from where the
// group's ranks sit. Later versions return a DAG of point-to-point flows for a network backend
// through the same interface.
#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "collective/algorithm_options.hpp"
#include "core/collective_kind.hpp"
#include "core/time.hpp"
#include "hardware/cluster_spec.hpp"

namespace trainsim {

// NCCL's algorithms in NCCL's order, then P2P (the point-to-point engine) and the algorithms
// trainsim adds (custom_algorithms.hpp), so that every estimate names what moved the bytes.
enum class NcclAlgorithm : std::uint8_t {
  Tree,
  Ring,
  CollNetDirect,
  CollNetChain,
  NVLS,
  NVLSTree,
  PAT,
  P2P,
  HalvingDoubling,
  Hierarchical,
  ReductionServer
};
enum class NcclProtocol : std::uint8_t { LL, LL128, Simple };
const char* to_string(NcclAlgorithm a);
const char* to_string(NcclProtocol p);

// Where a group's ranks sit: what decides its bandwidth and latency.
struct GroupPlacement {
  int size = 0;          // ranks in the group
  int nodes = 0;         // distinct nodes (scale-up domains when domains span nodes)
  int max_per_node = 0;  // ranks of the group on its fullest node
  bool uniform = true;   // same count on every node
  // Local indices (GPU position within its node or scale-up domain) of the ranks on the group's
  // first node, ascending: which GPUs - and so which NICs - NCCL's search sees. Groups are taken as
  // symmetric: every node holds the same local indices.
  std::vector<int> local_ranks;
  static GroupPlacement of(const std::vector<int>& ranks, const ClusterSpec& cluster);
  // The placements of a group's copies (group_replicas.hpp) that fill the nodes differently (count of nodes, fullest
  // node, evenness), each the first copy placed so, in first-seen order.
  static std::vector<GroupPlacement> of_copies(const std::vector<std::vector<int>>& copies, const ClusterSpec& cluster);
};

struct CollectiveEstimate {
  SimTime time = 0;
  NcclAlgorithm algorithm = NcclAlgorithm::Ring;
  NcclProtocol protocol = NcclProtocol::Simple;
  int channels = 0;
  double algbw_GBps = 0;  // bytes / time
  double busbw_GBps = 0;  // nccl-tests' bus bandwidth convention
};

struct FlowDag;  // flow_dag.hpp
enum class FlowGranularity : std::uint8_t;

// The two ways to use the collective layer: the predicted time of a call (what the analytical
// network backend uses), and the call as a DAG of point-to-point flows over the group's
// communicator ranks 0..n-1, numbered node by node (what flow- and packet-level backends execute).
class CollectiveModel {
 public:
  virtual ~CollectiveModel() = default;
  // `bytes` follows NCCL's nBytes convention (CollectiveDesc::bytes).
  virtual CollectiveEstimate estimate(CollKind kind, std::int64_t bytes, const GroupPlacement& where) const = 0;
  virtual FlowDag flows(CollKind kind, std::int64_t bytes, const GroupPlacement& where,
                        FlowGranularity granularity) const = 0;
  // `count` equal calls issued in one NCCL group (ncclGroupStart/End, nccl-tests' -m): the whole
  // group's time. Models without group aggregation run the calls back to back.
  virtual CollectiveEstimate estimate_group(CollKind kind, std::int64_t bytes, int count,
                                            const GroupPlacement& where) const {
    CollectiveEstimate est = estimate(kind, bytes, where);
    est.time *= std::max(1, count);
    return est;
  }
  // A DeepEP token exchange over the group (TokenExchange): `bytes` is one copy of each of the rank's tokens, sent
  // exchange.remote_copies times over the rank's NIC and forwarded exchange.nvlink_copies times over NVLink, both at
  // once (DeepEP pipelines them). Models that do not know it price it as an all-to-all of all its copies.
  virtual CollectiveEstimate estimate_exchange(std::int64_t bytes, const TokenExchange& exchange,
                                               const GroupPlacement& where) const;
  // The flows of a token exchange over the group's communicator ranks (as flows()). Models that do not know it move
  // it as an all-to-all of its copies.
  virtual FlowDag exchange_flows(std::int64_t bytes, const TokenExchange& exchange, const GroupPlacement& where,
                                 FlowGranularity granularity) const;
  // Builds what the calls on `placements` will need (NCCL's communicators: graph searches, cross-node stitching)
  // on up to `threads` threads before a simulation starts, so that the sequential event loop finds it built. The
  // answers are the same without it; models with nothing worth building ahead do nothing.
  virtual void prepare(const std::vector<GroupPlacement>& placements, int threads) const {
    (void)placements;
    (void)threads;
  }
};

// One call on one placement: a token exchange (exchange.on()) priced by estimate_exchange, any other call by estimate.
CollectiveEstimate estimate_call(const CollectiveModel& model, CollKind kind, std::int64_t bytes,
                                 const TokenExchange& exchange, const GroupPlacement& where);

// The copies of a group run the same call at once (group_replicas.hpp) and the job moves at the pace of the slowest:
// the estimate for the placement whose call takes longest (e.g. the TP groups that straddle two NVLink domains when
// TP does not divide the domain). The first placement's when `placements` holds one. Each priced by estimate_call.
CollectiveEstimate slowest_copy_estimate(const CollectiveModel& model, CollKind kind, std::int64_t bytes,
                                         const std::vector<GroupPlacement>& placements,
                                         const TokenExchange& exchange = {});

// Honours the scenario's nccl block (`env`, nccl_env.hpp), throwing ScenarioError("nccl.NCCL_ALGO",
// ...) on values NCCL would reject.
std::unique_ptr<CollectiveModel> make_nccl_analytical_model(const ClusterSpec& cluster,
                                                            const std::map<std::string, std::string>& env);
// The same, with the scenario's `algorithms:` block: all_reduce / all_gather / reduce_scatter run
// with the chosen algorithm where it applies to the group (hierarchical needs several nodes),
// NCCL's choice elsewhere.
std::unique_ptr<CollectiveModel> make_collective_model(const ClusterSpec& cluster,
                                                       const std::map<std::string, std::string>& env,
                                                       const AlgorithmsSpec& algorithms);

}  // namespace trainsim
