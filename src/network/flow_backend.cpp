#include "network/flow_backend.hpp"

#include <algorithm>
#include <set>
#include <tuple>
#include <string>

#include "core/check.hpp"
#include "core/error.hpp"
#include "network/flow/flow_network.hpp"

namespace trainsim {

namespace {

std::uint64_t mix(std::uint64_t x) {  // splitmix64 finaliser: flow keys for the ECMP hash
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<double> capacities(const NetworkGraph& g) {
  std::vector<double> c;
  c.reserve(g.links().size());
  for (const Link& l : g.links()) c.push_back(l.capacity_Bps);
  return c;
}

std::vector<SimTime> latencies(const NetworkGraph& g) {
  std::vector<SimTime> v;
  v.reserve(g.links().size());
  for (const Link& l : g.links()) v.push_back(from_seconds(l.latency_ns * 1e-9));
  return v;
}

std::unique_ptr<PacketNetwork> make_packet_network(const NetworkGraph& g, const FlowBackendOptions& options) {
  auto net = std::make_unique<PacketNetwork>(capacities(g), latencies(g), 0, *options.packet);
  // NVLink and PCIe are credit-based: RoCE's PFC, ECN and drops belong to the Ethernet links only.
  for (LinkId l = 0; l < g.link_count(); ++l)
    if (g.link(l).kind == LinkKind::ScaleUp || g.link(l).kind == LinkKind::Pcie)
      net->set_host_link(l);
    else if (g.node(g.link(l).from).kind == NodeKind::Nic)
      net->set_nic_port(l);
  // Switch buffers are shared by a switch's ports: the network learns which switch each link leaves and enters.
  const auto switch_id = [&](NodeId n) {
    return g.node(n).kind == NodeKind::Switch ? static_cast<std::int32_t>(n) : -1;
  };
  for (LinkId l = 0; l < g.link_count(); ++l)
    net->set_switch_ends(l, switch_id(g.link(l).from), switch_id(g.link(l).to));
  net->seal_links();  // a buffer its ports' headroom fills is refused now, before the run
  return net;
}

// Whether every call goes to packets: the scope names no communicator and no size.
// Point-to-point DAGs without dependencies go on the network one transfer per connection (add_merged_p2p).
bool merges_per_connection(const FlowDag& dag) {
  return dag.dep_index.empty() && !dag.flows.empty() && dag.algorithm == NcclAlgorithm::P2P;
}

bool all_packets(const FlowBackendOptions& options) {
  if (!options.packet || options.packet_min_bytes > 0) return false;
  return std::all_of(options.packet_groups.begin(), options.packet_groups.end(), [](char c) { return c != 0; });
}

}  // namespace

FlowBackend::FlowBackend(const ClusterSpec& cluster, const CollectiveModel& collectives, NetworkGraph& graph,
                         std::vector<std::vector<std::vector<int>>> replicas, const FlowBackendOptions& options,
                         std::vector<ScheduledLinkState> link_changes)
    : cluster_(cluster),
      collectives_(collectives),
      graph_(graph),
      replicas_(std::move(replicas)),
      options_(options),
      link_changes_(std::move(link_changes)),
      router_(graph, options.seed),
      paths_(cluster, router_, options.adaptive_routing),
      ecmp_paths_(cluster, router_, false),
      link_load_(graph.links().size(), 0.0),
      link_stamp_(graph.links().size(), 0),
      link_slot_(graph.links().size(), 0) {
  if (!all_packets(options)) {
    auto flows = std::make_unique<FlowNetwork>(capacities(graph), latencies(graph));
    flow_ = flows.get();
    networks_[kFlows] = std::move(flows);
  }
  if (options.packet) {
    auto packets = make_packet_network(graph, options);
    packet_ = packets.get();
    networks_[kPackets] = std::move(packets);
  }
  for (std::size_t i = 0; i < link_changes_.size(); ++i) {
    const ScheduledLinkState& c = link_changes_[i];
    // The scenario layer resolved the link's name and bounded the factor (faults:).
    TRAINSIM_CHECK(c.link >= 0 && c.link < graph.link_count(), "network: link change on an unknown link");
    TRAINSIM_CHECK(c.factor > 0 && c.factor <= 1, "network: a link keeps a fraction in (0, 1] of its capacity");
    push_timer(c.at, TimerKind::LinkState, static_cast<std::uint32_t>(i), 0);
  }
}

FlowBackend::~FlowBackend() = default;

void FlowBackend::push_timer(SimTime at, TimerKind kind, std::uint32_t a, std::uint32_t b) {
  timers_.push_back(Timer{at, timer_seq_++, kind, a, b});
  std::push_heap(timers_.begin(), timers_.end(), std::greater<>());
}

bool FlowBackend::inside_one_domain(const std::vector<int>& members) const {
  if (members.empty()) return true;
  const int d = cluster_.domain_of(members.front());
  return std::all_of(members.begin(), members.end(), [&](int r) { return cluster_.domain_of(r) == d; });
}

std::shared_ptr<const FlowDag> FlowBackend::dag_for(const CollectiveCall& call, const std::vector<int>& members) {
  const GroupPlacement where = GroupPlacement::of(members, cluster_);
  auto key = std::make_tuple(static_cast<int>(call.kind), call.bytes, where.nodes, where.max_per_node,
                             where.local_ranks, call.exchange.remote_copies, call.exchange.nvlink_copies);
  if (auto it = dags_.find(key); it != dags_.end()) return it->second;
  auto dag = std::make_shared<const FlowDag>(
      call.exchange.on() ? collectives_.exchange_flows(call.bytes, call.exchange, where, FlowGranularity::PerChannel)
                         : collectives_.flows(call.kind, call.bytes, where, FlowGranularity::PerChannel));
  return dags_.emplace(std::move(key), std::move(dag)).first->second;
}

std::vector<GroupPlacement> FlowBackend::copy_placements() const {
  std::vector<GroupPlacement> out;
  std::set<std::tuple<int, int, std::vector<int>>> seen;
  for (const auto& copies : replicas_)
    for (const std::vector<int>& members : copies) {
      if (members.size() <= 1) continue;
      GroupPlacement where = GroupPlacement::of(members, cluster_);
      if (seen.emplace(where.nodes, where.max_per_node, where.local_ranks).second) out.push_back(std::move(where));
    }
  return out;
}

// A one-way send on a pair: the SendRecv DAG without the flows of the member that only receives
// (the DAG has no dependencies; communicator rank i is the group's i-th member).
std::shared_ptr<const FlowDag> FlowBackend::one_way(const std::shared_ptr<const FlowDag>& dag, int sender) {
  auto key = std::make_pair(dag.get(), sender);
  if (auto it = one_way_.find(key); it != one_way_.end()) return it->second;
  auto out = std::make_shared<FlowDag>(*dag);
  if (!out->dep_index.empty()) return dag;  // not the shape this filter understands: keep both ways
  std::erase_if(out->flows,
                [&](const Flow& f) { return f.src.kind == FlowEndpoint::Kind::Gpu && f.src.index != sender; });
  for (Flow& f : out->flows) f.dep_begin = f.dep_end = 0;
  std::shared_ptr<const FlowDag> result = std::move(out);
  return one_way_.emplace(key, std::move(result)).first->second;
}

// The DAG one copy of `call` runs: a one-way pipeline send keeps only its sender's flows.
std::shared_ptr<const FlowDag> FlowBackend::copy_dag(const CollectiveCall& call, const std::vector<int>& members) {
  auto dag = dag_for(call, members);
  if (call.kind == CollKind::SendRecv && call.sender >= 0) dag = one_way(dag, call.sender);
  return dag;
}

std::uint32_t FlowBackend::new_call() {
  if (!free_calls_.empty()) {
    const std::uint32_t c = free_calls_.back();
    free_calls_.pop_back();
    return c;
  }
  calls_.emplace_back();
  return static_cast<std::uint32_t>(calls_.size() - 1);
}

// A ring channel moves in lock step: every step waits for the previous hop, and the FIFO between
// hops holds only NCCL_STEPS chunks, so over a long transfer each hop runs at the pace of the
// slowest. PerChannel ring DAGs (no dependencies, equal bytes on every hop of a channel) therefore
// become one transfer per channel over the union of its hops' links: one rate, limited by the
// most contended hop. A link two hops of one channel share is counted once (rare: rings leave a
// node or a leaf once per channel).
void FlowBackend::weigh_routed(std::span<const LinkId> path) {
  if (!options_.adaptive_routing) return;
  for (LinkId l : path) {
    link_load_[static_cast<std::size_t>(l)] += 1.0;
    routed_by_call_.push_back(l);
  }
}

void FlowBackend::add_coupled_ring(std::uint32_t ci, const FlowDag& dag, const std::vector<int>& members,
                                   std::uint64_t key_base) {
  Call& call = calls_[ci];
  std::map<int, std::vector<std::uint32_t>> by_channel;
  for (std::uint32_t i = 0; i < dag.flows.size(); ++i) by_channel[dag.flows[i].channel].push_back(i);
  for (const auto& [channel, flows] : by_channel) {
    Transfer t;
    t.call = ci;
    t.path_begin = static_cast<std::uint32_t>(call.paths.size());
    for (std::uint32_t i : flows) {
      const Flow& f = dag.flows[i];
      t.bytes = std::max(t.bytes, f.bytes);
      path_scratch_.clear();
      paths_.append(f, members, mix(key_base ^ (i * 0x100000001b3ULL)), link_load_, path_scratch_);
      weigh_routed(path_scratch_);
      t.latency = std::max(t.latency, network_of(ci).delay_before_start(path_scratch_));
      for (LinkId l : path_scratch_) {
        auto& stamp = link_stamp_[static_cast<std::size_t>(l)];
        if (stamp == stamp_epoch_) continue;
        stamp = stamp_epoch_;
        call.paths.push_back(l);
      }
    }
    ++stamp_epoch_;
    t.path_end = static_cast<std::uint32_t>(call.paths.size());
    t.next_begin = t.next_end = static_cast<std::uint32_t>(call.dependents.size());
    // Other routes: each hop of the ring hashed with another key, the hops joined as above.
    add_alt_routes(ci, t, [&](std::uint64_t salt, std::vector<LinkId>& out) {
      for (std::uint32_t i : flows) {
        path_scratch_.clear();
        ecmp_paths_.append(dag.flows[i], members, mix(key_base ^ (i * 0x100000001b3ULL) ^ salt), link_load_,
                           path_scratch_);
        for (LinkId l : path_scratch_) {
          auto& stamp = link_stamp_[static_cast<std::size_t>(l)];
          if (stamp == stamp_epoch_) continue;
          stamp = stamp_epoch_;
          out.push_back(l);
        }
      }
      ++stamp_epoch_;
    });
    calls_[ci].transfers.push_back(t);
  }
}

template <class Route>
void FlowBackend::add_alt_routes(std::uint32_t ci, Transfer& t, Route route) {
  if (options_.packet_routes <= 1 || calls_[ci].network != kPackets || t.path_end == t.path_begin) return;
  Call& call = calls_[ci];
  t.alt_begin = t.alt_end = static_cast<std::uint32_t>(call.alt_routes.size());
  const auto own = [&] { return std::span<const LinkId>(call.paths).subspan(t.path_begin, t.path_end - t.path_begin); };
  std::vector<LinkId> candidate;
  for (int k = 1; k < options_.packet_routes; ++k) {
    candidate.clear();
    route(mix(static_cast<std::uint64_t>(k) * 0x9E3779B97F4A7C15ULL), candidate);
    const auto same = [&](std::span<const LinkId> other) { return std::ranges::equal(other, candidate); };
    // A route of the transfer joins its two ends (a ring's hops joined otherwise could end elsewhere).
    if (candidate.empty() || candidate.front() != own().front() || candidate.back() != own().back() || same(own()))
      continue;
    bool seen = false;
    for (std::uint32_t r = t.alt_begin; r < t.alt_end && !seen; ++r) {
      const auto [first, second] = call.alt_routes[r];
      seen = same(std::span<const LinkId>(call.alt_links).subspan(first, second - first));
    }
    if (seen) continue;
    const auto first = static_cast<std::uint32_t>(call.alt_links.size());
    call.alt_links.insert(call.alt_links.end(), candidate.begin(), candidate.end());
    call.alt_routes.emplace_back(first, static_cast<std::uint32_t>(call.alt_links.size()));
    t.alt_end = static_cast<std::uint32_t>(call.alt_routes.size());
  }
}

// Point-to-point DAGs without dependencies (send/recv, all-to-all): what goes on the network is one
// transfer per connection, carrying the bytes of every flow that shares it and routed with one ECMP
// hash, which keeps a large job's p2p traffic to a few transfers per peer (docs/network-model.md).
// * A direct send: the channels NCCL stripes one peer's data over run side by side between the same
//   two GPUs through the same NICs, so they are one transfer. Under contention they weigh as one
//   connection rather than one per channel and do not spread over several equal-cost paths: the
//   price of keeping a large job's pipeline sends out of one huge sharing component.
// * A send relayed by PXN leaves on the relay GPU's NIC over the connection that GPU's proxy holds to
//   the peer on that channel, shared by every local GPU it relays for (src/transport/net.cc: the
//   proxy's shared send comm per remote rank and channel, the "message aggregation" PXN was made
//   for): one transfer per (relay, peer, channel), its path starting at the relay's NIC. The channels
//   stay apart here: merged, an all-to-all would put each relay's whole traffic to a peer on one
//   hash, and ECMP collisions would cost a quarter of a full-bisection fat-tree's throughput. The
//   NVLink legs into the relay are left out (a GPU relays at most its NIC's rate, a small share of
//   its NVLink bandwidth).
const std::vector<Flow>& FlowBackend::merged_p2p(const FlowDag& dag) {
  if (auto it = merged_p2p_.find(&dag); it != merged_p2p_.end()) return it->second;
  std::vector<Flow> merged;
  // (sending GPU or PXN relay, dst endpoint, src NIC, dst NIC, channel of a relayed send) -> index into `merged`
  std::map<std::tuple<int, int, int, int, int>, std::size_t> by_pair;
  for (Flow f : dag.flows) {
    int channel = -1;
    if (f.relay >= 0) {
      f.src.index = f.relay;
      f.relay = -1;
      channel = f.channel;
    }
    auto [it, fresh] =
        by_pair.emplace(std::make_tuple(f.src.index, f.dst.index, f.src_net, f.dst_net, channel), merged.size());
    if (fresh) {
      f.channel = channel;  // -1: a direct send's channels together
      merged.push_back(f);
    } else {
      merged[it->second].bytes += f.bytes;
    }
  }
  return merged_p2p_.emplace(&dag, std::move(merged)).first->second;
}

namespace {
// The ECMP hash key of a merged point-to-point transfer: its connection (sender or relay, peer, channel).
std::uint64_t connection_key(std::uint64_t key_base, const Flow& f) {
  return mix(key_base ^ (static_cast<std::uint64_t>(f.src.index) * 0x100000001b3ULL) ^
             (static_cast<std::uint64_t>(f.dst.index) << 32) ^ (static_cast<std::uint64_t>(f.channel + 1) << 48));
}
}  // namespace

void FlowBackend::add_merged_p2p(std::uint32_t ci, const FlowDag& dag, const std::vector<int>& members,
                                 std::uint64_t key_base) {
  for (const Flow& f : merged_p2p(dag)) {
    Call& call = calls_[ci];
    path_scratch_.clear();
    paths_.append(f, members, connection_key(key_base, f), link_load_, path_scratch_);
    weigh_routed(path_scratch_);
    Transfer t;
    t.call = ci;
    t.bytes = f.bytes;
    t.path_begin = static_cast<std::uint32_t>(call.paths.size());
    call.paths.insert(call.paths.end(), path_scratch_.begin(), path_scratch_.end());
    t.path_end = static_cast<std::uint32_t>(call.paths.size());
    t.latency = network_of(ci).delay_before_start(path_scratch_);
    t.next_begin = t.next_end = static_cast<std::uint32_t>(call.dependents.size());
    add_alt_routes(ci, t, [&](std::uint64_t salt, std::vector<LinkId>& out) {
      ecmp_paths_.append(f, members, connection_key(key_base, f) ^ salt, link_load_, out);
    });
    calls_[ci].transfers.push_back(t);
  }
}

// An all-to-all at flow level: the transfers of one copy (merged per connection, as above) move at one
// pace, as one coflow whose weight on a link is the bytes its transfers put there over the largest
// transfer's. Under max-min sharing this changes nothing for a balanced all-to-all: its equal
// transfers out of one NIC share that NIC equally, and together with other traffic they take what the
// same transfers as separate flows would (progressive filling raises every flow's rate, a coflow's
// by its weight on each link). The call ends when its most loaded link has carried its share, as the
// last of its transfers would. What it gives up: a transfer on a quiet path cannot finish early and
// leave its links to other traffic. What it buys: one flow per call and copy instead of thousands (an
// EP-64 all-to-all is ~2,700), the difference between hours and seconds for DeepSeek-V3 on 2,048 GPUs.
// Its paths are hashed per connection (sender or relay, peer, channel), the same on every call, as a
// RoCE connection's queue pairs keep their ECMP hash for the life of the communicator.
bool FlowBackend::moves_as_coflow(const CollectiveCall& call, const FlowDag& dag) const {
  return call.kind == CollKind::AllToAll && network_for(call) == kFlows && merges_per_connection(dag);
}

const FlowBackend::Coflow& FlowBackend::coflow_of(const FlowDag& dag, const std::vector<int>& members) {
  const auto key = std::make_pair(&dag, &members);
  if (!options_.adaptive_routing)
    if (auto it = coflows_.find(key); it != coflows_.end()) return it->second;
  Coflow c;
  // By position in c.links: its transfers' bytes, and how many cross it. Under adaptive routing the connections
  // routed after one see it on its links, one transfer each (whole numbers: taken off again exactly).
  std::vector<double> bytes_on, crossings;
  const std::uint64_t key_base =
      mix(options_.seed ^ mix(0x636f666c6f77ULL ^ static_cast<std::uint64_t>(members.front())));
  for (const Flow& f : merged_p2p(dag)) {
    if (f.bytes <= 0) continue;
    path_scratch_.clear();
    paths_.append(f, members, connection_key(key_base, f), link_load_, path_scratch_);
    if (path_scratch_.empty()) continue;
    c.bytes = std::max(c.bytes, f.bytes);
    c.latency = std::max(c.latency, flow_->delay_before_start(path_scratch_));
    for (LinkId l : path_scratch_) {
      const auto li = static_cast<std::size_t>(l);
      if (options_.adaptive_routing) link_load_[li] += 1.0;
      if (link_stamp_[li] != stamp_epoch_) {
        link_stamp_[li] = stamp_epoch_;
        link_slot_[li] = static_cast<std::uint32_t>(c.links.size());
        c.links.push_back(l);
        bytes_on.push_back(0);
        crossings.push_back(0);
      }
      bytes_on[link_slot_[li]] += static_cast<double>(f.bytes);
      crossings[link_slot_[li]] += 1.0;
    }
  }
  ++stamp_epoch_;
  if (options_.adaptive_routing)  // taken off again: the coflow adds its own when it starts
    for (std::size_t i = 0; i < c.links.size(); ++i) link_load_[static_cast<std::size_t>(c.links[i])] -= crossings[i];
  for (double b : bytes_on) c.weights.push_back(static_cast<float>(b / static_cast<double>(c.bytes)));
  coflows_.erase(key);
  return coflows_.emplace(key, std::move(c)).first->second;
}

void FlowBackend::add_coflow(std::uint32_t ci, const FlowDag& dag, const std::vector<int>& members) {
  const Coflow& cf = coflow_of(dag, members);
  if (cf.links.empty()) return;
  Call& call = calls_[ci];
  Transfer t;
  t.call = ci;
  t.bytes = cf.bytes;
  t.coflow = true;
  t.latency = cf.latency;
  t.path_begin = static_cast<std::uint32_t>(call.paths.size());
  call.paths.insert(call.paths.end(), cf.links.begin(), cf.links.end());
  t.path_end = static_cast<std::uint32_t>(call.paths.size());
  call.weights.resize(t.path_begin, 1.0F);
  call.weights.insert(call.weights.end(), cf.weights.begin(), cf.weights.end());
  t.next_begin = t.next_end = static_cast<std::uint32_t>(call.dependents.size());
  call.transfers.push_back(t);
}

void FlowBackend::add_copy(std::uint32_t ci, const FlowDag& dag, const std::vector<int>& members,
                           std::uint64_t key_base) {
  if (dag.dep_index.empty() && !dag.flows.empty()) {
    if (dag.algorithm == NcclAlgorithm::Ring) return add_coupled_ring(ci, dag, members, key_base);
    if (merges_per_connection(dag)) return add_merged_p2p(ci, dag, members, key_base);
  }
  Call& call = calls_[ci];
  const auto base = static_cast<std::uint32_t>(call.transfers.size());
  for (std::size_t i = 0; i < dag.flows.size(); ++i) {
    const Flow& f = dag.flows[i];
    Transfer t;
    t.call = ci;
    t.bytes = f.bytes;
    t.path_begin = static_cast<std::uint32_t>(call.paths.size());
    paths_.append(f, members, mix(key_base ^ (i * 0x100000001b3ULL)), link_load_, call.paths);
    t.path_end = static_cast<std::uint32_t>(call.paths.size());
    weigh_routed(std::span<const LinkId>(calls_[ci].paths).subspan(t.path_begin, t.path_end - t.path_begin));
    t.latency = network_of(ci).delay_before_start(
        std::span<const LinkId>(call.paths).subspan(t.path_begin, t.path_end - t.path_begin));
    t.pending = f.dep_end - f.dep_begin;
    add_alt_routes(ci, t, [&](std::uint64_t salt, std::vector<LinkId>& out) {
      ecmp_paths_.append(f, members, mix(key_base ^ (i * 0x100000001b3ULL)) ^ salt, link_load_, out);
    });
    calls_[ci].transfers.push_back(t);
  }
  // Dependents in CSR, per copy (dependencies never cross copies).
  const auto n = static_cast<std::uint32_t>(dag.flows.size());
  std::vector<std::uint32_t> count(n + 1, 0);
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t d = dag.flows[i].dep_begin; d < dag.flows[i].dep_end; ++d) ++count[dag.dep_index[d] + 1];
  for (std::uint32_t i = 0; i < n; ++i) count[i + 1] += count[i];
  const auto offset = static_cast<std::uint32_t>(call.dependents.size());
  call.dependents.resize(offset + count[n]);
  for (std::uint32_t i = 0; i < n; ++i) {
    call.transfers[base + i].next_begin = offset + count[i];
    call.transfers[base + i].next_end = offset + count[i];
  }
  for (std::uint32_t i = 0; i < n; ++i)
    for (std::uint32_t d = dag.flows[i].dep_begin; d < dag.flows[i].dep_end; ++d) {
      Transfer& parent = call.transfers[base + dag.dep_index[d]];
      call.dependents[parent.next_end++] = base + i;
    }
}

namespace {

// add_copy's transfers for one copy of a DAG other than merged point-to-point: one per channel for a
// coupled ring, else one per flow.
std::int64_t transfers_of(const FlowDag& dag) {
  if (dag.dep_index.empty() && !dag.flows.empty()) {
    if (dag.algorithm == NcclAlgorithm::Ring) {
      std::set<int> channels;
      for (const Flow& f : dag.flows) channels.insert(f.channel);
      return static_cast<std::int64_t>(channels.size());
    }
  }
  return static_cast<std::int64_t>(dag.flows.size());
}

}  // namespace

// At flow level a call whose largest transfer lasts at most 1 us at the NIC's line rate (50 KB at
// 400 Gb/s) is latency-bound: NCCL's own latency term is several microseconds, and sharing a link
// can only stretch the sub-microsecond part. It is priced by the collective model like a call inside
// one node. (Megatron's routing-probability all-to-all moves ~2 KiB per peer: flow by flow it would
// cost as many transfers as the token all-to-all beside it.)
constexpr double kLatencyBoundSeconds = 1e-6;

const std::vector<GroupPlacement>& FlowBackend::placements(std::uint32_t group) {
  if (placements_.size() <= group) placements_.resize(replicas_.size());
  std::vector<GroupPlacement>& known = placements_[group];
  if (known.empty()) known = GroupPlacement::of_copies(replicas_[group], cluster_);
  return known;
}

bool FlowBackend::all_copies_inside_one_domain(std::uint32_t group) {
  if (inside_domain_.size() <= group) inside_domain_.resize(replicas_.size(), -1);
  signed char& known = inside_domain_[group];
  if (known < 0) {
    const auto& copies = replicas_[group];
    known = std::all_of(copies.begin(), copies.end(), [&](const auto& m) { return inside_one_domain(m); }) ? 1 : 0;
  }
  return known == 1;
}

bool FlowBackend::uneven(std::uint32_t group) {
  const auto& all = placements(group);
  return std::any_of(all.begin(), all.end(), [](const GroupPlacement& g) { return !g.uniform; });
}

bool FlowBackend::priced_by_model(const CollectiveCall& call) {
  const auto& copies = replicas_[call.group];
  if (copies.empty() || call.bytes <= 0 || copies.front().size() <= 1) return true;
  if (all_copies_inside_one_domain(call.group)) return true;
  if (uneven(call.group)) return true;
  if (network_for(call) == kPackets) return false;  // packets: a small message's queueing delay is the question
  const auto dag = copy_dag(call, copies.front());
  const double line_rate_Bps = cluster_.nic_gbps * 1e9 / 8;
  return static_cast<double>(largest_transfer(*dag)) <= line_rate_Bps * kLatencyBoundSeconds;
}

std::int64_t FlowBackend::largest_transfer(const FlowDag& dag) {
  if (auto it = largest_transfer_.find(&dag); it != largest_transfer_.end()) return it->second;
  std::int64_t largest = 0;
  for (const Flow& f : merges_per_connection(dag) ? merged_p2p(dag) : dag.flows) largest = std::max(largest, f.bytes);
  return largest_transfer_.emplace(&dag, largest).first->second;
}

std::int64_t FlowBackend::planned_transfers(const CollectiveCall& call) {
  TRAINSIM_CHECK(call.group < replicas_.size(), "network: collective on unknown group " + std::to_string(call.group));
  const auto& copies = replicas_[call.group];
  if (priced_by_model(call)) return 0;
  std::int64_t n = 0;
  for (const auto& members : copies) {
    const auto dag = copy_dag(call, members);
    if (moves_as_coflow(call, *dag)) {
      ++n;
    } else {
      n += merges_per_connection(*dag) ? static_cast<std::int64_t>(merged_p2p(*dag).size()) : transfers_of(*dag);
    }
  }
  return n;
}

double FlowBackend::planned_fabric_bytes(const CollectiveCall& call) {
  TRAINSIM_CHECK(call.group < replicas_.size(), "network: collective on unknown group " + std::to_string(call.group));
  if (network_for(call) != kPackets) return 0;
  const auto& copies = replicas_[call.group];
  if (copies.empty() || call.bytes <= 0 || copies.front().size() <= 1 || uneven(call.group)) return 0;
  double bytes = 0;
  for (const auto& members : copies) {
    if (inside_one_domain(members)) continue;
    const auto dag = copy_dag(call, members);
    for (const Flow& f : dag->flows) bytes += static_cast<double>(f.bytes);
  }
  return bytes;
}

void FlowBackend::start(SimTime now, std::uint64_t token, const CollectiveCall& call) {
  TRAINSIM_CHECK(call.group < replicas_.size(), "network: collective on unknown group " + std::to_string(call.group));
  const auto& copies = replicas_[call.group];
  TRAINSIM_CHECK(!copies.empty(), "network: group " + std::to_string(call.group) + " has no members");
  const std::uint64_t seq = calls_started_++;
  const std::uint32_t ci = new_call();
  Call& c = calls_[ci];
  c.token = token;
  c.transfers.clear();
  c.paths.clear();
  c.alt_links.clear();
  c.alt_routes.clear();
  c.weights.clear();
  c.dependents.clear();
  c.tail_latency = 0;
  c.network = static_cast<std::uint8_t>(network_for(call));
  if (priced_by_model(call)) {
    // Inside one scale-up domain, nothing to move, or latency-bound: the collective model's time.
    const CollectiveEstimate est =
        slowest_copy_estimate(collectives_, call.kind, call.bytes, placements(call.group), call.exchange);
    c.remaining = 0;
    push_timer(now + est.time, TimerKind::CallDone, ci, 0);
    return;
  }
  for (std::size_t k = 0; k < copies.size(); ++k) {
    const auto dag = copy_dag(call, copies[k]);
    calls_[ci].tail_latency = std::max(calls_[ci].tail_latency, from_microseconds(dag->latency_us));
    if (moves_as_coflow(call, *dag)) {
      add_coflow(ci, *dag, copies[k]);
    } else {
      add_copy(ci, *dag, copies[k], mix(options_.seed ^ mix(seq * 1315423911ULL + k)));
    }
  }
  for (LinkId l : routed_by_call_) link_load_[static_cast<std::size_t>(l)] -= 1.0;  // whole numbers: exact
  routed_by_call_.clear();
  Call& filled = calls_[ci];
  filled.remaining = static_cast<std::uint32_t>(filled.transfers.size());
  stats_.flows += static_cast<std::int64_t>(filled.transfers.size());
  if (filled.remaining == 0) {
    push_timer(now + filled.tail_latency, TimerKind::CallDone, ci, 0);
    return;
  }
  for (std::uint32_t x = 0; x < filled.transfers.size(); ++x)
    if (filled.transfers[x].pending == 0)
      push_timer(now + filled.transfers[x].latency, TimerKind::TransferReady, ci, x);
}

void FlowBackend::transfer_ready(SimTime now, std::uint32_t ci, std::uint32_t x) {
  Call& c = calls_[ci];
  const Transfer& t = c.transfers[x];
  const std::span<const LinkId> path =
      std::span<const LinkId>(c.paths).subspan(t.path_begin, t.path_end - t.path_begin);
  if (t.bytes <= 0 || path.empty()) {
    transfer_done(now, ci, x);
    return;
  }
  const int n = c.network;
  FlowId f;
  if (t.alt_end > t.alt_begin) {  // several routes: its packets spread over them
    const std::size_t count = 1 + t.alt_end - t.alt_begin;
    routes_scratch_.resize(count);
    routes_scratch_[0].assign(path.begin(), path.end());
    for (std::uint32_t r = t.alt_begin; r < t.alt_end; ++r) {
      const auto [first, second] = c.alt_routes[r];
      routes_scratch_[1 + r - t.alt_begin].assign(c.alt_links.begin() + first, c.alt_links.begin() + second);
    }
    f = packet_->start(now, routes_scratch_, t.bytes);
  } else {
    f = t.coflow ? flow_->start(now, path, hop_weights(c, t), t.bytes) : networks_[n]->start(now, path, t.bytes);
  }
  auto& owner = flow_owner_[n];
  if (static_cast<std::size_t>(f) >= owner.size()) owner.resize(static_cast<std::size_t>(f) + 1);
  owner[static_cast<std::size_t>(f)] = {ci, x};
  add_link_load(c, t, 1.0);
}

std::span<const float> FlowBackend::hop_weights(const Call& c, const Transfer& t) {
  return std::span<const float>(c.weights).subspan(t.path_begin, t.path_end - t.path_begin);
}

// Adaptive routing's view of the load: the transfers on each link, a coflow counting its weight there.
void FlowBackend::add_link_load(const Call& c, const Transfer& t, double sign) {
  for (std::uint32_t p = t.path_begin; p < t.path_end; ++p)
    link_load_[static_cast<std::size_t>(c.paths[p])] += sign * (t.coflow ? c.weights[p] : 1.0);
}

void FlowBackend::transfer_done(SimTime now, std::uint32_t ci, std::uint32_t x) {
  Call& c = calls_[ci];
  const Transfer& t = c.transfers[x];
  if (t.bytes > 0) add_link_load(c, t, -1.0);
  for (std::uint32_t k = t.next_begin; k < t.next_end; ++k) {
    const std::uint32_t d = c.dependents[k];
    if (--c.transfers[d].pending == 0) push_timer(now + c.transfers[d].latency, TimerKind::TransferReady, ci, d);
  }
  if (--c.remaining == 0) push_timer(now + c.tail_latency, TimerKind::CallDone, ci, 0);
}

int FlowBackend::network_for(const CollectiveCall& call) const {
  if (!networks_[kPackets]) return kFlows;
  if (!networks_[kFlows]) return kPackets;
  const bool group = options_.packet_groups.empty() ||
                     (call.group < options_.packet_groups.size() && options_.packet_groups[call.group] != 0);
  return group && call.bytes >= options_.packet_min_bytes ? kPackets : kFlows;
}

std::vector<LinkStats> FlowBackend::link_statistics() const {
  std::vector<LinkStats> out;
  for (const auto& net : networks_) {
    if (!net) continue;
    std::vector<LinkStats> s = net->link_statistics();
    if (out.empty()) {
      out = std::move(s);
      continue;
    }
    for (std::size_t l = 0; l < out.size(); ++l) {
      out[l].bytes_carried += s[l].bytes_carried;
      out[l].busy_time = std::max(out[l].busy_time, s[l].busy_time);
      out[l].peak_flows += s[l].peak_flows;
      out[l].utilisation += s[l].utilisation;
    }
  }
  return out;
}

SimTime FlowBackend::next_event() {
  SimTime t = timers_.empty() ? kNever : timers_.front().at;
  for (const auto& net : networks_)
    if (net) t = std::min(t, net->next_completion());
  return t;
}

void FlowBackend::advance(SimTime t, std::vector<std::uint64_t>& completed) {
  completed.clear();
  while (true) {
    SimTime tn = kNever;
    int which = kFlows;
    for (int n = 0; n < 2; ++n) {
      if (!networks_[n]) continue;
      const SimTime tc = networks_[n]->next_completion();
      if (tc < tn) {
        tn = tc;
        which = n;
      }
    }
    const SimTime tt = timers_.empty() ? kNever : timers_.front().at;
    const SimTime te = std::min(tn, tt);
    if (te == kNever || te > t) break;
    if (tn <= tt) {  // transfers finishing at an instant go before what starts then
      networks_[which]->advance(tn, finished_);
      for (FlowId f : finished_) {
        const auto [ci, x] = flow_owner_[which][static_cast<std::size_t>(f)];
        transfer_done(tn, ci, x);
      }
      continue;
    }
    // Every timer of this instant before the networks are asked again: the flows they start are then
    // given their rates by one solve, not one solve per start (an all-to-all starts thousands at once).
    while (!timers_.empty() && timers_.front().at == tt) fire_timer(completed);
  }
}

void FlowBackend::fire_timer(std::vector<std::uint64_t>& completed) {
  std::pop_heap(timers_.begin(), timers_.end(), std::greater<>());
  const Timer e = timers_.back();
  timers_.pop_back();
  switch (e.kind) {
    case TimerKind::TransferReady: transfer_ready(e.at, e.a, e.b); break;
    case TimerKind::LinkState: {
      const ScheduledLinkState& c = link_changes_[e.a];
      graph_.set_link_state(c.link, c.up, c.factor);
      coflows_.clear();  // routed before the change
      if (c.up)
        for (const auto& net : networks_)
          if (net) net->set_capacity(c.link, graph_.link(c.link).capacity_Bps, e.at);
      break;
    }
    case TimerKind::CallDone: {
      Call& c = calls_[e.a];
      completed.push_back(c.token);
      c.transfers.clear();
      c.paths.clear();
      c.weights.clear();
      c.dependents.clear();
      free_calls_.push_back(e.a);
      break;
    }
  }
}

}  // namespace trainsim
