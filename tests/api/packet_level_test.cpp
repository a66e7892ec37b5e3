// simulation.network_model: packet end to end: the routed transfers of each collective move as RoCE packets
// (network/packet/) on the same fabric the flow level uses, the report gains a congestion section, and a run
// too large for packets is refused before it starts, naming the key.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "scenario/scenario_loader.hpp"
#include "trainsim/trainsim.hpp"

namespace trainsim {
namespace {

// A small data-parallel job over two 8-GPU nodes: its gradient all-reduce crosses the fabric.
const char* kSmallJob = R"(
model:
  family: llama
  num_layers: 2
  hidden_size: 512
  num_attention_heads: 8
  ffn_hidden_size: 2048
  vocab_size: 4096
  seq_length: 1024
training:
  global_batch_size: 16
  micro_batch_size: 1
  precision: bf16
parallelism:
  tensor: 1
  pipeline: 1
cluster:
  gpu: H100-SXM
  num_gpus: 16
  gpus_per_node: 8
  nics_per_node: 8
  nic_gbps: 400
  network:
    topology: fat-tree
)";

// Each setting (with `also` set beside it) is refused by a message naming its key.
void expect_each_refused(const std::vector<std::pair<std::string, std::string>>& bad,
                         const std::vector<std::string>& also = {}) {
  for (const auto& [set, key] : bad) {
    std::vector<std::string> sets = also;
    sets.push_back(set);
    try {
      parse_scenario(kSmallJob, "small.yaml", sets);
      ADD_FAILURE() << "accepted " << set;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << set << ": " << e.what();
    }
  }
}

RunResult run_small_job(const std::vector<std::string>& set) {
  return run_scenario(parse_scenario(kSmallJob, "small.yaml", set)).result;
}

TEST(PacketLevel, ASmallJobRunsWithPacketsAndReportsCongestion) {
  const RunResult flow = run_small_job({"simulation.network_model=flow"});
  const RunResult packet = run_small_job({"simulation.network_model=packet"});
  EXPECT_EQ(packet.simulation.network_model, "packet");
  EXPECT_FALSE(flow.congestion.has_value());
  ASSERT_TRUE(packet.congestion.has_value());
  EXPECT_GT(packet.congestion->packets, 1000);
  EXPECT_GT(packet.congestion->transfers, 0);
  EXPECT_LE(packet.congestion->fct_p50_us, packet.congestion->fct_p99_us);
  EXPECT_LE(packet.congestion->fct_p99_us, packet.congestion->fct_max_us);
  // The same transfers on the same links: packets add headers (62 B per 4 KiB) and per-hop store-and-forward.
  EXPECT_NEAR(packet.iteration_time_s / flow.iteration_time_s, 1.0, 0.05);
  EXPECT_GE(packet.iteration_time_s, flow.iteration_time_s * 0.999);
}

// simulation.packet_host_links: delay crosses NVLink and PCIe without queueing. The small job's all-reduce is held
// by its NICs, not inside the nodes: the same packets and the same iteration within 0.1%, still in order (no
// retransmission), and the report says how host links were crossed.
TEST(PacketLevel, HostLinksCrossedAsADelayGiveTheSameIterationHere) {
  const RunResult fifo = run_small_job({"simulation.network_model=packet"});
  const RunResult delay = run_small_job({"simulation.network_model=packet", "simulation.packet_host_links=delay"});
  ASSERT_TRUE(fifo.congestion && delay.congestion);
  EXPECT_EQ(fifo.congestion->host_links, "fifo");
  EXPECT_EQ(delay.congestion->host_links, "delay");
  EXPECT_EQ(delay.congestion->packets, fifo.congestion->packets);
  EXPECT_EQ(delay.congestion->retransmitted_packets, 0);
  EXPECT_NEAR(delay.iteration_time_s / fifo.iteration_time_s, 1.0, 0.001);
  EXPECT_NE(delay.iteration_time_s, fifo.iteration_time_s);  // yet not the same run
}

// nccl-test at packet level: a 64 MiB all-reduce over two nodes reaches about the flow level's bus bandwidth.
TEST(PacketLevel, NcclTestRunsOnPackets) {
  NcclTestOptions o;
  o.op = CollectiveOp::AllReduce;
  o.min_bytes = o.max_bytes = 64 << 20;
  const auto table = [&](const char* model) {
    return run_nccl_test(parse_scenario(kSmallJob, "small.yaml", {std::string("simulation.network_model=") + model}),
                         o);
  };
  const NcclTestTable flow = table("flow"), packet = table("packet");
  EXPECT_EQ(packet.network_model, "packet");
  ASSERT_EQ(packet.rows.size(), 1u);
  EXPECT_NEAR(packet.rows[0].busbw_GBps / flow.rows[0].busbw_GBps, 1.0, 0.08);
  EXPECT_LE(packet.rows[0].busbw_GBps, flow.rows[0].busbw_GBps * 1.001);
}

// The small job at packet level on a 4:1 tapered fat-tree, with `more` settings.
RunResult run_tapered(const std::vector<std::string>& more = {}) {
  std::vector<std::string> set = {"simulation.network_model=packet", "cluster.network.switch_radix=16",
                                  "cluster.network.oversubscription=4"};
  set.insert(set.end(), more.begin(), more.end());
  return run_small_job(set);
}

// The gradient all-reduce of a 4:1 tapered fabric congests its uplinks: lossless RoCE pauses and drops nothing,
// lossy RoCE drops and retransmits, and both finish.
TEST(PacketLevel, LosslessPausesWhereLossyDrops) {
  const RunResult a = run_tapered(), b = run_tapered({"cluster.network.roce.lossless=false"});
  ASSERT_TRUE(a.congestion && b.congestion);
  EXPECT_GT(a.congestion->pause_events, 0);
  EXPECT_EQ(a.congestion->drops, 0);
  EXPECT_GT(b.congestion->drops, 0);
  EXPECT_GT(b.congestion->retransmitted_packets, 0);
  EXPECT_EQ(b.congestion->pause_events, 0);
}

// Switch buffers shared by their ports (cluster.network.roce.switch_buffer_mb): the same tapered fabric pauses at
// the dynamic threshold, drops nothing, and the report names the fullest switch and its peak, below the buffer. A
// headroom too small for the links drops even with PFC on and the run still completes; a buffer the headroom fills
// is refused before the run, naming the key.
TEST(PacketLevel, SharedSwitchBuffersPauseAtTheDynamicThreshold) {
  const RunResult a = run_tapered({"cluster.network.roce.switch_buffer_mb=4"});
  ASSERT_TRUE(a.congestion && a.congestion->switch_buffers);
  const auto& sb = *a.congestion->switch_buffers;
  EXPECT_EQ(sb.size_mb, 4);
  EXPECT_GT(sb.peak_kb, 0);
  EXPECT_LE(sb.peak_kb, 4000);
  EXPECT_FALSE(sb.peak_switch.empty());
  EXPECT_EQ(sb.headroom_drops, 0);
  EXPECT_GT(a.congestion->pause_events, 0);
  EXPECT_EQ(a.congestion->drops, 0);
  EXPECT_FALSE(run_tapered().congestion->switch_buffers.has_value());  // per-port limits: no such section

  const RunResult tight =
      run_tapered({"cluster.network.roce.switch_buffer_mb=4", "cluster.network.roce.pfc_headroom_kb=5"});
  ASSERT_TRUE(tight.congestion && tight.congestion->switch_buffers);
  EXPECT_GT(tight.congestion->switch_buffers->headroom_drops, 0);
  EXPECT_EQ(tight.congestion->drops, tight.congestion->switch_buffers->headroom_drops);
  EXPECT_GT(tight.congestion->retransmitted_packets, 0);
  EXPECT_GT(tight.iteration_time_s, a.iteration_time_s);

  try {
    run_tapered({"cluster.network.roce.switch_buffer_mb=0.1"});
    ADD_FAILURE() << "a 0.1 MB buffer beside 16 ports' headroom was accepted";
  } catch (const ScenarioError& e) {
    EXPECT_EQ(e.key(), "cluster.network.roce.switch_buffer_mb");
    EXPECT_NE(std::string(e.what()).find("headroom"), std::string::npos) << e.what();
  }
}

// A 64 MiB all-gather over a 4:1 tapered fabric: with PFC alone the packets move at the flow level's rate (the
// uplinks are the bottleneck either way); DCQCN's rate cuts cost throughput, and its paper's absolute increase
// steps (40 / 400 Mb/s, made for 40 Gb/s ports) more than the NIC-scaled default.
TEST(PacketLevel, DcqcnRateCutsCostThroughputOnATaperedFabric) {
  NcclTestOptions o;
  o.op = CollectiveOp::AllGather;
  o.min_bytes = o.max_bytes = 64 << 20;
  const auto busbw = [&](std::vector<std::string> set) {
    set.push_back("cluster.network.switch_radix=16");
    set.push_back("cluster.network.oversubscription=4");
    return run_nccl_test(parse_scenario(kSmallJob, "small.yaml", set), o).rows.at(0).busbw_GBps;
  };
  const double flow = busbw({"simulation.network_model=flow"});
  const double pfc_only = busbw({"simulation.network_model=packet", "cluster.network.roce.congestion_control=none"});
  const double dcqcn = busbw({"simulation.network_model=packet"});
  const double paper_steps = busbw({"simulation.network_model=packet", "cluster.network.roce.dcqcn_ai_mbps=40",
                                    "cluster.network.roce.dcqcn_hai_mbps=400"});
  EXPECT_NEAR(pfc_only / flow, 1.0, 0.05);
  EXPECT_LT(dcqcn, 0.9 * pfc_only);
  EXPECT_LT(paper_steps, dcqcn);
}

// TIMELY on the same tapered fabric, its RTT thresholds lowered to the microseconds this fabric queues (the paper's
// 50 us is far above them): the senders see the uplinks' queues in their RTTs and cut, without a CNP (switches do
// not mark under TIMELY), and PFC pauses less than with no congestion control; the iteration finishes.
TEST(PacketLevel, TimelyCutsOnRoundTripTimes) {
  const RunResult t = run_tapered({"cluster.network.roce.congestion_control=timely",
                                   "cluster.network.roce.timely_tlow_us=2", "cluster.network.roce.timely_thigh_us=20"});
  const RunResult n = run_tapered({"cluster.network.roce.congestion_control=none"});
  ASSERT_TRUE(t.congestion && n.congestion);
  EXPECT_GT(t.congestion->rate_cuts, 0);
  EXPECT_EQ(t.congestion->cnps, 0);
  EXPECT_EQ(t.congestion->ecn_marks, 0);
  EXPECT_LT(t.congestion->pause_events, n.congestion->pause_events);
  EXPECT_GT(t.iteration_time_s, 0);
}

// simulation.packet_scope: the data-parallel and world calls (every call of this job that leaves a node: the
// gradient reduction and parameter gather, the optimizer's scalars) as packets give the same run as a full
// packet run, the data-parallel calls alone all but the scalars' packets; a scope that takes none of them
// (tensor-parallel calls only, or calls larger than any) leaves the run at flow level with no packet moved.
TEST(PacketLevel, APacketScopeChoosesWhichCallsMoveAsPackets) {
  const RunResult all = run_small_job({"simulation.network_model=packet"});
  const RunResult dp_world =
      run_small_job({"simulation.network_model=packet", "simulation.packet_scope={groups: [dp, world]}"});
  const RunResult dp = run_small_job({"simulation.network_model=packet", "simulation.packet_scope={groups: [dp]}"});
  const RunResult tp = run_small_job({"simulation.network_model=packet", "simulation.packet_scope={groups: [tp]}"});
  const RunResult huge =
      run_small_job({"simulation.network_model=packet", "simulation.packet_scope={min_bytes: 1000000000000}"});
  const RunResult flow = run_small_job({"simulation.network_model=flow"});
  ASSERT_TRUE(all.congestion && dp_world.congestion && dp.congestion && tp.congestion && huge.congestion);
  EXPECT_EQ(dp_world.congestion->packets, all.congestion->packets);
  EXPECT_DOUBLE_EQ(dp_world.iteration_time_s, all.iteration_time_s);
  EXPECT_LT(dp.congestion->packets, all.congestion->packets);
  EXPECT_GT(dp.congestion->packets, 0.99 * static_cast<double>(all.congestion->packets));
  EXPECT_EQ(tp.congestion->packets, 0);
  EXPECT_EQ(huge.congestion->packets, 0);
  EXPECT_DOUBLE_EQ(tp.iteration_time_s, flow.iteration_time_s);
  EXPECT_DOUBLE_EQ(huge.iteration_time_s, flow.iteration_time_s);
}

// Every link's row (--links-csv) carries its packet statistics; their pauses add up to the report's (NVLink and
// PCIe links are never paused) and the worst link's peak queue is the largest of the rows'.
TEST(PacketLevel, LinkRowsCarryTheCongestionOfEachLink) {
  const RunOutput out = run_scenario(parse_scenario(
      kSmallJob, "small.yaml",
      {"simulation.network_model=packet", "cluster.network.switch_radix=16", "cluster.network.oversubscription=4"}));
  ASSERT_TRUE(out.result.congestion.has_value());
  ASSERT_FALSE(out.links.empty());
  std::int64_t pauses = 0;
  double deepest = 0;
  for (const LinkUsageRow& l : out.links) {
    EXPECT_TRUE(l.packet) << l.name;
    pauses += l.pause_events;
    if (l.kind != "nvlink" && l.kind != "pcie") deepest = std::max(deepest, l.max_queue_kb);
  }
  EXPECT_GT(pauses, 0);
  EXPECT_EQ(pauses, out.result.congestion->pause_events);
  ASSERT_FALSE(out.result.congestion->worst_links.empty());
  double worst = 0;
  for (const CongestionLinkRow& w : out.result.congestion->worst_links) worst = std::max(worst, w.max_queue_kb);
  EXPECT_LE(worst, deepest);
  EXPECT_GT(worst, 0);
}

// The trace's counter tracks: the deepest queues (KB), the ports PFC held longest (1 while paused) and the NIC ports
// whose flows changed rate most often (the sum of their flows' rates, Gb/s), at most 16 of each, each in time order
// and back to 0 at the end of the iteration's traffic; the pause tracks hold exactly the intervals
// RunOptions::want_pauses lists for those ports, the rate tracks the running sum of what RunOptions::want_rates lists.
TEST(PacketLevel, TheTraceShowsTheDeepestQueuesLongestPausesAndRatesOverTime) {
  RunOptions o;
  o.want_trace = true;
  o.want_pauses = true;
  o.want_rates = true;
  const RunOutput out = run_scenario(
      parse_scenario(
          kSmallJob, "small.yaml",
          {"simulation.network_model=packet", "cluster.network.switch_radix=16", "cluster.network.oversubscription=4"}),
      o);
  ASSERT_FALSE(out.counters.empty());
  std::map<std::string, std::vector<TraceCounter>> tracks;
  for (const TraceCounter& c : out.counters) tracks[c.name].push_back(c);
  std::size_t queue_tracks = 0, pause_tracks = 0, rate_tracks = 0;
  for (const auto& [name, points] : tracks) {
    const bool queue = name.rfind("queue ", 0) == 0, paused = name.rfind("paused ", 0) == 0,
               rate = name.rfind("rate ", 0) == 0;
    EXPECT_TRUE(queue || paused || rate) << name;
    queue_tracks += queue;
    pause_tracks += paused;
    rate_tracks += rate;
    for (std::size_t i = 1; i < points.size(); ++i) EXPECT_LE(points[i - 1].ts_us, points[i].ts_us) << name;
    EXPECT_NEAR(points.back().value, 0.0, 1e-9) << name;
    for (const TraceCounter& c : points) EXPECT_GE(c.value, 0.0) << name;
    if (rate) {
      // The sum of the rates its flows last had, after all the changes listed at each instant.
      std::map<std::uint64_t, double> current;
      std::map<double, double> total_at;
      double total = 0;
      for (const RateRow& r : out.rates) {
        if ("rate " + r.link != name) continue;
        total += r.rate_gbps - current[r.flow];
        current[r.flow] = r.rate_gbps;
        total_at[r.time_us] = total;
      }
      ASSERT_EQ(points.size(), total_at.size()) << name;
      std::size_t i = 0;
      for (const auto& [t, gbps] : total_at) {
        EXPECT_EQ(points[i].ts_us, t) << name;
        EXPECT_NEAR(points[i].value, std::max(0.0, gbps), 1e-6) << name;
        ++i;
      }
      continue;
    }
    if (!paused) continue;
    // On and off in turn, matching the port's rows of the pause list.
    std::vector<PauseRow> rows;
    for (const PauseRow& p : out.pauses)
      if ("paused " + p.link == name) rows.push_back(p);
    ASSERT_EQ(points.size(), 2 * rows.size()) << name;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      EXPECT_EQ(points[2 * i].value, 1.0) << name;
      EXPECT_EQ(points[2 * i].ts_us, rows[i].start_us) << name;
      EXPECT_EQ(points[2 * i + 1].ts_us, rows[i].end_us) << name;
    }
  }
  EXPECT_GT(queue_tracks, 0u);
  EXPECT_LE(queue_tracks, 16u);
  EXPECT_GT(pause_tracks, 0u);
  EXPECT_LE(pause_tracks, 16u);
  EXPECT_GT(rate_tracks, 0u);
  EXPECT_LE(rate_tracks, 16u);
  RunOptions no_trace;
  EXPECT_TRUE(run_scenario(parse_scenario(kSmallJob, "small.yaml", {"simulation.network_model=packet"}), no_trace)
                  .counters.empty());
}

