#pragma once
// The event-driven network backend (docs/network-model.md, docs/packet-network.md): every collective call that
// crosses a scale-up domain becomes the collective layer's flow DAG on each copy of its group (the simulated
// group and the identical groups it stands for, workload/group_replicas.hpp), routed over the cluster's network
// graph and executed on a TransferNetwork shared by every call in flight — max-min fair flows
// (flow/flow_network.hpp) or RoCE packets (packet/packet_network.hpp), or both in a hybrid run — so calls
// compete for links. A call completes when its last flow has finished, plus the
// NCCL latency term of its algorithm (FlowDag::latency_us). Calls inside one scale-up domain are
// priced by the collective model, as design.md allows: NVLink traffic rarely decides the answer,
// and simulating every TP call of a large job flow by flow would cost millions of flows.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "collective/collective_model.hpp"
#include "collective/flows/flow_dag.hpp"
#include "network/flow/flow_network.hpp"
#include "network/packet/packet_network.hpp"
#include "network/transfer_network.hpp"
#include "network/flow_paths.hpp"
#include "network/network_backend.hpp"
#include "topology/network_graph.hpp"
#include "topology/router.hpp"

namespace trainsim {

struct FlowBackendOptions {
  bool adaptive_routing = false;  // least-loaded equal-cost path instead of the ECMP hash
  std::uint64_t seed = 0;         // simulation.seed: the ECMP hash
  // Set: the routed transfers move as RoCE packets (network/packet/, simulation.network_model: packet)
  // instead of max-min fair flows...
  std::optional<PacketConfig> packet;
  // ...those of the calls in the packet scope (simulation.packet_scope), the rest as flows: by communicator index,
  // whether its calls may go to packets (empty = every communicator's), and the smallest call that does.
  std::vector<char> packet_groups;
  std::int64_t packet_min_bytes = 0;
  // > 1: a transfer that moves as packets goes over up to this many routes, the distinct ones the ECMP hash gives
  // for as many keys (the first is the transfer's own path); PacketConfig::multipath spreads its packets over them.
  int packet_routes = 1;
};

// A link changes state at a time (a fault that starts mid-run). Down: routes chosen from then on
// avoid it and NICs that lose it hand their traffic to the next NIC; transfers already on it
// finish where they are (a fabric's fast reroute moves them within milliseconds, which this
// neglects). Degraded (up, factor < 1): its capacity drops for everything on it at once.
struct ScheduledLinkState {
  SimTime at = 0;
  LinkId link = 0;
  bool up = true;
  double factor = 1.0;
};

// For reports.
struct FlowBackendStats {
  std::int64_t flows = 0;  // transfers executed on the fabric
};

class FlowBackend final : public NetworkBackend {
 public:
  // `graph` (faults already applied for those present from the start) must outlive the backend,
  // which applies `link_changes` to it as their times come;
  // `replicas[g]` lists the copies of communicator g, each its global ranks sorted.
  FlowBackend(const ClusterSpec& cluster, const CollectiveModel& collectives, NetworkGraph& graph,
              std::vector<std::vector<std::vector<int>>> replicas, const FlowBackendOptions& options,
              std::vector<ScheduledLinkState> link_changes = {});
  ~FlowBackend() override;

  void start(SimTime now, std::uint64_t token, const CollectiveCall& call) override;
  SimTime next_event() override;
  void advance(SimTime t, std::vector<std::uint64_t>& completed) override;

  const FlowBackendStats& stats() const { return stats_; }
  // Where every copy of every group sits, each placement once (first-seen order): the communicators the calls will
  // need, for CollectiveModel::prepare.
  std::vector<GroupPlacement> copy_placements() const;
  // The transfers `call` would put on the fabric (what stats().flows adds when it starts), without
  // starting it: for the run's work estimate. Builds and caches its flow DAGs as start() would.
  std::int64_t planned_transfers(const CollectiveCall& call);
  // The bytes `call` would put on the fabric as packets, summed over its copies' flows (0 outside the packet
  // scope): a packet run's size.
  double planned_fabric_bytes(const CollectiveCall& call);
  // Per link (by LinkId of the graph), up to the last event processed.
  // Both networks' traffic when a run is hybrid (bytes and flows added, busy time the longer).
  std::vector<LinkStats> link_statistics() const;
  const NetworkGraph& graph() const { return graph_; }
  // The flow network's re-solving work (its rate solves grow with the instants at which flows start or
  // finish, not with the flows); null when every transfer moves as packets.
  const FlowNetwork* flow_network() const { return flow_; }
  // The packet network's queues, pauses, marks and drops; null at flow level.
  const PacketNetwork* packet_network() const { return packet_; }
  PacketNetwork* packet_network() { return packet_; }

