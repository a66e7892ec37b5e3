#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <unordered_map>
#include <cmath>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "api/fabric_check.hpp"
#include "api/iteration_energy.hpp"
#include "api/flow_setup.hpp"
#include "api/compute_setup.hpp"
#include "api/explain.hpp"
#include "api/run_statistics.hpp"
#include "api/simulation_memo.hpp"
#include "api/work_estimate.hpp"
#include "collective/collective_model.hpp"
#include "collective/nccl/nccl_analytical_model.hpp"
#include "collective/nccl/nccl_debug_log.hpp"
#include "compute/arch_family.hpp"
#include "compute/compute_model.hpp"
#include "core/error.hpp"
#include "core/parallel.hpp"
#include "engine/engine.hpp"
#include "trainsim/trainsim.hpp"
#include "workload/generator.hpp"
#include "workload/group_replicas.hpp"
#include "workload/memory_model.hpp"
#include "workload/recompute.hpp"
#include "workload/workload_file.hpp"

namespace trainsim {

namespace {

MemoryUsage memory_usage(const Scenario& s) {
  const auto stages = estimate_memory(s);
  MemoryUsage m;
  m.capacity = s.cluster.gpu.memory_gib;
  double worst = -1;
  for (const auto& st : stages) {
    if (st.total_gib() > worst) {
      worst = st.total_gib();
      m.weights = st.weights_gib;
      m.grads = st.grads_gib;
      m.optimizer = st.optimizer_gib;
      m.activations = st.activations_gib;
      m.other = st.other_gib;
      m.peak = st.total_gib();
      m.worst_stage = st.stage;
    }
  }
  m.fits = m.peak <= m.capacity;
  return m;
}

std::string trace_category(const Op& op, const Workload& wl) {
  if (op.type == Op::Type::Compute) return op.phase == Phase::Optimizer ? "optimizer" : "compute";
  return to_string(wl.groups[wl.collectives[op.desc].group].kind);
}

const char* network_model_name(const Scenario& s) {
  switch (s.simulation.network_model) {
    case NetworkModel::Flow: return "flow";
    case NetworkModel::Packet: return "packet";
    case NetworkModel::Analytical: break;
  }
  return "analytical";
}

void validate_run_options(const Scenario& s) {
  if (s.simulation.network_model == NetworkModel::Analytical)
    for (std::size_t i = 0; i < s.faults.size(); ++i)
      if (s.faults[i].kind != FaultKind::GpuSlow)
        throw ScenarioError(s.file, "faults[" + std::to_string(i) + "].kind",
                            "link and NIC faults need the fabric: set simulation.network_model: flow (or packet)");
  for (std::size_t i = 0; i < s.faults.size(); ++i)
    if (s.faults[i].kind == FaultKind::GpuSlow && s.faults[i].at_s)
      throw ScenarioError(s.file, "faults[" + std::to_string(i) + "].at_s",
                          "a GPU that slows down mid-run is not modelled yet; use always: true for the slowed state");
}

// gpu_slow faults as per-simulated-rank compute slowdowns (time × 1/factor). A straggler that is not
// simulated slows the simulated rank of its pipeline stage: every collective of the stage waits for
// it, so the stage runs at its speed. Empty when there is no gpu_slow fault.
std::vector<double> compute_slowdown(const Scenario& s, const Workload& wl) {
  std::vector<double> slow;
  if (s.faults.empty()) return slow;
  const ParallelPlan plan = parallel_plan_of(s);
  for (const FaultSpec& f : s.faults) {
    if (f.kind != FaultKind::GpuSlow) continue;
    if (slow.empty()) slow.assign(wl.ranks.size(), 1.0);
    const int stage = plan.coord_of(f.rank).pp;
    for (std::size_t r = 0; r < wl.ranks.size(); ++r) {
      const int sim = wl.ranks[r].rank;
      const bool same = sim == f.rank || (wl.ranks[r].represents > 1 && plan.coord_of(sim).pp == stage);
      if (same) slow[r] = std::max(slow[r], 1.0 / f.factor);
    }
  }
  return slow;
}

struct Simulated {
  SimulationOutput sim;
  std::int64_t flows = 0;
  std::optional<Congestion> congestion;  // packet level, the reported run only
  std::vector<TraceCounter> counters;    // packet level with a trace: the deepest queues, the longest pauses
  std::vector<QueueSampleRow> queues;    // packet level, RunOptions::want_queues: every port that queued
  std::vector<PauseRow> pauses;          // packet level, RunOptions::want_pauses: every pause of a fabric port
  std::vector<RateRow> rates;            // packet level, RunOptions::want_rates: every flow's rate changes
  bool rates_truncated = false;          // more rate changes than the packet network keeps
  std::vector<LinkUsageRow> links;       // the reported run only
  std::vector<LinkUsageRow> hot_links;   // its busiest fabric links, busiest first
};

// Every link's traffic over the iteration, and the busiest links of the fabric (scale-up and PCIe
// links are priced apart from the fabric's, so they are not among them).
void link_usage(const FlowSetup& flow, SimTime makespan, Simulated& out) {
  const auto stats = flow.backend->link_statistics();
  const PacketNetwork* packets = flow.backend->packet_network();
  const std::vector<PacketLinkStats> packet_stats =
      packets ? packets->packet_link_statistics() : std::vector<PacketLinkStats>{};
  const NetworkGraph& g = *flow.graph;
  const double t = to_seconds(makespan);
  std::vector<std::size_t> fabric;
  out.links.reserve(stats.size());
  for (std::size_t l = 0; l < stats.size(); ++l) {
    const Link& link = g.link(static_cast<LinkId>(l));
    LinkUsageRow row;
    row.name = g.link_name(static_cast<LinkId>(l));
    row.kind = to_string(link.kind);
    row.capacity_GBps = link.nominal_capacity_Bps / 1e9;
    row.bytes = stats[l].bytes_carried;
    row.busy_s = to_seconds(stats[l].busy_time);
    row.peak_flows = stats[l].peak_flows;
    row.utilisation = t > 0 && link.nominal_capacity_Bps > 0 ? row.bytes / (link.nominal_capacity_Bps * t) : 0;
    if (!packet_stats.empty()) {
      const PacketLinkStats& p = packet_stats[l];
      row.packet = true;
      row.max_queue_kb = static_cast<double>(p.max_queue_bytes) / 1e3;
      row.pause_events = p.pause_events;
      row.paused_s = to_seconds(p.paused_time);
      row.ecn_marks = p.ecn_marks;
      row.drops = p.drops;
    }
    if (link.kind != LinkKind::ScaleUp && link.kind != LinkKind::Pcie && row.bytes > 0) fabric.push_back(l);
    out.links.push_back(std::move(row));
  }
  std::stable_sort(fabric.begin(), fabric.end(),
                   [&](std::size_t a, std::size_t b) { return out.links[a].utilisation > out.links[b].utilisation; });
  constexpr std::size_t kHotLinks = 8;
  for (std::size_t i = 0; i < fabric.size() && i < kHotLinks; ++i) out.hot_links.push_back(out.links[fabric[i]]);
}

// Packet level: the run's pauses, marks and drops, its transfers' completion times, and the links that
// congestion hit hardest (most paused, then the deepest queue).
Congestion congestion_of(const FlowSetup& flow, const PacketNetwork& net) {
  Congestion c;
  const NetworkGraph& g = *flow.graph;
  const PacketCounters& k = net.counters();
  c.packets = k.packets_delivered;
  c.cnps = k.cnps;
  c.rate_cuts = k.rate_cuts;
  c.drops = k.drops;
  c.retransmitted_packets = k.retransmitted_packets;
  c.host_links = net.config().host_links == HostLinkModel::Delay ? "delay" : "fifo";
  std::vector<double> fct;
  fct.reserve(net.completed_flows().size());
  for (const FlowRecord& f : net.completed_flows())
    if (f.bytes > 0) fct.push_back(to_microseconds(f.finish - f.start));
  c.transfers = static_cast<std::int64_t>(fct.size());
  if (!fct.empty()) {
    std::sort(fct.begin(), fct.end());
    const auto at = [&](double q) { return fct[static_cast<std::size_t>(q * static_cast<double>(fct.size() - 1))]; };
    c.fct_p50_us = at(0.5);
    c.fct_p99_us = at(0.99);
    c.fct_max_us = fct.back();
  }
  const auto stats = net.packet_link_statistics();
  std::vector<CongestionLinkRow> rows;
  for (std::size_t l = 0; l < stats.size(); ++l) {
    // NVLink and PCIe hold their senders back by credits, not PFC: the fabric's links are what a network
    // engineer tunes.
    const LinkKind kind = g.link(static_cast<LinkId>(l)).kind;
    if (kind == LinkKind::ScaleUp || kind == LinkKind::Pcie) continue;
    const PacketLinkStats& st = stats[l];
    c.ecn_marks += st.ecn_marks;
    c.pause_events += st.pause_events;
    c.paused_s += to_seconds(st.paused_time);
    if (st.pause_events == 0 && st.ecn_marks == 0 && st.drops == 0 && st.max_queue_bytes == 0) continue;
    CongestionLinkRow row;
    row.name = g.link_name(static_cast<LinkId>(l));
    row.kind = to_string(g.link(static_cast<LinkId>(l)).kind);
    row.max_queue_kb = static_cast<double>(st.max_queue_bytes) / 1e3;
    row.pause_events = st.pause_events;
    row.paused_s = to_seconds(st.paused_time);
    row.ecn_marks = st.ecn_marks;
    row.drops = st.drops;
    rows.push_back(std::move(row));
  }
  std::stable_sort(rows.begin(), rows.end(), [](const CongestionLinkRow& a, const CongestionLinkRow& b) {
    return a.paused_s != b.paused_s ? a.paused_s > b.paused_s : a.max_queue_kb > b.max_queue_kb;
  });
  constexpr std::size_t kWorstLinks = 8;
  if (rows.size() > kWorstLinks) rows.resize(kWorstLinks);
  c.worst_links = std::move(rows);
  const auto buffers = net.switch_buffer_statistics();
  if (!buffers.empty()) {
    Congestion::SwitchBuffers sb;
    sb.size_mb = static_cast<double>(net.config().switch_buffer.size_bytes) / 1e6;
    const auto fullest = std::max_element(buffers.begin(), buffers.end(), [](const auto& a, const auto& b) {
      return a.peak_bytes < b.peak_bytes;  // the first of equals: the lowest switch id
    });
    sb.peak_kb = static_cast<double>(fullest->peak_bytes) / 1e3;
    sb.peak_switch = g.node_name(fullest->switch_id);
    sb.headroom_drops = k.headroom_drops;
    c.switch_buffers = sb;
  }
  return c;
}

// The fabric ports whose egress queue ever held a packet, with their peak queue (bytes), in link order.
std::vector<std::pair<LinkId, std::int64_t>> queued_ports(const NetworkGraph& g, const PacketNetwork& net) {
  std::vector<std::pair<LinkId, std::int64_t>> out;
  for (LinkId l = 0; l < g.link_count(); ++l) {
    std::int64_t peak = 0;
    for (const QueueSample& q : net.queue_samples(l)) peak = std::max(peak, q.bytes);
    if (peak > 0) out.emplace_back(l, peak);
  }
  return out;
}

// The fabric ports PFC paused, most paused first (equal times in link order), at most `limit`.
std::vector<LinkId> most_paused_ports(const FlowSetup& flow, const PacketNetwork& net, std::size_t limit) {
  const auto stats = net.packet_link_statistics();
  std::vector<LinkId> out;
  for (LinkId l = 0; l < flow.graph->link_count(); ++l)
    if (stats[static_cast<std::size_t>(l)].pause_events > 0) out.push_back(l);
  std::stable_sort(out.begin(), out.end(), [&](LinkId a, LinkId b) {
    return stats[static_cast<std::size_t>(a)].paused_time > stats[static_cast<std::size_t>(b)].paused_time;
  });
  if (out.size() > limit) out.resize(limit);
  return out;
}

// A time in µs as the trace and the CSVs give it: rounded to the nanosecond.
double time_us(SimTime t) { return static_cast<double>(to_nanoseconds_rounded(t)) / 1e3; }

double pause_end_us(const PauseInterval& p, const PacketNetwork& net) {
  return time_us(p.to == kNever ? net.now() : p.to);
}

// The trace's counter tracks: the egress queues of the fabric ports that queued deepest (at most 16), in KB, and
// the pauses of those PFC held longest.
std::vector<TraceCounter> port_counters(const FlowSetup& flow, const PacketNetwork& net) {
  const NetworkGraph& g = *flow.graph;
  auto deepest = queued_ports(g, net);
  // Deepest first; equal peaks in link order.
  std::stable_sort(deepest.begin(), deepest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  constexpr std::size_t kTracks = 16;
  if (deepest.size() > kTracks) deepest.resize(kTracks);
  std::vector<TraceCounter> out;
  for (const auto& [l, peak] : deepest) {
    const std::string name = "queue " + g.link_name(l);
    for (const QueueSample& q : net.queue_samples(l))
      out.push_back({name, time_us(q.at), static_cast<double>(q.bytes) / 1e3, "KB"});
  }
  // And the ports PFC held longest (at most 16): 1 while paused, 0 when released.
  for (LinkId l : most_paused_ports(flow, net, kTracks)) {
    const std::string name = "paused " + g.link_name(l);
    for (const PauseInterval& p : net.pause_intervals(l)) {
      out.push_back({name, time_us(p.from), 1, "paused"});
      out.push_back({name, pause_end_us(p, net), 0, "paused"});
    }
  }
  return out;
}

// The trace's rate tracks: for the NIC ports whose flows changed rate most often (at most `limit`), the sum of the
// rates of the flows leaving through each, in Gb/s, at every change.
void rate_counters(const FlowSetup& flow, const PacketNetwork& net, std::size_t limit, std::vector<TraceCounter>& out) {
  const auto& samples = net.rate_samples();
  std::map<LinkId, std::size_t> changes;
  for (const RateSample& x : samples) ++changes[x.nic];
  std::vector<std::pair<LinkId, std::size_t>> busiest(changes.begin(), changes.end());
  // Most changes first; equal counts in link order.
  std::stable_sort(busiest.begin(), busiest.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (busiest.size() > limit) busiest.resize(limit);
  // One pass over the samples: each chosen port's running sum, a point per instant (the last change at it wins).
  struct Track {
    std::string name;
    double total = 0;
    std::vector<TraceCounter> points;
  };
  std::map<LinkId, Track> tracks;
  for (const auto& [nic, count] : busiest) tracks[nic].name = "rate " + flow.graph->link_name(nic);
  std::unordered_map<std::uint64_t, double> current;  // by flow: its rate now
  for (const RateSample& x : samples) {
    const auto it = tracks.find(x.nic);
    if (it == tracks.end()) continue;
    Track& t = it->second;
    double& r = current[x.flow];
    t.total += x.rate_Bps - r;
    r = x.rate_Bps;
    const double gbps = std::max(0.0, t.total) * 8e-9, at = time_us(x.at);
    if (!t.points.empty() && t.points.back().ts_us == at)
      t.points.back().value = gbps;
    else
      t.points.push_back({t.name, at, gbps, "Gb/s"});
  }
  for (const auto& [nic, count] : busiest) {
    auto& points = tracks[nic].points;
    out.insert(out.end(), std::make_move_iterator(points.begin()), std::make_move_iterator(points.end()));
  }
}

// `run --rates-csv`: every change of every flow's sending rate, in time order.
std::vector<RateRow> rate_rows(const FlowSetup& flow, const PacketNetwork& net) {
  std::vector<RateRow> out;
  out.reserve(net.rate_samples().size());
  for (const RateSample& x : net.rate_samples())
    out.push_back({x.flow, flow.graph->link_name(x.nic), time_us(x.at), x.rate_Bps * 8e-9});
  return out;
}

// `run --pauses-csv`: every pause of every fabric port, ports in link order, pauses in time order.
std::vector<PauseRow> pause_rows(const FlowSetup& flow, const PacketNetwork& net) {
  const NetworkGraph& g = *flow.graph;
  std::vector<PauseRow> out;
  for (LinkId l = 0; l < g.link_count(); ++l)
    for (const PauseInterval& p : net.pause_intervals(l))
      out.push_back({g.link_name(l), to_string(g.link(l).kind), time_us(p.from), pause_end_us(p, net),
                     p.cause >= 0 ? g.link_name(p.cause) : std::string()});
  return out;
}

// `run --queues-csv`: every fabric port that queued, its samples in time order, ports in link order.
std::vector<QueueSampleRow> queue_rows(const FlowSetup& flow, const PacketNetwork& net) {
  const NetworkGraph& g = *flow.graph;
  std::vector<QueueSampleRow> out;
  for (const auto& [l, peak] : queued_ports(g, net)) {
    const std::string name = g.link_name(l), kind = to_string(g.link(l).kind);
    for (const QueueSample& q : net.queue_samples(l))
      out.push_back({name, kind, time_us(q.at), static_cast<double>(q.bytes) / 1e3});
  }
  return out;
}

// Which of the run's simulations this is, for progress reports.
struct RunIndex {
  int run = 1, runs = 1;
};

// The estimate before the first simulation (flow-level: with the transfers each call will put on the
// fabric), and the engine's progress as a share of all runs' ops.
void watch(const Workload& wl, FlowBackend* network, RunIndex at, const RunOptions& options, EngineOptions& eo) {
  if (!options.progress) return;
  const auto& report = options.progress;
  if (at.run == 1) {
    RunProgress p;
    p.stage = RunProgress::Stage::Estimated;
    p.runs = at.runs;
    p.estimated_ops = static_cast<double>(wl.op_count());
    p.estimated_flows = network ? planned_flows(wl, *network) * at.runs : 0;
    p.estimated_seconds = estimated_seconds(p.estimated_ops * at.runs, p.estimated_flows);
    report(p);
  }
  eo.progress = [&report, at](const EngineProgress& e) {
    RunProgress p;
    p.stage = RunProgress::Stage::Simulating;
    p.run = at.run;
    p.runs = at.runs;
    p.simulated_s = to_seconds(e.now);
    p.events = e.events;
    const double share = e.ops_total > 0 ? static_cast<double>(e.ops_done) / static_cast<double>(e.ops_total) : 1;
    p.fraction = (at.run - 1 + share) / at.runs;
    report(p);
  };
}

// A packet-level run moves every byte that crosses the fabric as RoCE packets: refused up front when that is more
// than simulation.max_packets, with what it would take.
void check_packet_limit(const Scenario& s, const Workload& wl, FlowBackend& backend) {
  if (s.simulation.max_packets <= 0) return;
  const double packets = planned_packets(wl, backend, s.cluster.network.roce.mtu_bytes);
  if (packets <= static_cast<double>(s.simulation.max_packets)) return;
  // Measured end to end on 2-core CI-class machines: 1.46e6 packets of a 16-GPU job in 1.4 s, 2.4e5 in 0.28 s
  // (the NVLink and PCIe hops of each transfer, the switches, the backend around them).
  constexpr double kPacketsPerSecond = 1e6;
  throw ScenarioError(s.file, "simulation.network_model",
                      fmt::format("packet level would move {:.3g} packets over the fabric in this iteration, above "
                                  "simulation.max_packets ({}; about {:.0f} minutes of simulation at ~1 million "
                                  "packets/s); simulate a smaller job or a collective (trainsim nccl-test) at packet "
                                  "level, use network_model: flow for the whole iteration, or raise max_packets",
                                  packets, s.simulation.max_packets, packets / kPacketsPerSecond / 60));
}

// One simulated rank stands for its stage's TP, CP and DP peers, so each call of its groups runs on every copy of the
// group at once (group_replicas.hpp); where the copies sit differently on the nodes (a TP group straddling two NVLink
// domains beside ones inside a domain), the engine prices the call on the slowest. A workload file run without a
// model has no parallel plan to copy its groups by: each group stands for itself.
std::vector<std::vector<GroupPlacement>> copy_placements(const Scenario& s, const Workload& wl) {
  if (!s.has_training_job) return {};
  const ParallelPlan plan = parallel_plan_of(s);
  std::vector<std::vector<GroupPlacement>> out;
  out.reserve(wl.groups.size());
  for (const CommGroup& g : wl.groups) {
    if (g.ranks.size() <= 1) {
      out.emplace_back();
      continue;
    }
    out.push_back(GroupPlacement::of_copies(group_replicas(g.kind, g.ranks, plan), s.cluster));
  }
  return out;
}

// The communicators of every group and of its copies, built before the event loop on the threads RunOptions::threads
// (or simulation.threads) gives: their NCCL graph searches are independent of one another, and the loop would
// otherwise run them one at a time as each group's first call comes up. The same results either way.
// Flow-level, every copy of a group moves its own flows, on communicators of its own local GPUs (so its own NICs).
void prepare_communicators(const Scenario& s, const Workload& wl, const CollectiveModel& coll,
                           const std::vector<std::vector<GroupPlacement>>& copies, const FlowBackend* network,
                           const RunOptions& options) {
  const int threads = resolve_thread_count(options.threads > 0 ? options.threads : s.simulation.threads);
  if (threads <= 1) return;
  std::vector<GroupPlacement> placements;
  for (std::size_t g = 0; g < wl.groups.size(); ++g) {
    if (wl.groups[g].ranks.size() <= 1) continue;
    placements.push_back(GroupPlacement::of(wl.groups[g].ranks, s.cluster));
    if (g < copies.size()) placements.insert(placements.end(), copies[g].begin(), copies[g].end());
  }
  if (network != nullptr) {
    std::vector<GroupPlacement> flows = network->copy_placements();
    placements.insert(placements.end(), flows.begin(), flows.end());
  }
  coll.prepare(placements, threads);
}

// One simulation of the workload, with or without the scenario's faults.
// `plan`: plan_engine of wl and compute, or null.
// `memo`: simulations of this job that earlier runs made (analytical runs only), or null.
Simulated simulate_job(const Scenario& s, const Workload& wl, const ComputeModel& compute, const EnginePlan* plan,
                       const CollectiveModel& coll, bool per_rank, bool with_faults, RunIndex at,
                       const RunOptions& options, SimulationMemo* memo = nullptr, int* memo_hits = nullptr) {
  Simulated out;
  EngineOptions eo;
  eo.interference = s.compute.interference;
  eo.host_launch = from_microseconds(s.compute.host_launch_us);
  eo.plan = plan;
  keep_activity(wl, eo);
  if (with_faults) eo.compute_slowdown = compute_slowdown(s, wl);
  if (!per_rank) eo.copy_placements = copy_placements(s, wl);
  FlowSetup flow;
  if (s.simulation.network_model != NetworkModel::Analytical) {
    flow = make_flow_setup(s, wl, coll, per_rank, with_faults);
    eo.network = flow.backend.get();
    if (s.simulation.network_model == NetworkModel::Packet && at.run == 1) check_packet_limit(s, wl, *flow.backend);
    // The trace's queue and pause tracks, --queues-csv and --pauses-csv: a queue sample per 4 packets of change, at
    // most one a microsecond per port, and every pause.
    if ((options.want_trace || options.want_queues || options.want_pauses) && with_faults)
      if (PacketNetwork* packets = flow.backend->packet_network())
        packets->record_port_history(4 * 4096, from_microseconds(1));
    // The trace's rate tracks and --rates-csv: every change of every flow's rate.
    if ((options.want_trace || options.want_rates) && with_faults)
      if (PacketNetwork* packets = flow.backend->packet_network()) packets->record_rates();
  }
  prepare_communicators(s, wl, coll, eo.copy_placements, flow.backend.get(), options);
  watch(wl, flow.backend.get(), at, options, eo);
  if (memo != nullptr && !flow.backend) {
    SimulationMemo::Key key{estimate_collectives(wl, coll, s.cluster, eo.copy_placements), eo.compute_slowdown,
                            eo.host_launch, eo.interference};
    if (const SimulationOutput* seen = memo->find(key)) {
      out.sim = *seen;
      if (memo_hits != nullptr) ++*memo_hits;
      return out;
    }
    eo.estimates = &key.estimates;
    out.sim = simulate(wl, compute, coll, s.cluster, eo);
    memo->remember(std::move(key), out.sim);
    return out;
  }
  out.sim = simulate(wl, compute, coll, s.cluster, eo);
  if (flow.backend) {
    out.flows = flow.backend->stats().flows;
    if (with_faults) {  // the fault-free baseline is not reported
      link_usage(flow, out.sim.makespan, out);
      if (const PacketNetwork* packets = flow.backend->packet_network()) {
        out.congestion = congestion_of(flow, *packets);
        if (options.want_trace) {
          out.counters = port_counters(flow, *packets);
          rate_counters(flow, *packets, 16, out.counters);
        }
        if (options.want_rates) out.rates = rate_rows(flow, *packets);
        out.rates_truncated = packets->rate_samples_truncated();
        if (options.want_queues) out.queues = queue_rows(flow, *packets);
        if (options.want_pauses) out.pauses = pause_rows(flow, *packets);
      }
    }
  }
  return out;
}

// NCCL_DEBUG=INFO: the log of every distinct communicator (groups whose placement gives the same lines are one),
// each after a line naming the first group it belongs to.
std::vector<std::string> nccl_log_of(const Scenario& s, const Workload& wl) {
  const auto subsystems = nccl_debug_subsystems(s.nccl.env);
  if (!subsystems) return {};
  const NcclAnalyticalModel nccl(s.cluster, s.nccl.env);
  std::vector<std::string> out;
  std::set<std::vector<std::string>> seen;
  for (const CommGroup& g : wl.groups) {
    if (g.ranks.size() <= 1) continue;
    const GroupPlacement where = GroupPlacement::of(g.ranks, s.cluster);
    std::vector<std::string> lines = nccl_debug_lines(*nccl.communicator(where), *nccl.tuning(where), *subsystems);
    if (!seen.insert(lines).second) continue;
    out.push_back(fmt::format(
        "# trainsim: the {} communicator of {} ranks ({}{}) and those placed like it", to_string(g.kind),
        g.ranks.size(), fmt::join(g.ranks.begin(), g.ranks.begin() + std::min<std::size_t>(g.ranks.size(), 8), ","),
        g.ranks.size() > 8 ? ",..." : ""));
    for (std::string& l : lines) out.push_back("NCCL INFO " + std::move(l));
  }
  return out;
}

}  // namespace

// What a run builds before it simulates: the checks, the memory model, the workload and the compute model. Named
// outside the anonymous namespace: PreparedJobCache::Entry holds one.
namespace api_detail {
struct PreparedJob {
  MemoryUsage memory;
  WorkloadOptions wo;
  Workload wl;
  std::unique_ptr<ComputeModel> compute;
  EnginePlan engine_plan;  // of wl, compute and the scenario's host launch cost
};
}  // namespace api_detail

namespace {

using api_detail::PreparedJob;

void check_trace_ranks_imported(const Workload& wl, const RunOptions& options) {
  if (!options.want_trace) return;
  for (int wanted : options.trace_ranks)
    if (std::none_of(wl.ranks.begin(), wl.ranks.end(), [&](const RankProgram& p) { return p.rank == wanted; }))
      throw Error(fmt::format("--trace-ranks: rank {} has no trace in {}", wanted, options.workload_file));
}

PreparedJob prepare_job(const Scenario& s, const RunOptions& options) {
  validate_run_options(s);
  PreparedJob job;
  if (!options.workload_file.empty()) {  // the file's workload: no model to estimate memory or work from
    if (!s.has_training_job && !s.faults.empty())
      throw ScenarioError(s.file, "faults",
                          "faults place ranks by the scenario's parallel layout: a workload file runs with faults only "
                          "on a scenario with a model block");
    job.wo.per_rank = options.per_rank || s.simulation.per_rank;
    job.wl = read_workload_file(options.workload_file, s, job.wo);
    // With every rank traced (a Chakra directory of the whole job), no timeline stands for others.
    if (static_cast<int>(job.wl.ranks.size()) == s.cluster.num_gpus) job.wo.per_rank = true;
    check_trace_ranks_imported(job.wl, options);
    job.compute = make_compute_model(s);
    job.engine_plan = plan_engine(job.wl, *job.compute, from_microseconds(s.compute.host_launch_us));
    return job;
  }
  job.memory = memory_usage(s);
  if (!job.memory.fits && !options.allow_oom) {
    const auto& m = job.memory;
    throw OutOfMemoryError(fmt::format(
        "{}: does not fit: pipeline stage {} needs {:.1f} GiB per GPU of {:.1f} GiB (weights {:.1f}, grads {:.1f}, "
        "optimizer {:.1f}, activations {:.1f}, other {:.1f}); use --allow-oom to simulate anyway",
        s.file, m.worst_stage, m.peak, m.capacity, m.weights, m.grads, m.optimizer, m.activations, m.other));
  }
  WorkloadOptions& wo = job.wo;
  wo.per_rank = options.per_rank || s.simulation.per_rank;
  // Every rank's program is held in memory; beyond this the per-rank check would exhaust it
  // (about 40 bytes per op, tens of thousands of ops per rank).
  constexpr int kMaxPerRankWorld = 4096;
  if (wo.per_rank && s.cluster.num_gpus > kMaxPerRankWorld)
    throw ScenarioError(s.file, "simulation.per_rank",
                        fmt::format("simulating every rank is limited to {} GPUs (this job has {}); the default "
                                    "simulates one rank per pipeline stage, which is exact on a symmetric fabric",
                                    kMaxPerRankWorld, s.cluster.num_gpus));
  if (options.want_trace && !options.trace_ranks.empty()) {
    const auto sim = simulated_ranks(s, wo);
    for (int wanted : options.trace_ranks) {
      if (!std::binary_search(sim.begin(), sim.end(), wanted)) {
        std::vector<std::string> names;
        for (int x : sim) names.push_back(std::to_string(x));
        throw Error(fmt::format("--trace-ranks: rank {} is not simulated; simulated ranks: {}{}", wanted,
                                fmt::join(names.begin(), names.begin() + std::min<std::size_t>(names.size(), 32), ","),
                                names.size() > 32 ? ",... (use --per-rank to simulate every rank)" : ""));
      }
    }
  }
  // Before anything is built: a runaway value (tokens typed as sequences) is refused here, in
  // microseconds, instead of filling memory.
  check_work_limit(s, estimate_work(s, wo.per_rank));
  job.wl = generate_workload(s, wo);
  job.compute = make_compute_model(s);
  job.engine_plan = plan_engine(job.wl, *job.compute, from_microseconds(s.compute.host_launch_us));
  return job;
}

// A lower bound on the iteration: a rank's compute stream runs its kernels one after another, each at least as long
// as alone (interference only slows them), so no schedule ends before the busiest rank's sum.
SimTime compute_stream_lower_bound(const Workload& wl, const ComputeModel& compute) {
  std::vector<SimTime> kernel_time(wl.kernels.size());
  for (std::size_t k = 0; k < wl.kernels.size(); ++k) kernel_time[k] = compute.time(wl.kernels[k]).time;
  SimTime worst = 0;
  for (const RankProgram& p : wl.ranks) {
    SimTime sum = 0;
    for (const Op& op : p.ops)
      if (op.type == Op::Type::Compute) sum += kernel_time[op.desc];
    worst = std::max(worst, sum);
  }
  return worst;
}

// RunOptions::give_up_above_s: a job whose compute kernels alone take longer than the limit is refused before it
// is simulated (a search skips it). Only fault-free runs are checked.
void refuse_slower_than_limit(const Scenario& s, const PreparedJob& job, const RunOptions& options) {
  if (!std::isfinite(options.give_up_above_s) || !s.faults.empty()) return;
  const double bound = to_seconds(compute_stream_lower_bound(job.wl, *job.compute));
  if (bound > options.give_up_above_s)
    throw SlowerThanLimitError(fmt::format("{}: the compute kernels alone take {:.6g} s per iteration on one rank, "
                                           "more than the limit of {:.6g} s",
                                           s.file, bound, options.give_up_above_s),
                               bound);
}

// With faults, the iteration once more without them (run 2 of 2), to report how much the faults slow it down.
FaultImpact fault_impact(const Scenario& s, const PreparedJob& job, const CollectiveModel& coll,
                         const SimulationOutput& faulty, const RunOptions& options) {
  const Simulated clean =
      simulate_job(s, job.wl, *job.compute, &job.engine_plan, coll, job.wo.per_rank, false, {2, 2}, options);
  FaultImpact fi;
  fi.faults = static_cast<int>(s.faults.size());
  fi.fault_free_iteration_time_s = to_seconds(clean.sim.makespan);
  fi.slowdown =
      clean.sim.makespan > 0 ? static_cast<double>(faulty.makespan) / static_cast<double>(clean.sim.makespan) : 1;
  return fi;
}

// The network's side of the reported run (links, congestion, queue tracks) and NCCL's debug log, moved into the
// output.
void move_network_details(const Scenario& s, const Workload& wl, Simulated& run, RunOutput& out) {
  out.links = std::move(run.links);
  out.nccl_log = nccl_log_of(s, wl);
  out.result.hot_links = std::move(run.hot_links);
  out.result.congestion = std::move(run.congestion);
  out.counters = std::move(run.counters);
  out.queues = std::move(run.queues);
  out.pauses = std::move(run.pauses);
  out.rates = std::move(run.rates);
  if (run.rates_truncated)
    out.result.warnings.push_back(
        {"rates", fmt::format("the flows' rates changed more than {} times: the rate list and tracks end at the "
                              "{}th change",
                              PacketNetwork::kMaxRateSamples, PacketNetwork::kMaxRateSamples)});
}

// The last progress report: every run done.
void report_done(const RunOptions& options, int runs, const SimulationOutput& sim) {
  if (!options.progress) return;
  RunProgress done;
  done.stage = RunProgress::Stage::Done;
  done.run = done.runs = runs;
  done.simulated_s = to_seconds(sim.makespan);
  done.events = sim.events;
  done.fraction = 1;
  options.progress(done);
}

// What was simulated: the scenario, model, GPU, precision and parallel degrees.
void describe_job(const Scenario& s, RunResult& r) {
  const auto& p = s.parallelism;
  r.scenario = s.name;
  r.model_name = s.model.name;
  r.gpu_name = s.cluster.gpu.name;
  r.precision = to_string(s.training.precision);
  r.num_gpus = s.cluster.num_gpus;
  r.tensor = p.tensor;
  r.pipeline = p.pipeline;
  r.data = p.data;
  r.context = p.context;
  r.micro_batches = s.has_training_job ? s.micro_batches_per_iteration() : 0;  // none without a model block
  r.expert = p.expert;
  r.expert_tensor = p.expert_tensor;
  r.virtual_pipeline = p.virtual_pipeline;
}

// A workload file's job on a scenario without a model block: the parallel sizes are what the file states (an AICB
// header) or unknown (a Chakra trace); nothing counts tokens or FLOPs, and the training block, precision included,
// is not read.
void describe_file_job(const Workload& wl, RunResult& r) {
  r.model_name.clear();
  r.precision.clear();
  r.throughput_known = false;
  const auto& stated = wl.stated_parallelism;
  r.parallelism_known = stated.has_value();
  if (!stated) return;
  r.tensor = stated->tensor;
  r.pipeline = stated->pipeline;
  r.data = stated->data;
  r.context = 1;  // an AICB file cannot state context parallelism: its job has none
  r.expert = stated->expert;
  r.expert_tensor = stated->tensor;  // the import's expert layout: expert TP as TP (ParallelPlan's 0)
  r.virtual_pipeline = stated->virtual_pipeline;
  r.micro_batches = stated->micro_batches;
}

// Flow and packet levels lay a communicator out as equal nodes; a group whose ranks sit unevenly on NCCL's nodes
// (hosts, or NVLink domains spanning hosts, e.g. TP 16 on 72-GPU racks) has its collectives priced by NCCL's cost
// model instead (FlowBackend::uneven). Said once per kind of group.
void add_uneven_group_warnings(const Scenario& s, const Workload& wl, RunResult& r) {
  if (s.simulation.network_model == NetworkModel::Analytical) return;
  std::set<GroupKind> said;
  for (const CommGroup& g : wl.groups) {
    if (g.ranks.size() <= 1 || said.contains(g.kind)) continue;
    const GroupPlacement where = GroupPlacement::of(g.ranks, s.cluster);
    if (where.uniform) continue;
    said.insert(g.kind);
    const bool domains = s.cluster.scale_up.domain_size > s.cluster.gpus_per_node;
    r.warnings.push_back(
        {"simulation.network_model",
         fmt::format("the {} groups spread their {} ranks unevenly over {} {} (up to {} on one); their collectives "
                     "are priced by NCCL's cost model, not flow by flow",
                     to_string(g.kind), g.ranks.size(), where.nodes, domains ? "NVLink domains" : "nodes",
                     where.max_per_node)});
  }
}

// The values the scenario inferred and its warnings, plus the run's own: a graph dump a run does not write, and a
// fabric the analytical model prices although it cannot be built.
void add_inferred_values_and_warnings(const Scenario& s, RunResult& r) {
  for (const InferredValue& v : s.inferred) r.inferred.push_back({v.key, v.value, v.why});
  // training.attention_kernel: auto prices cuDNN's fused attention on Hopper and later (the spec's default, what
  // Transformer Engine runs). A plain PyTorch model (framework fsdp) calls F.scaled_dot_product_attention, which on
  // those GPUs picks FlashAttention-2 before torch 2.9 (cuDNN is last in its order from 2.5.1: pytorch/pytorch
  // #138522, #162073), about half cuDNN's speed at long sequences; the report says which one was priced.
  const ArchFamily arch = classify_arch(s.cluster.gpu);
  if (s.parallelism.framework == Framework::FSDP && s.training.flash_attention &&
      s.training.attention_kernel == AttentionKernel::Auto &&
      (arch == ArchFamily::Hopper || arch == ArchFamily::Blackwell))
    r.inferred.push_back({"training.attention_kernel", "cudnn",
                          fmt::format("not given; auto prices cuDNN's fused attention on {}. A plain PyTorch model's "
                                      "scaled_dot_product_attention picks FlashAttention-2 there before torch 2.9 "
                                      "(about half as fast at long sequences): set flash2 for such a job",
                                      to_string(arch))});
  for (const ScenarioWarning& w : s.warnings) r.warnings.push_back({w.key, w.message});
  if (const auto dump = s.nccl.env.find("NCCL_GRAPH_DUMP_FILE"); dump != s.nccl.env.end() && !dump->second.empty())
    r.warnings.push_back({"nccl.NCCL_GRAPH_DUMP_FILE",
                          "not written by a run, whose job has several communicators: trainsim nccl-test writes the "
                          "test communicator's graphs"});
  // The flow level refuses a fabric it cannot build. The analytical run goes ahead with a warning rather than the
  // same error, because published validation cases (dgxc-llama3.1-405b-2304h100-*: 2 tiers of radix 64 for 72
  // leaves) describe such fabrics and their results must not change until they are corrected.
  if (s.simulation.network_model == NetworkModel::Analytical)
    if (const auto e = fabric_problem(s.cluster))
      r.warnings.push_back({e->key(), "the fabric cannot be built: " + e->detail() +
                                          " (the analytical model prices collectives from each node's NICs without "
                                          "the fabric; network_model: flow refuses this cluster)"});
}

// Throughput and utilisation of an iteration of `iteration_s` seconds: tokens/s, TFLOPs per GPU, MFU and HFU.
void add_throughput(const Scenario& s, double iteration_s, RunResult& r) {
  const double t = iteration_s;
  const auto& p = s.parallelism;
  r.seq_length = s.model.seq_length;
  r.global_batch_size = s.training.global_batch_size;
  r.model_flops_per_iteration = model_flops_per_iteration(s.model, s.training.global_batch_size, p.tensor);
  r.hardware_flops_per_iteration =
      hardware_flops_per_iteration(s.model, s.training.global_batch_size, p.tensor, s.training.recompute,
                                   recomputed_layers_total(s), s.training.recompute_modules);
  r.peak_tflops = s.cluster.gpu.peak_tflops(s.training.precision);
  r.iteration_time_s = t;
  const double tokens = static_cast<double>(s.training.global_batch_size) * static_cast<double>(s.model.seq_length);
  const double gpus = static_cast<double>(s.cluster.num_gpus);
  r.tokens_per_s = t > 0 ? tokens / t : 0;
  r.tokens_per_s_per_gpu = r.tokens_per_s / gpus;
  r.tflops_per_gpu = t > 0 ? r.model_flops_per_iteration / t / gpus / 1e12 : 0;
  r.mfu = r.tflops_per_gpu / r.peak_tflops;
  r.hfu = t > 0 ? r.hardware_flops_per_iteration / t / gpus / 1e12 / r.peak_tflops : 0;
}

// Where the critical rank (found by find_critical_rank) spends the iteration: its breakdown, its
// collectives, the sources of its kernel times and, on request, the explanation.
void add_critical_rank_statistics(const Scenario& s, const Workload& wl, const SimulationOutput& sim,
                                  const CriticalRank& critical, const RunOptions& options, RunResult& r) {
  const double t = to_seconds(sim.makespan);
  const std::size_t ci = critical.index;
  r.critical_rank = wl.ranks[ci].rank;
  r.breakdown = critical.breakdown;
  r.comm = compute_comm_table(wl, sim, ci);
  if (s.compute.database) r.compute_sources = compute_sources(s, wl, sim);
  if (options.explain)
    r.explain = explain_rank(
        wl, sim, ci, t, s.simulation.network_model == NetworkModel::Analytical ? "nccl-model" : network_model_name(s));
}

// What the simulation cost and which models it used (the wall-clock time is set last, by run_scenario).
void add_simulation_statistics(const Scenario& s, const PreparedJob& job, const Simulated& run, std::size_t ci,
                               RunResult& r) {
  const Workload& wl = job.wl;
  const SimulationOutput& sim = run.sim;
  r.simulation.events = sim.events;
  r.simulation.flows = run.flows;
  r.simulation.network_model = network_model_name(s);
  r.simulation.simulated_ranks = static_cast<std::int64_t>(wl.ranks.size());
  r.simulation.ops = static_cast<std::int64_t>(wl.op_count());
  r.simulation.compute_model = job.compute->describe();
  r.simulation.interference_s = to_seconds(sim.interference[ci]);
  r.simulation.host_launch_us = s.compute.host_launch_us;
  for (const Op& op : wl.ranks[ci].ops) r.simulation.host_launches += op.launches;
}

// RunOptions::want_trace: one span per op of every traced rank (all simulated ranks unless --trace-ranks), with the
// stream names.
void add_trace_spans(const Workload& wl, const SimulationOutput& sim, const RunOptions& options, RunOutput& out) {
  for (int st = 0; st < kNumStreams; ++st) out.stream_names.emplace_back(to_string(static_cast<Stream>(st)));
  for (std::size_t ri = 0; ri < wl.ranks.size(); ++ri) {
    const auto& prog = wl.ranks[ri];
    if (!options.trace_ranks.empty() &&
        std::find(options.trace_ranks.begin(), options.trace_ranks.end(), prog.rank) == options.trace_ranks.end())
      continue;
    const auto& tl = sim.timelines[ri];
    for (std::size_t i = 0; i < prog.ops.size(); ++i) {
      const Op& op = prog.ops[i];
      TraceSpan sp;
      sp.pid = prog.rank;
      sp.tid = static_cast<int>(op.stream);
      sp.name = wl.names[op.name];
      sp.category = trace_category(op, wl);
      // The trace is written to the nanosecond: round the start and the end, not the duration, so
      // that a span never ends after the next one on its stream starts.
      const SimTime start_ns = to_nanoseconds_rounded(tl.start[i]), end_ns = to_nanoseconds_rounded(tl.end[i]);
      sp.start_us = static_cast<double>(start_ns) / 1e3;
      sp.dur_us = static_cast<double>(end_ns - start_ns) / 1e3;
      sp.layer = op.layer;
      sp.micro_batch = op.micro_batch;
      out.trace.push_back(std::move(sp));
    }
  }
}

// The job of `s` under `options`, given a cache (RunOptions::reuse, whose entry and count these are): from it when
// an earlier run left the same job there (same workload fingerprint, same options prepare_job reads), else built and
// left there; built into `own` when the run cannot share it (a workload file, a trace). `memo`: the simulations the
// cache keeps of the job, null for a job built into `own`.
const PreparedJob& prepared_job(const Scenario& s, const RunOptions& options, PreparedJob& own,
                                std::unique_ptr<PreparedJobCache::Entry>& entry, int& reused, SimulationMemo*& memo);

}  // namespace

struct PreparedJobCache::Entry {
  std::string key;
  api_detail::PreparedJob job;
  SimulationMemo simulations;  // of this job, for the next points that change none of its collectives' estimates
};

PreparedJobCache::PreparedJobCache() = default;
PreparedJobCache::~PreparedJobCache() = default;

namespace {

const PreparedJob& prepared_job(const Scenario& s, const RunOptions& options, PreparedJob& own,
                                std::unique_ptr<PreparedJobCache::Entry>& entry, int& reused, SimulationMemo*& memo) {
  memo = nullptr;
  const bool cacheable = !s.workload_fingerprint.empty() && options.workload_file.empty() && !options.want_trace;
  if (!cacheable) {
    own = prepare_job(s, options);
    return own;
  }
  std::string key = fmt::format("{}|{}|", options.per_rank ? 1 : 0, options.allow_oom ? 1 : 0);
  key += s.workload_fingerprint;
  if (entry && entry->key == key) {  // the checks prepare_job made hold: they read no network-only key
    ++reused;
    memo = &entry->simulations;
    return entry->job;
  }
  entry.reset();  // one job held at a time: the old one goes before the new one is built
  auto fresh = std::make_unique<PreparedJobCache::Entry>();
  fresh->job = prepare_job(s, options);
  fresh->key = std::move(key);
  entry = std::move(fresh);
  memo = &entry->simulations;
  return entry->job;
}

}  // namespace

double compute_lower_bound_s(const Scenario& s, bool allow_oom) {
  RunOptions options;
  options.allow_oom = allow_oom;
  const PreparedJob job = prepare_job(s, options);
  // A straggler (faults: gpu_slow) stretches its rank's kernels by its factor; a factor below 1 would make the sum
  // no bound, so the slowest factor under 1 scales it down.
  double scale = 1;
  for (double f : compute_slowdown(s, job.wl)) scale = std::min(scale, f);
  return to_seconds(compute_stream_lower_bound(job.wl, *job.compute)) * scale;
}

RunOutput run_scenario(const Scenario& s, const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  PreparedJob own;
  SimulationMemo* memo = nullptr;
  const PreparedJob& job = options.reuse
                               ? prepared_job(s, options, own, options.reuse->entry_, options.reuse->reused_, memo)
                               : (own = prepare_job(s, options));
  refuse_slower_than_limit(s, job, options);
  RunOutput out;
  RunResult& r = out.result;
  r.memory = job.memory;

  // Simulate: the iteration with the scenario's faults (the one reported), then without them when there are any.
  const auto coll = make_collective_model(s.cluster, s.nccl.env, s.algorithms);
  const int runs = s.faults.empty() ? 1 : 2;
  Simulated run = simulate_job(s, job.wl, *job.compute, &job.engine_plan, *coll, job.wo.per_rank, true, {1, runs},
                               options, memo, options.reuse ? &options.reuse->simulations_reused_ : nullptr);
  if (!s.faults.empty()) r.faults = fault_impact(s, job, *coll, run.sim, options);
  move_network_details(s, job.wl, run, out);
  report_done(options, runs, run.sim);

  // Assemble the result.
  const CriticalRank critical = find_critical_rank(job.wl, run.sim);
  describe_job(s, r);
  add_inferred_values_and_warnings(s, r);
  add_uneven_group_warnings(s, job.wl, r);
  if (s.has_training_job) {
    add_throughput(s, to_seconds(run.sim.makespan), r);
  } else {  // a workload file on a scenario without a model: no tokens or FLOPs to count
    describe_file_job(job.wl, r);
    r.iteration_time_s = to_seconds(run.sim.makespan);
  }
  add_critical_rank_statistics(s, job.wl, run.sim, critical, options, r);
  if (s.has_training_job) {  // a file's job has no tokens to count per joule
    std::string why_not;
    r.energy = iteration_energy(s, r, why_not);
    if (!r.energy) r.warnings.push_back({"power", "no energy per iteration: " + why_not});
  }
  add_simulation_statistics(s, job, run, critical.index, r);
  if (options.want_trace) add_trace_spans(job.wl, run.sim, options, out);
  r.simulation.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

void export_workload(const Scenario& s, const std::string& format, const std::string& path, bool per_rank) {
  const auto f = workload_file_format_named(format);
  if (!f)
    throw Error(
        fmt::format("--format {}: unknown; known formats: {}", format, fmt::join(workload_file_format_names(), ", ")));
  RunOptions options;
  options.per_rank = per_rank;
  options.allow_oom = true;  // the file describes the job whether or not it fits
  const PreparedJob job = prepare_job(s, options);
  // Both formats state compute times: those of a fault-free simulation of the iteration (the scenario's faults apply
  // again when the file runs).
  const auto coll = make_collective_model(s.cluster, s.nccl.env, s.algorithms);
  const Simulated run =
      simulate_job(s, job.wl, *job.compute, &job.engine_plan, *coll, job.wo.per_rank, false, {1, 1}, options);
  WorkloadOpDurations durations;
  for (const RankTimeline& tl : run.sim.timelines) {
    auto& d = durations.emplace_back(tl.start.size());
    for (std::size_t i = 0; i < d.size(); ++i) d[i] = tl.end[i] - tl.start[i];
  }
  write_workload_file(*f, s, job.wl, path, durations);
}

std::vector<CollectivePointResult> run_collective_benchmark(const Scenario& s) {
  if (!s.collective) throw Error(s.file + ": no collective block");
  check_fabric_buildable(s.file, s.cluster);
  const auto coll = make_collective_model(s.cluster, s.nccl.env, s.algorithms);
  std::vector<int> ranks(static_cast<std::size_t>(s.cluster.num_gpus));
  for (int i = 0; i < s.cluster.num_gpus; ++i) ranks[static_cast<std::size_t>(i)] = i;
  const auto where = GroupPlacement::of(ranks, s.cluster);
  const CollKind kind = s.collective->op;
  std::vector<CollectivePointResult> out;
  for (const auto& pt : s.collective->points) {
    // A point whose size the source does not state is evaluated at 1 GiB, the large-message regime
    // such statements describe.
    const std::int64_t size = pt.size.value_or(std::int64_t{1} << 30);
    const auto est = coll->estimate(kind, size, where);
    CollectivePointResult res;
    res.size = size;
    res.measured_busbw_GBps = pt.busbw_GBps;
    res.simulated_busbw_GBps = est.busbw_GBps;
    res.time_us = to_microseconds(est.time);
    res.algorithm = to_string(est.algorithm);
    res.protocol = to_string(est.protocol);
    out.push_back(res);
  }
  return out;
}

}  // namespace trainsim