// A 16 MB all-to-all over 32 GPUs on four leaves and two spines: hashed per flow, flows collide on the spines;
// adaptive routing moves packets off the port that queues, spraying spreads every flow over both spines. Each is the
// same run after run.
TEST(PacketLevel, SprayingAndAdaptiveRoutingSpreadAnAllToAllOverTheSpines) {
  const auto busbw = [](const char* routing) {
    const Scenario s =
        load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/gpt3-175b-1024-h100.yaml",
                      {"cluster.network.topology=fat-tree", "cluster.network.switch_radix=16",
                       "simulation.network_model=packet", std::string("cluster.network.routing=") + routing});
    NcclTestOptions o;
    o.op = CollectiveOp::AllToAll;
    o.min_bytes = o.max_bytes = 16 << 20;
    o.gpus = 32;
    const NcclTestTable t = run_nccl_test(s, o);
    EXPECT_EQ(t.rows.size(), 1u);
    return t.rows.front().busbw_GBps;
  };
  const double ecmp = busbw("ecmp"), adaptive = busbw("adaptive"), spray = busbw("spray");
  EXPECT_GT(adaptive, 1.05 * ecmp);
  EXPECT_GT(spray, 1.15 * ecmp);
  EXPECT_EQ(busbw("spray"), spray);
  EXPECT_EQ(busbw("adaptive"), adaptive);
}