 private:
  struct Transfer {  // one flow of one copy of a call
    std::uint32_t call = 0;
    std::uint32_t path_begin = 0, path_end = 0;
    std::int64_t bytes = 0;
    SimTime latency = 0;
    std::uint32_t pending = 0;                   // unfinished dependencies
    std::uint32_t next_begin = 0, next_end = 0;  // dependents (CSR into Call::dependents)
    bool coflow = false;                         // its hops' weights are Call::weights[path_begin, path_end)
    // Its other routes (FlowBackendOptions::packet_routes): Call::alt_routes[alt_begin, alt_end).
    std::uint32_t alt_begin = 0, alt_end = 0;
  };
  struct Call {
    std::uint64_t token = 0;
    std::uint32_t remaining = 0;  // transfers not finished
    SimTime tail_latency = 0;     // NCCL's latency term, added after the last transfer
    std::vector<Transfer> transfers;
    std::vector<LinkId> paths;
    std::vector<float> weights;  // beside `paths` up to the last coflow's hops
    std::vector<std::uint32_t> dependents;
    // The transfers' other routes: each is alt_links[first, second).
    std::vector<LinkId> alt_links;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> alt_routes;
    std::uint8_t network = 0;  // kFlows or kPackets: what moves its transfers
  };
  enum class TimerKind : std::uint8_t { CallDone, TransferReady, LinkState };
  struct Timer {
    SimTime at;
    std::uint64_t seq;
    TimerKind kind;
    std::uint32_t a, b;  // call and transfer, or link change index
    bool operator>(const Timer& o) const { return at != o.at ? at > o.at : seq > o.seq; }
  };

  std::shared_ptr<const FlowDag> dag_for(const CollectiveCall& call, const std::vector<int>& members);
  std::shared_ptr<const FlowDag> one_way(const std::shared_ptr<const FlowDag>& dag, int sender);
  std::shared_ptr<const FlowDag> copy_dag(const CollectiveCall& call, const std::vector<int>& members);
  bool inside_one_domain(const std::vector<int>& members) const;
  // Ranks spread unevenly over NCCL's nodes (hosts, or NVLink domains spanning hosts): the flow generator lays a
  // communicator out as equal nodes, so such a group is priced by NCCL's cost model. Cached per group.
  bool uneven(std::uint32_t group);
  // The distinct placements of a group's copies, worked out on first use.
  const std::vector<GroupPlacement>& placements(std::uint32_t group);
  std::vector<std::vector<GroupPlacement>> placements_;
  // Every copy of the group inside one scale-up domain (its collectives never reach the fabric). Cached per group:
  // asked at every call's start, it walked all copies' members (a 16-way TP group of an NVL72 job: 256 ranks).
  bool all_copies_inside_one_domain(std::uint32_t group);
  std::vector<signed char> inside_domain_;  // per group: -1 not worked out yet, else 0 / 1
  // Whether `call` is timed by the collective model instead of transfers on the network.
  bool priced_by_model(const CollectiveCall& call);
  std::int64_t largest_transfer(const FlowDag& dag);  // bytes of its largest transfer as add_copy makes them
  void add_copy(std::uint32_t call_index, const FlowDag& dag, const std::vector<int>& members, std::uint64_t key_base);
  void add_coupled_ring(std::uint32_t call_index, const FlowDag& dag, const std::vector<int>& members,
                        std::uint64_t key_base);
  // A point-to-point DAG's transfers once merged per connection (add_merged_p2p), worked out once per DAG.
  const std::vector<Flow>& merged_p2p(const FlowDag& dag);
  void add_merged_p2p(std::uint32_t call_index, const FlowDag& dag, const std::vector<int>& members,
                      std::uint64_t key_base);
  // An all-to-all copy at flow level: its merged transfers as one coflow (add_coflow).
  struct Coflow {
    std::vector<LinkId> links;
    std::vector<float> weights;
    std::int64_t bytes = 0;
    SimTime latency = 0;
  };
  bool moves_as_coflow(const CollectiveCall& call, const FlowDag& dag) const;
  const Coflow& coflow_of(const FlowDag& dag, const std::vector<int>& members);
  void add_coflow(std::uint32_t call_index, const FlowDag& dag, const std::vector<int>& members);
  void push_timer(SimTime at, TimerKind kind, std::uint32_t a, std::uint32_t b);
  void fire_timer(std::vector<std::uint64_t>& completed);  // the earliest timer; a finished call goes to `completed`
  void transfer_ready(SimTime now, std::uint32_t call, std::uint32_t transfer);
  void transfer_done(SimTime now, std::uint32_t call, std::uint32_t transfer);
  static std::span<const float> hop_weights(const Call& call, const Transfer& transfer);
  void add_link_load(const Call& call, const Transfer& transfer, double sign);
  std::uint32_t new_call();

