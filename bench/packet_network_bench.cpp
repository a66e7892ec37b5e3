// Packet-level network speed (docs/packet-network.md). Target (issue: packet-level RoCE network):
// 1 GiB across 8 flows through one switch in well under a few seconds on one core.
//
// Fabric: 8 senders, one switch, 400 Gb/s (50 GB/s) links of 0.5 us. "Pairs": each sender to its
// own receiver (no congestion: the bound on the next completion lets the loop run straight to
// the end). "Incast": all 8 into one receiver port, with PFC alone, PFC + DCQCN, and lossy
// go-back-N (the worst case: most packets are dropped and resent), and PFC with the switch's ports sharing a 64 MB
// buffer by dynamic thresholds (a 12.8 Tb/s switch's).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <vector>

#include "network/packet/packet_network.hpp"

namespace {

using namespace trainsim;

constexpr int kSenders = 8;
constexpr std::int64_t kBytesPerFlow = (std::int64_t{1} << 30) / kSenders;  // 1 GiB in all
constexpr double kLinkBps = 50e9;
constexpr SimTime kLinkLatency = 500'000;  // 0.5 us, picoseconds

enum Mode { kPlain, kDcqcn, kTimely, kLossy, kSharedBuffer };

PacketConfig config_for(Mode mode) {
  PacketConfig c;
  c.congestion_control = mode == kDcqcn    ? CongestionControl::Dcqcn
                         : mode == kTimely ? CongestionControl::Timely
                                           : CongestionControl::None;
  c.ecn.enabled = mode == kDcqcn;
  if (mode == kLossy) c.pfc.enabled = false;
  if (mode == kSharedBuffer) c.switch_buffer.size_bytes = 64'000'000;
  return c;
}

void run(benchmark::State& state, bool incast, Mode mode) {
  PacketCounters counters;
  SimTime makespan = 0;
  for (auto _ : state) {
    const std::size_t links = incast ? kSenders + 1 : 2 * kSenders;
    PacketNetwork net(std::vector<double>(links, kLinkBps), std::vector<SimTime>(links, kLinkLatency), 0,
                      config_for(mode));
    for (LinkId l = 0; l < static_cast<LinkId>(links); ++l)  // senders' links enter switch 0, the rest leave it
      net.set_switch_ends(l, l < kSenders ? -1 : 0, l < kSenders ? 0 : -1);
    for (int s = 0; s < kSenders; ++s) {
      const std::vector<LinkId> path{s, incast ? kSenders : kSenders + s};
      net.start(0, path, kBytesPerFlow);
    }
    std::vector<FlowId> finished;
    for (SimTime t = net.next_completion(); t != kNever; t = net.next_completion()) {
      net.advance(t, finished);
      if (!finished.empty()) makespan = t;
    }
    counters = net.counters();
  }
  state.counters["events"] = static_cast<double>(counters.events);
  state.counters["events_per_s"] = benchmark::Counter(
      static_cast<double>(counters.events) * static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["makespan_ms"] = to_seconds(makespan) * 1e3;
  state.counters["pauses"] = static_cast<double>(counters.pause_events);
  state.counters["cnps"] = static_cast<double>(counters.cnps);
  state.counters["drops"] = static_cast<double>(counters.drops);
}

void BM_OneGiB8PairsThroughOneSwitch(benchmark::State& state) { run(state, false, kPlain); }
void BM_OneGiB8to1IncastPfc(benchmark::State& state) { run(state, true, kPlain); }
void BM_OneGiB8to1IncastPfcDcqcn(benchmark::State& state) { run(state, true, kDcqcn); }
void BM_OneGiB8to1IncastPfcTimely(benchmark::State& state) { run(state, true, kTimely); }
void BM_OneGiB8to1IncastLossyGoBackN(benchmark::State& state) { run(state, true, kLossy); }
void BM_OneGiB8to1IncastPfcSharedBuffer(benchmark::State& state) { run(state, true, kSharedBuffer); }

}  // namespace

BENCHMARK(BM_OneGiB8PairsThroughOneSwitch)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OneGiB8to1IncastPfc)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OneGiB8to1IncastPfcDcqcn)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OneGiB8to1IncastPfcTimely)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OneGiB8to1IncastLossyGoBackN)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_OneGiB8to1IncastPfcSharedBuffer)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