TEST(PacketLevel, AnIterationTooLargeForPacketsIsRefusedNamingTheKey) {
  const Scenario s = load_scenario(std::string(TRAINSIM_SOURCE_DIR) + "/examples/gpt3-175b-1024-h100.yaml",
                                   {"simulation.network_model=packet"});
  try {
    run_scenario(s);
    FAIL() << "a GPT-3 175B iteration on 1,024 GPUs ran at packet level";
  } catch (const ScenarioError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("simulation.network_model"), std::string::npos) << what;
    EXPECT_NE(what.find("max_packets"), std::string::npos) << what;
  }
}

TEST(PacketLevel, PacketScopeKeysAreChecked) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"simulation.packet_scope={groups: [dpp]}", "simulation.packet_scope.groups[0]"},
      {"simulation.packet_scope={groups: []}", "simulation.packet_scope.groups"},
      {"simulation.packet_scope={min_bytes: -1}", "simulation.packet_scope.min_bytes"},
      {"simulation.packet_scope={size: 1}", "simulation.packet_scope.size"},
  };
  expect_each_refused(bad, {"simulation.network_model=packet"});
}

// With a shared switch buffer, per-port limits would be ignored at every switch: refused, naming them; the shared
// buffer's own settings are checked.
TEST(PacketLevel, SwitchBufferKeysAreChecked) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"cluster.network.roce.pfc_xoff_kb=300", "cluster.network.roce.pfc_xoff_kb"},
      {"cluster.network.roce.pfc_xon_kb=100", "cluster.network.roce.pfc_xon_kb"},
      {"cluster.network.roce.port_buffer_mb=2", "cluster.network.roce.port_buffer_mb"},
      {"cluster.network.roce.buffer_alpha=0", "cluster.network.roce.buffer_alpha"},
      {"cluster.network.roce.buffer_alpha=100", "cluster.network.roce.buffer_alpha"},
      {"cluster.network.roce.pfc_headroom_kb=-3", "cluster.network.roce.pfc_headroom_kb"},
      {"cluster.network.roce.pfc_headroom_kb=lots", "cluster.network.roce.pfc_headroom_kb"},
      {"cluster.network.roce.pfc_headroom_kb=1e300", "cluster.network.roce.pfc_headroom_kb"},
  };
  expect_each_refused(bad, {"cluster.network.roce.switch_buffer_mb=32"});
  EXPECT_NO_THROW(parse_scenario(kSmallJob, "small.yaml",
                                 {"cluster.network.roce.switch_buffer_mb=32", "cluster.network.roce.buffer_alpha=0.5",
                                  "cluster.network.roce.pfc_headroom_kb=auto"}));
}