  ClusterSpec cluster_;
  const CollectiveModel& collectives_;
  NetworkGraph& graph_;
  std::vector<std::vector<std::vector<int>>> replicas_;
  FlowBackendOptions options_;
  std::vector<ScheduledLinkState> link_changes_;
  Router router_;
  FlowPaths paths_;
  FlowPaths ecmp_paths_;  // the ECMP hash alone: other routes of a transfer that moves as packets
  // Adds to `t` the distinct routes other than its own path that `route(salt, out)` gives for salts 1, 2, ...
  // (FlowBackendOptions::packet_routes - 1 of them), when its call moves as packets over several routes.
  template <class Route>
  void add_alt_routes(std::uint32_t ci, Transfer& t, Route route);
  std::vector<std::vector<LinkId>> routes_scratch_;
  // What moves the routed transfers' bytes: [kFlows] max-min fair flows (flow/), [kPackets] RoCE packets
  // (packet/); a run has one or both (hybrid: the packet scope's calls as packets).
  static constexpr int kFlows = 0, kPackets = 1;
  std::unique_ptr<TransferNetwork> networks_[2];
  PacketNetwork* packet_ = nullptr;  // networks_[kPackets]
  FlowNetwork* flow_ = nullptr;      // networks_[kFlows]
  TransferNetwork& network_of(std::uint32_t call) { return *networks_[calls_[call].network]; }
  int network_for(const CollectiveCall& call) const;
  std::vector<double> link_load_;  // active transfers per link (adaptive routing)
  // Under adaptive routing, the links of the transfers a starting call has routed so far: they weigh on the routing
  // of its later transfers (the call's own load), and come off again once the call is routed, before its transfers
  // start and add their load for real.
  std::vector<LinkId> routed_by_call_;
  void weigh_routed(std::span<const LinkId> path);

  std::vector<Call> calls_;
  std::vector<std::uint32_t> free_calls_;
  std::vector<Timer> timers_;  // min-heap
  std::uint64_t timer_seq_ = 0;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> flow_owner_[2];  // per network, by FlowId: (call, transfer)
  std::vector<FlowId> finished_;
  std::uint64_t calls_started_ = 0;
  FlowBackendStats stats_;
  // Flow DAGs by (kind, bytes, nodes, ranks per node, local GPUs): copies on other nodes reuse them.
  // By (kind, bytes, nodes, ranks per node, local GPUs, a token exchange's network and NVLink copies).
  std::map<std::tuple<int, std::int64_t, int, int, std::vector<int>, float, float>, std::shared_ptr<const FlowDag>>
      dags_;
  std::map<std::pair<const FlowDag*, int>, std::shared_ptr<const FlowDag>> one_way_;
  std::map<const FlowDag*, std::vector<Flow>> merged_p2p_;
  std::map<const FlowDag*, std::int64_t> largest_transfer_;  // of the DAGs above, which live as long as the backend
  // By (DAG, copy's members): routed once while the links stay as they are (cleared when one changes
  // state; not kept under adaptive routing, whose choice depends on the load of the moment).
  std::map<std::pair<const FlowDag*, const std::vector<int>*>, Coflow> coflows_;
  std::vector<LinkId> path_scratch_;
  std::vector<std::uint32_t> link_stamp_;  // by link: == stamp_epoch_ when already on the path being built
  std::uint32_t stamp_epoch_ = 1;
  std::vector<std::uint32_t> link_slot_;  // by link: its index in the coflow being built
};

}  // namespace trainsim