TEST(PacketLevel, RoceKeysAreChecked) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"cluster.network.roce.mtu_bytes=3000", "cluster.network.roce.mtu_bytes"},
      {"cluster.network.roce.pfc_xon_kb=300", "cluster.network.roce.pfc_xon_kb"},
      {"cluster.network.roce.ecn_kmax_kb=50", "cluster.network.roce.ecn_kmax_kb"},
      {"cluster.network.roce.ecn_pmax=2", "cluster.network.roce.ecn_pmax"},
      {"cluster.network.roce.congestion_control=hpcc", "cluster.network.roce.congestion_control"},
      {"cluster.network.roce.buffer=1", "cluster.network.roce.buffer"},
      {"cluster.network.roce.dcqcn_ai_mbps=-5", "cluster.network.roce.dcqcn_ai_mbps"},
      {"simulation.packet_scope={groups: [dp]}", "simulation.packet_scope"},  // without network_model: packet
      {"cluster.network.roce.dcqcn_hai_mbps=fast", "cluster.network.roce.dcqcn_hai_mbps"},
      {"cluster.network.roce.dcqcn_ai_mbps=1e300", "cluster.network.roce.dcqcn_ai_mbps"},
      {"cluster.network.roce.timely_ai_mbps=0", "cluster.network.roce.timely_ai_mbps"},
      {"cluster.network.roce.timely_tlow_us=-1", "cluster.network.roce.timely_tlow_us"},
      {"cluster.network.roce.timely_thigh_us=40", "cluster.network.roce.timely_thigh_us"},  // below tlow's 50
      // Values the packet network itself would refuse at run time, without the key: a buffer smaller than one
      // packet, and thresholds that are equal.
      {"cluster.network.roce.port_buffer_mb=0.001", "cluster.network.roce.port_buffer_mb"},
      {"cluster.network.roce.pfc_xon_kb=256", "cluster.network.roce.pfc_xon_kb"},
      {"cluster.network.roce.ecn_kmax_kb=100", "cluster.network.roce.ecn_kmax_kb"},
      {"cluster.network.roce.switch_buffer_mb=-1", "cluster.network.roce.switch_buffer_mb"},
      // Sizes beyond any switch's memory, which would not fit the packet network's byte counts.
      {"cluster.network.roce.switch_buffer_mb=1e300", "cluster.network.roce.switch_buffer_mb"},
      {"cluster.network.roce.port_buffer_mb=1e300", "cluster.network.roce.port_buffer_mb"},
      {"cluster.network.roce.pfc_xoff_kb=1e300", "cluster.network.roce.pfc_xoff_kb"},
  };
  expect_each_refused(bad);
}

}  // namespace
}  // namespace trainsim
